package a2a

// The messages every answer and stream event is made of, written out
// field by field: the generic walk (encoder.message) reads each field
// through protoreflect, which was most of the 13 % of a GetTask's CPU
// that encoding took on the memory store. These functions write exactly
// what the generic walk writes, byte for byte (TestFastJSONMatchesGeneric
// compares the two on generated messages, and fails when one of these
// messages gains a field): the same members in field-number order, a
// member when it is populated or always written (requiredFields), and the
// generic walk for what is not written out here (Struct, Value and
// Timestamp). A nil message is written as the generic walk writes an
// empty one: its getters give the zero values.

import (
	"encoding/base64"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// appendFast writes m when it is one of the messages written out here; it
// reports false, having written nothing, for any other.
func (e *encoder) appendFast(b []byte, m proto.Message) ([]byte, bool, error) {
	var err error
	switch m := m.(type) {
	case *StreamResponse:
		b, err = e.streamResponse(b, m)
	case *SendMessageResponse:
		b, err = e.sendMessageResponse(b, m)
	case *Task:
		b, err = e.task(b, m)
	case *Message:
		b, err = e.msg(b, m)
	default:
		return b, false, nil
	}
	return b, true, err
}

// open writes the start of a message's object and counts its level, as
// encoder.message does.
func (e *encoder) open(b []byte) []byte {
	e.depth++
	return append(b, '{')
}

// close writes the end of a message's object.
func (e *encoder) close(b []byte) []byte {
	e.depth--
	return append(b, '}')
}

// member writes a member's key, after a comma unless it is the first.
func member(b []byte, first *bool, key string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// stringMember writes a string member when it is set, or always.
func stringMember(b []byte, first *bool, key, v string, always bool) []byte {
	if v == "" && !always {
		return b
	}
	return appendString(member(b, first, key), v)
}

// stringsMember writes a repeated string member when it has elements.
func stringsMember(b []byte, first *bool, key string, vs []string) []byte {
	if len(vs) == 0 {
		return b
	}
	b = append(member(b, first, key), '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	return append(b, ']')
}

// enumValue writes an enum by its name, or by its number when it has none.
func enumValue(b []byte, names map[int32]string, v int32) []byte {
	if name, ok := names[v]; ok {
		b = append(b, '"')
		b = append(b, name...)
		return append(b, '"')
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// generic writes a message the generic walk handles (a well-known type).
func (e *encoder) generic(b []byte, m proto.Message) ([]byte, error) {
	return e.message(b, m.ProtoReflect())
}

// metadata writes a metadata member when it is set.
func (e *encoder) metadata(b []byte, first *bool, s *structpb.Struct) ([]byte, error) {
	if s == nil {
		return b, nil
	}
	return e.generic(member(b, first, "metadata"), s)
}

func (e *encoder) streamResponse(b []byte, m *StreamResponse) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	switch p := m.GetPayload().(type) {
	case *StreamResponse_Task:
		b, err = e.task(member(b, &first, "task"), p.Task)
	case *StreamResponse_Message:
		b, err = e.msg(member(b, &first, "message"), p.Message)
	case *StreamResponse_StatusUpdate:
		b, err = e.statusUpdate(member(b, &first, "statusUpdate"), p.StatusUpdate)
	case *StreamResponse_ArtifactUpdate:
		b, err = e.artifactUpdate(member(b, &first, "artifactUpdate"), p.ArtifactUpdate)
	}
	if err != nil {
		return b, err
	}
	return e.close(b), nil
}

func (e *encoder) sendMessageResponse(b []byte, m *SendMessageResponse) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	switch p := m.GetPayload().(type) {
	case *SendMessageResponse_Task:
		b, err = e.task(member(b, &first, "task"), p.Task)
	case *SendMessageResponse_Message:
		b, err = e.msg(member(b, &first, "message"), p.Message)
	}
	if err != nil {
		return b, err
	}
	return e.close(b), nil
}

func (e *encoder) task(b []byte, t *Task) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = stringMember(b, &first, "id", t.GetId(), true)
	b = stringMember(b, &first, "contextId", t.GetContextId(), false)
	if s := t.GetStatus(); s != nil {
		if b, err = e.status(member(b, &first, "status"), s); err != nil {
			return b, err
		}
	}
	if as := t.GetArtifacts(); len(as) > 0 {
		if b, err = list(e, member(b, &first, "artifacts"), as, (*encoder).artifact); err != nil {
			return b, err
		}
	}
	if hs := t.GetHistory(); len(hs) > 0 {
		if b, err = list(e, member(b, &first, "history"), hs, (*encoder).msg); err != nil {
			return b, err
		}
	}
	if b, err = e.metadata(b, &first, t.GetMetadata()); err != nil {
		return b, err
	}
	b = int64Member(b, &first, "generation", t.GetGeneration())
	if tl := t.GetTimeline(); len(tl) > 0 {
		if b, err = list(e, member(b, &first, "timeline"), tl, (*encoder).timelineEntry); err != nil {
			return b, err
		}
	}
	return e.close(b), nil
}

// timelineEntry writes one entry of a task's timeline (the 1.1 preview,
// spec §3.2.8): its one entry kind, then its generation.
func (e *encoder) timelineEntry(b []byte, t *TimelineEntry) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	switch p := t.GetEntry().(type) {
	case *TimelineEntry_Message:
		b, err = e.msg(member(b, &first, "message"), p.Message)
	case *TimelineEntry_Status:
		b, err = e.status(member(b, &first, "status"), p.Status)
	}
	if err != nil {
		return b, err
	}
	return e.close(int64Member(b, &first, "generation", t.GetGeneration())), nil
}

func (e *encoder) status(b []byte, s *TaskStatus) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = enumValue(member(b, &first, "state"), TaskState_name, int32(s.GetState()))
	if m := s.GetMessage(); m != nil {
		if b, err = e.msg(member(b, &first, "message"), m); err != nil {
			return b, err
		}
	}
	if ts := s.GetTimestamp(); ts != nil {
		if b, err = e.generic(member(b, &first, "timestamp"), ts); err != nil {
			return b, err
		}
	}
	return e.close(b), nil
}

func (e *encoder) msg(b []byte, m *Message) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = stringMember(b, &first, "messageId", m.GetMessageId(), true)
	b = stringMember(b, &first, "contextId", m.GetContextId(), false)
	b = stringMember(b, &first, "taskId", m.GetTaskId(), false)
	b = enumValue(member(b, &first, "role"), Role_name, int32(m.GetRole()))
	// Message.parts and Artifact.parts are REQUIRED: always written.
	if b, err = list(e, member(b, &first, "parts"), m.GetParts(), (*encoder).part); err != nil {
		return b, err
	}
	if b, err = e.metadata(b, &first, m.GetMetadata()); err != nil {
		return b, err
	}
	b = stringsMember(b, &first, "extensions", m.GetExtensions())
	b = stringsMember(b, &first, "referenceTaskIds", m.GetReferenceTaskIds())
	return e.close(b), nil
}

func (e *encoder) artifact(b []byte, a *Artifact) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = stringMember(b, &first, "artifactId", a.GetArtifactId(), true)
	b = stringMember(b, &first, "name", a.GetName(), false)
	b = stringMember(b, &first, "description", a.GetDescription(), false)
	if b, err = list(e, member(b, &first, "parts"), a.GetParts(), (*encoder).part); err != nil {
		return b, err
	}
	if b, err = e.metadata(b, &first, a.GetMetadata()); err != nil {
		return b, err
	}
	b = stringsMember(b, &first, "extensions", a.GetExtensions())
	b = int64Member(b, &first, "startGeneration", a.GetStartGeneration())
	return e.close(int64Member(b, &first, "endGeneration", a.GetEndGeneration())), nil
}

// list writes a repeated message field as a JSON array, each element
// with write.
func list[T any](e *encoder, b []byte, items []T, write func(*encoder, []byte, T) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = write(e, b, item); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func (e *encoder) part(b []byte, p *Part) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	switch c := p.GetContent().(type) {
	case *Part_Text:
		b = appendString(member(b, &first, "text"), c.Text)
	case *Part_Raw:
		b = append(member(b, &first, "raw"), '"')
		b = base64.StdEncoding.AppendEncode(b, c.Raw)
		b = append(b, '"')
	case *Part_Url:
		b = appendString(member(b, &first, "url"), c.Url)
	case *Part_Data:
		if b, err = e.generic(member(b, &first, "data"), c.Data); err != nil {
			return b, err
		}
	}
	if b, err = e.metadata(b, &first, p.GetMetadata()); err != nil {
		return b, err
	}
	b = stringMember(b, &first, "filename", p.GetFilename(), false)
	b = stringMember(b, &first, "mediaType", p.GetMediaType(), false)
	return e.close(b), nil
}

func (e *encoder) statusUpdate(b []byte, u *TaskStatusUpdateEvent) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = stringMember(b, &first, "taskId", u.GetTaskId(), true)
	b = stringMember(b, &first, "contextId", u.GetContextId(), true)
	if s := u.GetStatus(); s != nil {
		if b, err = e.status(member(b, &first, "status"), s); err != nil {
			return b, err
		}
	}
	if b, err = e.metadata(b, &first, u.GetMetadata()); err != nil {
		return b, err
	}
	return e.close(int64Member(b, &first, "generation", u.GetGeneration())), nil
}

func (e *encoder) artifactUpdate(b []byte, u *TaskArtifactUpdateEvent) ([]byte, error) {
	b = e.open(b)
	first := true
	var err error
	b = stringMember(b, &first, "taskId", u.GetTaskId(), true)
	b = stringMember(b, &first, "contextId", u.GetContextId(), true)
	if a := u.GetArtifact(); a != nil {
		if b, err = e.artifact(member(b, &first, "artifact"), a); err != nil {
			return b, err
		}
	}
	if u.GetAppend() {
		b = append(member(b, &first, "append"), "true"...)
	}
	if u.GetLastChunk() {
		b = append(member(b, &first, "lastChunk"), "true"...)
	}
	if b, err = e.metadata(b, &first, u.GetMetadata()); err != nil {
		return b, err
	}
	return e.close(int64Member(b, &first, "generation", u.GetGeneration())), nil
}

// int64Member writes a non-zero int64 member as ProtoJSON does, a decimal
// string (the 1.1 preview's generation, spec §3.2.7); zero is left out.
func int64Member(b []byte, first *bool, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	b = append(member(b, first, key), '"')
	return append(strconv.AppendInt(b, v, 10), '"')
}

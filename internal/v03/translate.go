package v03

import (
	"encoding/base64"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// The v0.3 JSON schema to and from the v1.0 types. Decoding (ToV1) checks
// what v0.3 requires and names every wrong member in a2a.FieldViolations;
// encoding (FromV1) never fails: what v0.3 cannot say is dropped or
// reshaped, as the doc of each function says.

// violations collects the problems of one decoded request.
type violations []a2a.FieldViolation

func (v *violations) add(field, format string, args ...any) {
	*v = append(*v, a2a.FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// Err returns InvalidParams listing the violations, or nil.
func (v violations) Err() error {
	if len(v) == 0 {
		return nil
	}
	return a2a.InvalidParams(v...)
}

// structOf converts a JSON object to a Struct (nil for none).
func structOf(m map[string]any, field string, v *violations) *structpb.Struct {
	if m == nil {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		v.add(field, "is not a JSON object: %v", err)
	}
	return s
}

// mapOf converts a Struct to a JSON object (nil for none).
func mapOf(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

// MessageToV1 translates a v0.3 message; field is its path for violations.
func MessageToV1(m *Message, field string, v *violations) *a2a.Message {
	if m == nil {
		v.add(field, "is required")
		return nil
	}
	if m.Kind != KindMessage {
		v.add(field+".kind", `must be "message" (v0.3), got %q`, m.Kind)
	}
	if m.MessageID == "" {
		v.add(field+".messageId", "is required")
	}
	out := &a2a.Message{
		MessageId: m.MessageID, ContextId: m.ContextID, TaskId: m.TaskID,
		ReferenceTaskIds: m.ReferenceTaskIDs, Extensions: m.Extensions,
		Metadata: structOf(m.Metadata, field+".metadata", v),
	}
	switch m.Role {
	case "user":
		out.Role = a2a.Role_ROLE_USER
	case "agent":
		out.Role = a2a.Role_ROLE_AGENT
	default:
		v.add(field+".role", `must be "user" or "agent" (v0.3), got %q`, m.Role)
	}
	if len(m.Parts) == 0 {
		v.add(field+".parts", "is required and must not be empty")
	}
	for i := range m.Parts {
		out.Parts = append(out.Parts, PartToV1(&m.Parts[i], fmt.Sprintf("%s.parts[%d]", field, i), v))
	}
	return out
}

// PartToV1 translates a v0.3 part. A file part becomes a raw or url part
// with the file's mimeType as mediaType and name as filename; a data
// part's object becomes the part's data value.
func PartToV1(p *Part, field string, v *violations) *a2a.Part {
	out := &a2a.Part{Metadata: structOf(p.Metadata, field+".metadata", v)}
	switch p.Kind {
	case KindText:
		if p.Text == nil {
			v.add(field+".text", "is required for a text part")
			return out
		}
		out.Content = &a2a.Part_Text{Text: *p.Text}
	case KindFile:
		if p.File == nil {
			v.add(field+".file", "is required for a file part")
			return out
		}
		out.MediaType, out.Filename = p.File.MimeType, p.File.Name
		switch {
		case p.File.Bytes != nil && p.File.URI != nil:
			v.add(field+".file", "must hold either bytes or uri, not both")
		case p.File.Bytes != nil:
			raw, err := base64.StdEncoding.DecodeString(*p.File.Bytes)
			if err != nil {
				v.add(field+".file.bytes", "is not base64: %v", err)
			}
			out.Content = &a2a.Part_Raw{Raw: raw}
		case p.File.URI != nil:
			out.Content = &a2a.Part_Url{Url: *p.File.URI}
		default:
			v.add(field+".file", "must hold bytes or uri")
		}
	case KindData:
		if p.Data == nil {
			v.add(field+".data", "is required for a data part and must be an object")
			return out
		}
		val, err := structpb.NewValue(p.Data)
		if err != nil {
			v.add(field+".data", "is not JSON: %v", err)
		}
		out.Content = &a2a.Part_Data{Data: val}
	case "":
		v.add(field+".kind", `is required (v0.3 parts are "text", "file" or "data")`)
	default:
		v.add(field+".kind", `must be "text", "file" or "data", got %q`, p.Kind)
	}
	return out
}

// MessageFromV1 translates a message to v0.3.
func MessageFromV1(m *a2a.Message) *Message {
	if m == nil {
		return nil
	}
	out := &Message{Kind: KindMessage, MessageID: m.GetMessageId(), ContextID: m.GetContextId(), TaskID: m.GetTaskId(),
		ReferenceTaskIDs: m.GetReferenceTaskIds(), Extensions: m.GetExtensions(), Metadata: mapOf(m.GetMetadata()),
		Role: "user", Parts: partsFromV1(m.GetParts())}
	if m.GetRole() == a2a.Role_ROLE_AGENT {
		out.Role = "agent"
	}
	return out
}

func partsFromV1(ps []*a2a.Part) []Part {
	out := make([]Part, 0, len(ps))
	for _, p := range ps {
		out = append(out, PartFromV1(p))
	}
	return out
}

// PartFromV1 translates a part to v0.3. Lossy: a text part's mediaType and
// filename have no place in v0.3 and are dropped; data that is not a JSON
// object is wrapped as {"value": data}, since v0.3 data parts hold objects.
func PartFromV1(p *a2a.Part) Part {
	out := Part{Metadata: mapOf(p.GetMetadata())}
	switch c := p.GetContent().(type) {
	case *a2a.Part_Text:
		out.Kind, out.Text = KindText, &c.Text
	case *a2a.Part_Raw:
		b := base64.StdEncoding.EncodeToString(c.Raw)
		out.Kind, out.File = KindFile, &FileContent{Bytes: &b, MimeType: p.GetMediaType(), Name: p.GetFilename()}
	case *a2a.Part_Url:
		u := c.Url
		out.Kind, out.File = KindFile, &FileContent{URI: &u, MimeType: p.GetMediaType(), Name: p.GetFilename()}
	case *a2a.Part_Data:
		out.Kind = KindData
		if m, ok := c.Data.AsInterface().(map[string]any); ok {
			out.Data = m
		} else {
			out.Data = map[string]any{"value": c.Data.AsInterface()}
		}
	default:
		empty := ""
		out.Kind, out.Text = KindText, &empty
	}
	return out
}

// TaskFromV1 translates a task to v0.3.
func TaskFromV1(t *a2a.Task) *Task {
	out := &Task{Kind: KindTask, ID: t.GetId(), ContextID: t.GetContextId(), Status: StatusFromV1(t.GetStatus()),
		Metadata: mapOf(t.GetMetadata())}
	for _, a := range t.GetArtifacts() {
		out.Artifacts = append(out.Artifacts, ArtifactFromV1(a))
	}
	for _, m := range t.GetHistory() {
		out.History = append(out.History, *MessageFromV1(m))
	}
	return out
}

// StatusFromV1 translates a task status to v0.3.
func StatusFromV1(s *a2a.TaskStatus) TaskStatus {
	out := TaskStatus{State: StateName(s.GetState()), Message: MessageFromV1(s.GetMessage())}
	if ts := s.GetTimestamp(); ts != nil {
		out.Timestamp = ts.AsTime().UTC().Format(time.RFC3339Nano)
	}
	return out
}

// ArtifactFromV1 translates an artifact to v0.3.
func ArtifactFromV1(a *a2a.Artifact) Artifact {
	return Artifact{ArtifactID: a.GetArtifactId(), Name: a.GetName(), Description: a.GetDescription(),
		Parts: partsFromV1(a.GetParts()), Extensions: a.GetExtensions(), Metadata: mapOf(a.GetMetadata())}
}

// EventFromV1 translates one stream event to its v0.3 object: a Task, a
// Message, a StatusUpdate (final as Final says for the stream) or an
// ArtifactUpdate.
func EventFromV1(r *a2a.StreamResponse, subscribe bool) any {
	switch p := r.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		return TaskFromV1(p.Task)
	case *a2a.StreamResponse_Message:
		return MessageFromV1(p.Message)
	case *a2a.StreamResponse_StatusUpdate:
		u := p.StatusUpdate
		return &StatusUpdate{Kind: KindStatusUpdate, TaskID: u.GetTaskId(), ContextID: u.GetContextId(),
			Status: StatusFromV1(u.GetStatus()), Final: Final(u.GetStatus().GetState(), subscribe), Metadata: mapOf(u.GetMetadata())}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		return &ArtifactUpdate{Kind: KindArtifactUpdate, TaskID: u.GetTaskId(), ContextID: u.GetContextId(),
			Artifact: ArtifactFromV1(u.GetArtifact()), Append: u.GetAppend(), LastChunk: u.GetLastChunk(), Metadata: mapOf(u.GetMetadata())}
	}
	return nil
}

// SendResultFromV1 translates message/send's result: a Task or a Message.
func SendResultFromV1(r *a2a.SendMessageResponse) any {
	if m := r.GetMessage(); m != nil {
		return MessageFromV1(m)
	}
	return TaskFromV1(r.GetTask())
}

// StatusToV1 translates a v0.3 status (for the client side).
func StatusToV1(s *TaskStatus, field string, v *violations) *a2a.TaskStatus {
	st, ok := ParseState(s.State)
	if !ok {
		v.add(field+".state", "is not a v0.3 task state: %q", s.State)
	}
	out := &a2a.TaskStatus{State: st}
	if s.Message != nil {
		out.Message = MessageToV1(s.Message, field+".message", v)
	}
	if s.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, s.Timestamp)
		if err != nil {
			v.add(field+".timestamp", "is not an ISO 8601 time: %q", s.Timestamp)
		} else {
			out.Timestamp = timestamppb.New(t)
		}
	}
	return out
}

// TaskToV1 translates a v0.3 task (for the client side).
func TaskToV1(t *Task, field string, v *violations) *a2a.Task {
	if t.ID == "" {
		v.add(field+".id", "is required")
	}
	out := &a2a.Task{Id: t.ID, ContextId: t.ContextID, Status: StatusToV1(&t.Status, field+".status", v),
		Metadata: structOf(t.Metadata, field+".metadata", v)}
	for i := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, ArtifactToV1(&t.Artifacts[i], fmt.Sprintf("%s.artifacts[%d]", field, i), v))
	}
	for i := range t.History {
		out.History = append(out.History, MessageToV1(&t.History[i], fmt.Sprintf("%s.history[%d]", field, i), v))
	}
	return out
}

// ArtifactToV1 translates a v0.3 artifact.
func ArtifactToV1(a *Artifact, field string, v *violations) *a2a.Artifact {
	out := &a2a.Artifact{ArtifactId: a.ArtifactID, Name: a.Name, Description: a.Description,
		Extensions: a.Extensions, Metadata: structOf(a.Metadata, field+".metadata", v)}
	for i := range a.Parts {
		out.Parts = append(out.Parts, PartToV1(&a.Parts[i], fmt.Sprintf("%s.parts[%d]", field, i), v))
	}
	return out
}

// TaskToV1Checked translates a v0.3 task, failing with InvalidParams on
// anything v0.3 does not allow.
func TaskToV1Checked(t *Task) (*a2a.Task, error) {
	var v violations
	out := TaskToV1(t, "task", &v)
	return out, v.Err()
}

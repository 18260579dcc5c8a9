package a2a

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

// NewID returns a new UUID string of version 7 (RFC 9562 §5.7), used for
// task, context, message and configuration ids: the first 48 bits are
// the Unix time in milliseconds, 74 of the other bits are random.
//
// Ids that grow with time are what B-tree stores write fastest: the rows
// of new tasks (their history, chunks and events, keyed by task id) land
// together at the end of each index instead of on a random page each,
// which halved the default SQLite store's work per SendMessage. The cost
// is that an id tells when it was made, to the millisecond, which a task's
// status timestamp tells anyway; 74 random bits still make ids
// unguessable, and tasks are scoped to their caller besides (decision B12:
// tasks belong to the principal that created them).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2] = byte(ms>>40), byte(ms>>32), byte(ms>>24)
	b[3], b[4], b[5] = byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = b[6]&0x0f | 0x70 // version 7
	b[8] = b[8]&0x3f | 0x80 // the RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// TextPart returns a Part holding text.
func TextPart(text string) *Part {
	return &Part{Content: &Part_Text{Text: text}}
}

// UserMessage returns a ROLE_USER message with a fresh messageId and one
// text part.
func UserMessage(text string) *Message {
	return &Message{MessageId: NewID(), Role: Role_ROLE_USER, Parts: []*Part{TextPart(text)}}
}

// AgentMessage returns a ROLE_AGENT message with a fresh messageId and one
// text part.
func AgentMessage(text string) *Message {
	return &Message{MessageId: NewID(), Role: Role_ROLE_AGENT, Parts: []*Part{TextPart(text)}}
}

// UserMessageFor returns a ROLE_USER message with a fresh messageId and one
// text part, addressed to an existing task: a follow-up, such as the answer
// to a task in INPUT_REQUIRED. contextID may be "" (the server takes the
// task's own); when set it must be the task's. With taskID "" the message
// starts a new task in the context contextID.
func UserMessageFor(taskID, contextID, text string) *Message {
	m := UserMessage(text)
	m.TaskId, m.ContextId = taskID, contextID
	return m
}

// FollowUp returns a ROLE_USER message with a fresh messageId and one text
// part, addressed to task (its id and contextId). task must not be nil: a
// message without a taskId would start a new task, so FollowUp panics
// instead.
func FollowUp(task *Task, text string) *Message {
	if task == nil {
		panic("a2a.FollowUp: nil task")
	}
	return UserMessageFor(task.Id, task.ContextId, text)
}

// NewArtifact returns an artifact with the id and parts.
func NewArtifact(id string, parts ...*Part) *Artifact {
	return &Artifact{ArtifactId: id, Parts: parts}
}

// TextArtifact returns an artifact with the id and one text part.
func TextArtifact(id, text string) *Artifact {
	return NewArtifact(id, TextPart(text))
}

// FirstText returns the text of the message's first text part, or "".
func FirstText(m *Message) string {
	for _, p := range m.GetParts() {
		if t, ok := p.GetContent().(*Part_Text); ok {
			return t.Text
		}
	}
	return ""
}

// JoinText returns the text of the text parts among parts, with a newline
// inserted between consecutive ones; other parts are skipped. It suits the
// parts of a message written as separate paragraphs. The chunks of a
// streamed artifact must not be separated: use ArtifactText or
// ArtifactAssembler.Text for those.
func JoinText(parts []*Part) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.GetContent().(*Part_Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// ArtifactText returns the text of the artifact's text parts concatenated
// without separators, the way the chunks of a streamed artifact join ("Hel"
// and "lo" make "Hello"); other parts are skipped. It is "" for a nil
// artifact.
func ArtifactText(a *Artifact) string {
	var b strings.Builder
	for _, p := range a.GetParts() {
		if t, ok := p.GetContent().(*Part_Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Timestamp returns t, in UTC and truncated to milliseconds (the precision
// the wire carries, §5.6.1 of the A2A specification), as a protobuf
// Timestamp.
func Timestamp(t time.Time) *timestamppb.Timestamp {
	return timestamppb.New(t.UTC().Truncate(time.Millisecond))
}

package a2a

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

// NewID returns a random UUID (version 4) string, used for task, context,
// message and configuration ids.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
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

// JoinText concatenates the text parts of the message, separated by
// newlines.
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

// IsTerminal reports whether s is COMPLETED, FAILED, CANCELED or REJECTED
// (brief §4.1).
func IsTerminal(s TaskState) bool {
	switch s {
	case TaskState_TASK_STATE_COMPLETED, TaskState_TASK_STATE_FAILED,
		TaskState_TASK_STATE_CANCELED, TaskState_TASK_STATE_REJECTED:
		return true
	}
	return false
}

// IsInterrupted reports whether s is INPUT_REQUIRED or AUTH_REQUIRED
// (brief §4.1).
func IsInterrupted(s TaskState) bool {
	return s == TaskState_TASK_STATE_INPUT_REQUIRED || s == TaskState_TASK_STATE_AUTH_REQUIRED
}

// Timestamp returns t, in UTC and truncated to milliseconds (the precision
// the wire carries, brief §2.0), as a protobuf Timestamp.
func Timestamp(t time.Time) *timestamppb.Timestamp {
	return timestamppb.New(t.UTC().Truncate(time.Millisecond))
}

package a2a

// Reading ProtoJSON is defined by protojson (tolerant: unknown members are
// ignored, both lowerCamelCase and snake_case member names are accepted),
// with one extra rule: an enum given by a name the schema does not define
// (such as the v0.3 spellings "completed" or "user") is an error instead of
// being silently dropped (checkEnums). One deviation is tolerated: a
// StringList map value written as a bare array (wrapBareLists). Most input
// is read in one pass by a faster reader that accepts only what this
// general path accepts, building the same message (unmarshalFast); the
// rest, and every refusal, goes through the general path.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxDepth bounds the nesting of decoded JSON (messages, Struct and Value
// members): deeper input is refused with a DecodeError instead of costing
// stack and time.
const MaxDepth = 64

// unmarshalOptions is the protojson configuration behind Unmarshal.
var unmarshalOptions = protojson.UnmarshalOptions{DiscardUnknown: true, RecursionLimit: MaxDepth}

// DecodeError reports wire input that could not be decoded into a protocol
// message. Its text names the expected message type and the problem, and is
// safe to return to a client.
type DecodeError struct {
	// Type is the full name of the message that was being decoded.
	Type protoreflect.FullName
	// Detail describes the problem (position information included when
	// known).
	Detail string
	// Syntax is true when the input is not well-formed JSON at all, as
	// opposed to well-formed JSON that does not fit the message schema.
	Syntax bool
	// Field, when not empty, is the path of the member at fault (as in
	// FieldViolation.Field): for now, a string that is not UTF-8.
	Field string
}

// InvalidParamsFor is the InvalidParamsError for a request that could not
// be decoded: with a field violation when the DecodeError names the field.
func InvalidParamsFor(err error) *Error {
	var de *DecodeError
	if errors.As(err, &de) && de.Field != "" {
		return InvalidParams(FieldViolation{Field: de.Field, Description: "is not valid UTF-8"})
	}
	return NewError(CodeInvalidParams, "%v", err)
}

// Error implements error.
func (e *DecodeError) Error() string {
	return "invalid JSON for " + string(e.Type) + ": " + e.Detail
}

// maxDetail bounds the length of DecodeError.Detail, which may quote input.
const maxDetail = 256

// Unmarshal decodes ProtoJSON b into m. It accepts lowerCamelCase and
// original proto member names, enum values by name or number, and ignores
// members it does not know. Enum names not defined by the schema are
// rejected. A StringList map value (a SecurityRequirement's scopes) may
// also be a bare array. Errors are of type *DecodeError. On error m is
// reset.
func Unmarshal(b []byte, m proto.Message) error {
	if unmarshalFast(b, m) {
		return nil
	}
	return unmarshalGeneral(b, m)
}

// unmarshalGeneral is Unmarshal on the general path: protojson, then the
// enum check, and the bare-list tolerance when protojson refuses. The fast
// reader (unmarshalFast) takes the inputs it is sure this path accepts,
// with the same result; everything else comes here.
func unmarshalGeneral(b []byte, m proto.Message) error {
	md := m.ProtoReflect().Descriptor()
	if err := unmarshalOptions.Unmarshal(b, m); err != nil {
		proto.Reset(m)
		// The one tolerated deviation: StringList map values written as
		// bare arrays.
		if wb, ok := wrapBareLists(b, md); ok && unmarshalOptions.Unmarshal(wb, m) == nil {
			return checkEnums(wb, m, md)
		}
		proto.Reset(m)
		detail := cleanDetail(err.Error())
		if len(bytes.TrimSpace(b)) == 0 {
			detail = "empty input"
		}
		if f := JSONUTF8Field(b, md); f != "" {
			return &DecodeError{Type: md.FullName(), Detail: f + ": is not valid UTF-8", Field: f}
		}
		return &DecodeError{Type: md.FullName(), Detail: detail, Syntax: !json.Valid(b)}
	}
	return checkEnums(b, m, md)
}

// checkEnums refuses enum names the schema does not define in b, the input
// m (of type md) was decoded from; m is reset when it does.
func checkEnums(b []byte, m proto.Message, md protoreflect.MessageDescriptor) error {
	if infoFor(md).hasEnum {
		s := enumScanner{b: b}
		if err := s.message(md); err != nil {
			proto.Reset(m)
			return &DecodeError{Type: md.FullName(), Detail: cleanDetail(err.Error())}
		}
	}
	return nil
}

// cleanDetail strips protobuf-go's "proto:" prefixes (which come with a
// deliberately unstable space character) and bounds the length.
func cleanDetail(s string) string {
	for _, p := range []string{"proto: ", "proto:\u00a0"} {
		s = strings.ReplaceAll(s, p, "")
	}
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = strings.TrimSpace(s)
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	if s == "" {
		s = "malformed input"
	}
	return s
}

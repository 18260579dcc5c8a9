package a2a

// Writing ProtoJSON: the encoder walks protoreflect directly and appends to
// a byte slice. It follows the ProtoJSON mapping with these A2A-specific
// choices:
//
//   - Fields listed in requiredFields are always written, even when they hold
//     their zero value ("tasks":[], "nextPageToken":"", "pageSize":0). The
//     exception is a REQUIRED singular message field that is unset: it has no
//     zero value to write (writing {} would read back as a set field), so it
//     is omitted, and CheckRequired reports it. REQUIRED oneof members do not
//     exist in the schema and would only be written when set.
//   - Other fields are written only when populated (protoreflect Has).
//   - Fields are written in field-number order and map keys in sorted order,
//     so the output is deterministic.
//   - google.protobuf.Timestamp is written as UTC RFC 3339 with exactly three
//     fractional digits ("2026-01-02T03:04:05.000Z"); finer precision is
//     truncated, not rounded.
//   - Invalid UTF-8 in strings and map keys is replaced by U+FFFD, so the
//     output is always valid JSON and Marshal never fails because of string
//     content.
//   - Enum numbers without a name in the schema are written as JSON numbers
//     (the ProtoJSON rule), which Unmarshal accepts again.
//   - A google.protobuf.Value with no kind set, or holding NaN or an
//     infinity, is an error. Of package google.protobuf only Timestamp,
//     Struct, Value, ListValue and Empty are supported; any other message
//     from that package (Any, Duration, FieldMask, wrappers, descriptors) is
//     not used by A2A and is rejected with an *EncodeError.

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxEncodeDepth guards against unbounded recursion in hand-built messages
// (for example a google.protobuf.Value nested a million levels deep). It is
// well above protojson's default decode recursion limit, so anything
// Unmarshal accepts can be written back.
const maxEncodeDepth = 1 << 16

// encoder holds the state of one Marshal call: the nesting depth and spare
// key slices for sorting map and Struct keys, reused between calls through
// encoderPool.
type encoder struct {
	depth   int
	strKeys [][]string
	mapKeys [][]protoreflect.MapKey
}

// encoderPool recycles encoders, and with them their scratch slices.
var encoderPool = sync.Pool{New: func() any { return new(encoder) }}

// Marshal returns the ProtoJSON encoding of m under the A2A presence rules
// (see AppendJSON).
func Marshal(m proto.Message) ([]byte, error) {
	return AppendJSON(nil, m)
}

// AppendJSON appends the ProtoJSON encoding of m to dst and returns the
// extended slice. Members use lowerCamelCase names and appear in field-number
// order; populated fields and all REQUIRED fields are written; enums are
// written by name, 64-bit integers as strings, bytes as padded standard
// base64 and timestamps as UTC RFC 3339 with millisecond precision. A nil m
// is written as {}. On error dst is returned with its original length.
func AppendJSON(dst []byte, m proto.Message) ([]byte, error) {
	if m == nil {
		return append(dst, "{}"...), nil
	}
	e := encoderPool.Get().(*encoder)
	out, ok, err := e.appendFast(dst, m)
	if !ok {
		out, err = e.message(dst, m.ProtoReflect())
	}
	e.depth = 0
	encoderPool.Put(e)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// EncodeError reports a message that cannot be represented in ProtoJSON.
type EncodeError struct {
	// Field is the full name of the offending field or message.
	Field protoreflect.FullName
	// Detail describes the problem.
	Detail string
}

// Error implements error.
func (e *EncodeError) Error() string {
	return "cannot encode " + string(e.Field) + " as JSON: " + e.Detail
}

// enter counts one more level of nesting and fails once maxEncodeDepth is
// passed. Every successful enter is paired with a decrement of e.depth.
func (e *encoder) enter(name protoreflect.FullName) error {
	e.depth++
	if e.depth > maxEncodeDepth {
		return &EncodeError{Field: name, Detail: "message nesting too deep"}
	}
	return nil
}

// message writes m as a JSON object, or in its special form when m is a
// well-known type.
func (e *encoder) message(b []byte, m protoreflect.Message) ([]byte, error) {
	md := m.Descriptor()
	if err := e.enter(md.FullName()); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()

	info := infoFor(md)
	if info.wkt != wktNone {
		return e.wellKnown(b, m, info.wkt)
	}
	b = append(b, '{')
	first := true
	for i := range info.fields {
		f := &info.fields[i]
		if !f.always && !m.Has(f.fd) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		var err error
		if b, err = e.field(b, f.fd, m.Get(f.fd)); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// field writes the value of one field: a map, a list or a single value.
func (e *encoder) field(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch {
	case fd.IsMap():
		return e.mapField(b, fd, v.Map())
	case fd.IsList():
		return e.listField(b, fd, v.List())
	}
	return e.single(b, fd, v)
}

// listField writes a repeated field as a JSON array.
func (e *encoder) listField(b []byte, fd protoreflect.FieldDescriptor, l protoreflect.List) ([]byte, error) {
	b = append(b, '[')
	for i := range l.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.single(b, fd, l.Get(i)); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// mapField writes a map field as a JSON object with its keys in sorted
// order (numerically for integer keys, false before true for bool keys).
func (e *encoder) mapField(b []byte, fd protoreflect.FieldDescriptor, mp protoreflect.Map) ([]byte, error) {
	keys := takeScratch(&e.mapKeys)
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	kind := fd.MapKey().Kind()
	slices.SortFunc(keys, func(a, c protoreflect.MapKey) int { return compareMapKeys(kind, a, c) })
	vfd := fd.MapValue()
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMapKey(b, kind, k)
		b = append(b, ':')
		if b, err = e.single(b, vfd, mp.Get(k)); err != nil {
			break
		}
	}
	giveScratch(&e.mapKeys, keys)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// compareMapKeys orders two map keys of the given kind.
func compareMapKeys(kind protoreflect.Kind, a, c protoreflect.MapKey) int {
	switch kind {
	case protoreflect.StringKind:
		return strings.Compare(a.String(), c.String())
	case protoreflect.BoolKind:
		return cmp.Compare(boolInt(a.Bool()), boolInt(c.Bool()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return cmp.Compare(a.Uint(), c.Uint())
	default:
		return cmp.Compare(a.Int(), c.Int())
	}
}

// boolInt orders false before true.
func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// appendMapKey writes a map key as a JSON string: ProtoJSON quotes bool and
// integer keys too.
func appendMapKey(b []byte, kind protoreflect.Kind, k protoreflect.MapKey) []byte {
	switch kind {
	case protoreflect.StringKind:
		return appendString(b, k.String())
	case protoreflect.BoolKind:
		b = append(b, '"')
		b = strconv.AppendBool(b, k.Bool())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		b = strconv.AppendUint(b, k.Uint(), 10)
	default:
		b = append(b, '"')
		b = strconv.AppendInt(b, k.Int(), 10)
	}
	return append(b, '"')
}

// takeScratch pops a spare slice from a free list, or returns nil when the
// list is empty. The slice is given back with giveScratch.
func takeScratch[T any](free *[][]T) []T {
	n := len(*free)
	if n == 0 {
		return nil
	}
	s := (*free)[n-1]
	*free = (*free)[:n-1]
	return s[:0]
}

// giveScratch clears a slice (so it holds no references) and pushes it on
// the free list for the next takeScratch.
func giveScratch[T any](free *[][]T, s []T) {
	clear(s)
	*free = append(*free, s[:0])
}

// single writes one non-repeated value (also used for list elements and map
// values).
func (e *encoder) single(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int(), 10)
		return append(b, '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		b = strconv.AppendUint(b, v.Uint(), 10)
		return append(b, '"'), nil
	case protoreflect.FloatKind:
		return appendProtoFloat(b, v.Float(), 32), nil
	case protoreflect.DoubleKind:
		return appendProtoFloat(b, v.Float(), 64), nil
	case protoreflect.StringKind:
		return appendString(b, v.String()), nil
	case protoreflect.BytesKind:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes())
		return append(b, '"'), nil
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			return append(b, "null"...), nil
		}
		if ev := ed.Values().ByNumber(v.Enum()); ev != nil {
			b = append(b, '"')
			b = append(b, ev.Name()...)
			return append(b, '"'), nil
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(b, v.Message())
	}
	return b, &EncodeError{Field: fd.FullName(), Detail: "unsupported field kind " + fd.Kind().String()}
}

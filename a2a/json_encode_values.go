package a2a

// The encoder's writers for leaf values (numbers, strings) and for the
// google.protobuf well-known types A2A uses (Timestamp, Struct, Value,
// ListValue, Empty).

import (
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// appendProtoFloat writes a float or double field: finite values as JSON
// numbers, NaN and infinities as the ProtoJSON strings.
func appendProtoFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return appendFloat(b, f, bits)
}

// appendFloat writes a finite number in the shortest form that reads back
// exactly: plain decimal notation for magnitudes in [1e-6, 1e21), exponent
// notation otherwise (as JavaScript does).
func appendFloat(b []byte, f float64, bits int) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		if bits == 32 {
			a = float64(float32(a))
		}
		if a < 1e-6 || a >= 1e21 {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Shorten a two-digit negative exponent such as "e-07" to "e-7".
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// hexDigits are the digits of a \u00XX escape.
const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Quotes, backslashes and control
// characters are escaped; invalid UTF-8 bytes become U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = appendEscapedASCII(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscapedASCII writes the JSON escape of an ASCII byte that may not
// appear raw in a string: a quote, a backslash or a control character.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// Valid range of google.protobuf.Timestamp: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

// appendTimestamp writes a google.protobuf.Timestamp as a quoted UTC RFC
// 3339 time with millisecond precision, truncating finer precision.
func appendTimestamp(b []byte, m protoreflect.Message) ([]byte, error) {
	fds := m.Descriptor().Fields()
	secs := m.Get(fds.ByNumber(1)).Int()
	nanos := m.Get(fds.ByNumber(2)).Int()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999_999_999 {
		return b, &EncodeError{Field: m.Descriptor().FullName(), Detail: "timestamp out of range"}
	}
	b = append(b, '"')
	b = time.Unix(secs, nanos).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"'), nil
}

// wellKnown writes a message of package google.protobuf in its ProtoJSON
// form; kind is not wktNone.
func (e *encoder) wellKnown(b []byte, m protoreflect.Message, kind wktKind) ([]byte, error) {
	switch kind {
	case wktTimestamp:
		return appendTimestamp(b, m)
	case wktStruct:
		s, err := concrete(m, (*structpb.Struct)(nil))
		if err != nil {
			return b, err
		}
		return e.structFields(b, s.GetFields())
	case wktValue:
		v, err := concrete(m, (*structpb.Value)(nil))
		if err != nil {
			return b, err
		}
		return e.value(b, v)
	case wktListValue:
		l, err := concrete(m, (*structpb.ListValue)(nil))
		if err != nil {
			return b, err
		}
		return e.listValue(b, l.GetValues())
	case wktEmpty:
		return append(b, "{}"...), nil
	}
	return b, &EncodeError{Field: m.Descriptor().FullName(), Detail: "well-known type not supported by the A2A codec"}
}

// concrete returns m as the generated Go type T, converting through the
// binary encoding when m is some other implementation (e.g. dynamicpb).
func concrete[T proto.Message](m protoreflect.Message, _ T) (T, error) {
	if v, ok := m.Interface().(T); ok {
		return v, nil
	}
	var zero T
	out := zero.ProtoReflect().New().Interface().(T)
	raw, err := proto.Marshal(m.Interface())
	if err == nil {
		err = proto.Unmarshal(raw, out)
	}
	if err != nil {
		return zero, &EncodeError{Field: m.Descriptor().FullName(), Detail: "unreadable well-known type"}
	}
	return out, nil
}

// structFields writes a google.protobuf.Struct as a JSON object with sorted
// keys.
func (e *encoder) structFields(b []byte, fields map[string]*structpb.Value) ([]byte, error) {
	if err := e.enter("google.protobuf.Struct"); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()
	keys := takeScratch(&e.strKeys)
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, err = e.value(b, fields[k]); err != nil {
			break
		}
	}
	giveScratch(&e.strKeys, keys)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// listValue writes a google.protobuf.ListValue as a JSON array.
func (e *encoder) listValue(b []byte, vals []*structpb.Value) ([]byte, error) {
	if err := e.enter("google.protobuf.ListValue"); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.value(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// value writes a google.protobuf.Value as the JSON value it holds.
func (e *encoder) value(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return append(b, "null"...), nil
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			return b, &EncodeError{Field: "google.protobuf.Value", Detail: "NaN and infinite numbers have no JSON representation"}
		}
		return appendFloat(b, k.NumberValue, 64), nil
	case *structpb.Value_StringValue:
		return appendString(b, k.StringValue), nil
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	case *structpb.Value_StructValue:
		return e.structFields(b, k.StructValue.GetFields())
	case *structpb.Value_ListValue:
		return e.listValue(b, k.ListValue.GetValues())
	}
	return b, &EncodeError{Field: "google.protobuf.Value", Detail: "no kind set"}
}

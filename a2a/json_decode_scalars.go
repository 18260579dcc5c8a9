package a2a

// The fast reader's scalar values (see unmarshalFast): numbers, strings,
// bytes, enums, and the well-known types it reads itself.

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// scalar reads a value of a field of scalar or enum kind.
func (d *fastDecoder) scalar(f *decField) (protoreflect.Value, bool) {
	if d.i >= len(d.b) {
		return protoreflect.Value{}, false
	}
	c := d.b[d.i]
	switch f.kind {
	case protoreflect.StringKind:
		s, ok := d.str()
		return protoreflect.ValueOfString(d.text(s)), ok
	case protoreflect.BoolKind:
		switch {
		case d.literal("true"):
			return protoreflect.ValueOfBool(true), true
		case d.literal("false"):
			return protoreflect.ValueOfBool(false), true
		}
		return protoreflect.Value{}, false
	case protoreflect.EnumKind:
		switch {
		case c == '"':
			// A name the enum does not define is dropped by protojson
			// and refused by the enum check: the general path's case.
			s, ok := d.str()
			n, found := f.enumNums[string(s)]
			return protoreflect.ValueOfEnum(n), ok && found
		case c == 'n' && f.nullEnum:
			return protoreflect.ValueOfEnum(0), d.literal("null")
		}
		raw, isInt, ok := d.number()
		if !ok || !isInt {
			return protoreflect.Value{}, false
		}
		n, err := strconv.ParseInt(string(raw), 10, 32)
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), err == nil
	case protoreflect.BytesKind:
		s, ok := d.str()
		if !ok {
			return protoreflect.Value{}, false
		}
		return decodeBase64(s)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return d.float(f.kind)
	}
	return d.integer(f.kind)
}

// integer reads an integer field's value: a number with no fraction or
// exponent, or a string holding exactly one. (protojson also takes
// integral numbers written with a fraction or an exponent, such as 1.0 or
// 1e3; those are left to the general path.)
func (d *fastDecoder) integer(kind protoreflect.Kind) (protoreflect.Value, bool) {
	var raw []byte
	if d.b[d.i] == '"' {
		s, ok := d.str()
		if n, isInt := numberLen(s); !ok || !isInt || n != len(s) {
			return protoreflect.Value{}, false
		}
		raw = s
	} else {
		var isInt, ok bool
		if raw, isInt, ok = d.number(); !ok || !isInt {
			return protoreflect.Value{}, false
		}
	}
	var err error
	var v protoreflect.Value
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		var n int64
		n, err = strconv.ParseInt(string(raw), 10, 32)
		v = protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		var n int64
		n, err = strconv.ParseInt(string(raw), 10, 64)
		v = protoreflect.ValueOfInt64(n)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		var n uint64
		n, err = strconv.ParseUint(string(raw), 10, 32)
		v = protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		var n uint64
		n, err = strconv.ParseUint(string(raw), 10, 64)
		v = protoreflect.ValueOfUint64(n)
	default:
		return protoreflect.Value{}, false
	}
	return v, err == nil
}

// float reads a float or double field's value: a number, a string holding
// exactly one, or "NaN", "Infinity", "-Infinity".
func (d *fastDecoder) float(kind protoreflect.Kind) (protoreflect.Value, bool) {
	bits := 64
	if kind == protoreflect.FloatKind {
		bits = 32
	}
	var f float64
	if d.b[d.i] == '"' {
		s, ok := d.str()
		if !ok {
			return protoreflect.Value{}, false
		}
		switch string(s) {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			if n, _ := numberLen(s); n == 0 || n != len(s) {
				return protoreflect.Value{}, false
			}
			var err error
			if f, err = strconv.ParseFloat(string(s), bits); err != nil {
				return protoreflect.Value{}, false
			}
		}
	} else {
		raw, _, ok := d.number()
		if !ok {
			return protoreflect.Value{}, false
		}
		var err error
		if f, err = strconv.ParseFloat(string(raw), bits); err != nil {
			return protoreflect.Value{}, false
		}
	}
	if bits == 32 {
		return protoreflect.ValueOfFloat32(float32(f)), true
	}
	return protoreflect.ValueOfFloat64(f), true
}

// decodeBase64 decodes a bytes field's text as protojson does: URL-safe
// when it holds '-' or '_', standard otherwise, without padding when its
// length is not a multiple of four.
func decodeBase64(s []byte) (protoreflect.Value, bool) {
	enc := base64.StdEncoding
	if bytes.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	out := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(out, s)
	return protoreflect.ValueOfBytes(out[:n]), err == nil
}

// value reads a google.protobuf.Value: any JSON value.
func (d *fastDecoder) value(m protoreflect.Message, t *decTable) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; c {
	case 'n':
		m.Set(t.valueKinds[valueNull], protoreflect.ValueOfEnum(0))
		return d.literal("null")
	case 't', 'f':
		m.Set(t.valueKinds[valueBool], protoreflect.ValueOfBool(c == 't'))
		return d.literal("true") || d.literal("false")
	case '"':
		s, ok := d.str()
		m.Set(t.valueKinds[valueString], protoreflect.ValueOfString(d.text(s)))
		return ok
	case '{':
		// The Struct of a Value is no level of its own.
		sm := m.Mutable(t.valueKinds[valueStruct]).Message()
		return !t.structTable.unsupported && d.mapField(sm, t.structTable.structFields)
	case '[':
		lm := m.Mutable(t.valueKinds[valueList]).Message()
		return !t.listTable.unsupported && d.listField(lm, t.listTable.listValues)
	}
	raw, _, ok := d.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	m.Set(t.valueKinds[valueNumber], protoreflect.ValueOfFloat64(f))
	return err == nil
}

// timestamp reads a google.protobuf.Timestamp through protoreflect.
func (d *fastDecoder) timestamp(m protoreflect.Message, t *decTable) bool {
	s, ok := d.str()
	if !ok {
		return false
	}
	secs, nanos, ok := parseTimestamp(s)
	m.Set(t.tsSeconds, protoreflect.ValueOfInt64(secs))
	m.Set(t.tsNanos, protoreflect.ValueOfInt32(nanos))
	return ok
}

// parseTimestamp reads the text of a google.protobuf.Timestamp: an RFC
// 3339 time with at most nine fractional digits, from 0001-01-01 to
// 9999-12-31 (UTC), as protojson reads it.
func parseTimestamp(s []byte) (secs int64, nanos int32, ok bool) {
	text := string(s)
	ts, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return 0, 0, false
	}
	secs = ts.Unix()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds {
		return 0, 0, false
	}
	i := strings.LastIndexByte(text, '.')
	j := strings.LastIndexAny(text, "Z-+")
	if i >= 0 && j >= i && j-i > len(".999999999") {
		return 0, 0, false
	}
	return secs, int32(ts.Nanosecond()), true
}

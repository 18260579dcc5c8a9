package a2a

// The single-pass reader behind Unmarshal. It reads ProtoJSON straight into
// a message, through protoreflect or, for generated types, into their Go
// structs, with one field table per message type (cached like the
// encoder's), and accepts an input only when it is sure that the
// general path (protojson with DiscardUnknown and RecursionLimit MaxDepth,
// then the enum check) accepts it too and builds the same message. On
// anything else (an error, or a construct it does not read itself: an
// undefined enum name, a bare StringList array, a float written where an
// integer is expected, a well-known type other than Timestamp, Struct,
// Value, ListValue and Empty, ...) it gives up and Unmarshal decodes the
// whole input on the general path, which then also words the error. The
// fast path never reports an error of its own, so every refusal reads
// exactly as before.
//
// The rules followed are those of the ProtoJSON mapping
// (protobuf.dev/programming-guides/json) as protojson implements them:
//
//   - a member is matched by its JSON name first, then by its proto field
//     name; members matching no field are skipped (DiscardUnknown), but
//     their values must still be well-formed JSON and nest no deeper than
//     the recursion limit allows; a name in brackets ("[pkg.ext]") is an
//     extension name, looked up in a registry, and is left to the general
//     path;
//   - a field given twice (under either name) is an error, and so is a
//     second member of one oneof; a JSON null leaves a field unset (and
//     counts for the duplicate check but not for the oneof check), except
//     for google.protobuf.Value (a null_value) and NullValue;
//   - integers are JSON numbers or strings holding one; floats also take
//     "NaN", "Infinity" and "-Infinity"; bytes are base64, standard or
//     URL-safe, padded or not; enums are value names or numbers;
//   - every message level (each google.protobuf.Value counts, a Struct or
//     ListValue held by a Value does not) is one step towards the
//     recursion limit, MaxDepth; a skipped value may nest only as deep as
//     the levels left;
//   - the text is JSON (RFC 8259) in UTF-8: strings hold no raw control
//     characters and no bytes that are not UTF-8, and a \u escape of a
//     UTF-16 surrogate must be half of a pair.

import (
	"reflect"
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fastDecoder reads one input.
type fastDecoder struct {
	b     []byte
	i     int
	depth int    // message levels entered, as counted towards MaxDepth
	buf   []byte // the text of the last string read, when it had escapes
	arena []byte // the bytes of short strings made (see text)
}

// Strings of up to arenaString bytes are made in shared blocks of at most
// arenaBlock bytes: one allocation for the many short members of a
// request instead of one each. A block is only appended to, so the
// strings in it never change; a string keeps its whole block alive, which
// the bounds keep small.
const (
	arenaString = 128
	arenaBlock  = 1024
)

// text returns s as a string.
func (d *fastDecoder) text(s []byte) string {
	switch {
	case len(s) == 0:
		return ""
	case len(s) > arenaString:
		return string(s)
	}
	if cap(d.arena)-len(d.arena) < len(s) {
		// A block half the size of the input left to read (string text
		// is rarely more of a request than that; another block follows
		// when it is), within the bounds.
		d.arena = make([]byte, 0, min(max((len(d.b)-d.i)/2, arenaString), arenaBlock))
	}
	start := len(d.arena)
	d.arena = append(d.arena, s...)
	return unsafe.String(&d.arena[start], len(s))
}

// unmarshalFast decodes b into m and reports true when it is certain that
// the general path would decode b into the same message without error;
// otherwise it reports false, m being left in any state.
func unmarshalFast(b []byte, m proto.Message) bool {
	pm := m.ProtoReflect()
	if !pm.IsValid() {
		return false
	}
	t := decTableFor(pm.Descriptor())
	if t.unsupported {
		return false
	}
	proto.Reset(m)
	d := fastDecoder{b: b}
	d.ws()
	var ok bool
	if t.goPtr != nil && reflect.TypeOf(m) == t.goPtr {
		ok = d.messageAt(reflect.ValueOf(m).UnsafePointer(), t)
	} else {
		ok = d.message(pm, t)
	}
	if !ok {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// message reads an object into m, of type t: one message level.
func (d *fastDecoder) message(m protoreflect.Message, t *decTable) bool {
	if t.unsupported {
		return false
	}
	d.depth++
	if d.depth > MaxDepth {
		return false
	}
	var ok bool
	switch t.wkt {
	case wktNone:
		ok = d.fields(m, nil, t)
	case wktStruct:
		ok = d.mapField(m, t.structFields)
	case wktListValue:
		ok = d.listField(m, t.listValues)
	case wktValue:
		ok = d.value(m, t)
	case wktTimestamp:
		ok = d.timestamp(m, t)
	case wktEmpty:
		ok = d.skipMembers()
	}
	d.depth--
	return ok
}

// fields reads the members of an ordinary message: m, or the generated
// message at p (m then made only when a field is set through
// protoreflect).
func (d *fastDecoder) fields(m protoreflect.Message, p unsafe.Pointer, t *decTable) bool {
	more, ok := d.enter('{', '}')
	var seen, seenOneofs uint64
	for ; more; more, ok = d.more('}') {
		name, ok := d.str()
		if !ok {
			return false
		}
		f := t.field(name)
		if f == nil && len(name) > 1 && name[0] == '[' && name[len(name)-1] == ']' {
			return false // an extension name: resolved on the general path
		}
		if !d.colon() {
			return false
		}
		switch {
		case f == nil:
			if !d.skip(MaxDepth - d.depth) {
				return false
			}
		case seen&f.bit != 0 || f.unsupported:
			return false
		default:
			seen |= f.bit
			if !f.nullable && d.i < len(d.b) && d.b[d.i] == 'n' {
				if !d.literal("null") {
					return false
				}
				break
			}
			if seenOneofs&f.oneofBit != 0 {
				return false
			}
			seenOneofs |= f.oneofBit
			if p != nil && f.store != storeReflect {
				if !d.fieldAt(p, f) {
					return false
				}
				break
			}
			if m == nil {
				m = t.reflectAt(p)
			}
			if !d.field(m, f) {
				return false
			}
		}
	}
	return ok
}

// skipMembers reads an object whose members are all skipped
// (google.protobuf.Empty).
func (d *fastDecoder) skipMembers() bool {
	more, ok := d.enter('{', '}')
	for ; more; more, ok = d.more('}') {
		if _, ok := d.str(); !ok || !d.colon() || !d.skip(MaxDepth-d.depth) {
			return false
		}
	}
	return ok
}

// field reads the value of a member that is a field of m.
func (d *fastDecoder) field(m protoreflect.Message, f *decField) bool {
	switch {
	case f.isMap:
		return d.mapField(m, f)
	case f.list:
		return d.listField(m, f)
	case f.msg != nil:
		return d.message(m.Mutable(f.fd).Message(), f.msg)
	}
	v, ok := d.scalar(f)
	if ok {
		m.Set(f.fd, v)
	}
	return ok
}

// listField reads an array into the repeated field f of m.
func (d *fastDecoder) listField(m protoreflect.Message, f *decField) bool {
	list := m.Mutable(f.fd).List()
	more, ok := d.enter('[', ']')
	for ; more; more, ok = d.more(']') {
		if f.msg != nil {
			v := list.NewElement()
			if !d.message(v.Message(), f.msg) {
				return false
			}
			list.Append(v)
		} else {
			v, ok := d.scalar(f)
			if !ok {
				return false
			}
			list.Append(v)
		}
	}
	return ok
}

// mapField reads an object into the map field f of m (or into a Struct's
// fields).
func (d *fastDecoder) mapField(m protoreflect.Message, f *decField) bool {
	mp := m.Mutable(f.fd).Map()
	more, ok := d.enter('{', '}')
	for ; more; more, ok = d.more('}') {
		name, ok := d.str()
		if !ok {
			return false
		}
		k, ok := d.mapKey(name, f.key)
		if !ok || mp.Has(k) || !d.colon() {
			return false
		}
		var v protoreflect.Value
		if f.val.msg != nil {
			v = mp.NewValue()
			ok = d.message(v.Message(), f.val.msg)
		} else {
			v, ok = d.scalar(f.val)
		}
		if !ok {
			return false
		}
		mp.Set(k, v)
	}
	return ok
}

// mapKey converts a member name to a map key of the given kind, as
// ProtoJSON writes keys: strings as they are, integers and bools in
// decimal or as true and false.
func (d *fastDecoder) mapKey(name []byte, kind protoreflect.Kind) (protoreflect.MapKey, bool) {
	var v protoreflect.Value
	switch kind {
	case protoreflect.StringKind:
		v = protoreflect.ValueOfString(d.text(name))
	case protoreflect.BoolKind:
		switch string(name) {
		case "true":
			v = protoreflect.ValueOfBool(true)
		case "false":
			v = protoreflect.ValueOfBool(false)
		default:
			return protoreflect.MapKey{}, false
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(string(name), 10, 32)
		if err != nil {
			return protoreflect.MapKey{}, false
		}
		v = protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(string(name), 10, 64)
		if err != nil {
			return protoreflect.MapKey{}, false
		}
		v = protoreflect.ValueOfInt64(n)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(string(name), 10, 32)
		if err != nil {
			return protoreflect.MapKey{}, false
		}
		v = protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(string(name), 10, 64)
		if err != nil {
			return protoreflect.MapKey{}, false
		}
		v = protoreflect.ValueOfUint64(n)
	default:
		return protoreflect.MapKey{}, false
	}
	return v.MapKey(), true
}

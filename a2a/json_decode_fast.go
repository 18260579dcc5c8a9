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
	"bytes"
	"encoding/base64"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// decTable is what the fast reader knows of one message type.
type decTable struct {
	wkt wktKind
	// goType is the generated Go struct of the type, nil when it has none
	// (its messages are then read through protoreflect only); goPtr is
	// the pointer to it.
	goType, goPtr reflect.Type
	// unsupported: the type is read on the general path only (a
	// well-known type without a reader here, a type with required fields,
	// groups, closed enums or more than 64 fields or oneofs).
	unsupported bool
	byName      map[string]*decField // JSON names, then proto names (JSON names win)
	// byLen holds byName's entries by the length of the name: a member's
	// field is found by comparing the few names of its length, faster
	// than hashing it.
	byLen [][]namedField
	// The fields of the well-known types read here.
	structFields *decField                       // Struct.fields
	listValues   *decField                       // ListValue.values
	valueKinds   [6]protoreflect.FieldDescriptor // Value: null, number, string, bool, struct, list
	structTable  *decTable                       // Value.struct_value's type
	listTable    *decTable                       // Value.list_value's type
	tsSeconds    protoreflect.FieldDescriptor    // Timestamp.seconds
	tsNanos      protoreflect.FieldDescriptor    // Timestamp.nanos
}

// The indexes of valueKinds.
const (
	valueNull = iota
	valueNumber
	valueString
	valueBool
	valueStruct
	valueList
)

// namedField is a field under one of its names.
type namedField struct {
	name string
	f    *decField
}

// field returns the field a member name stands for, or nil.
func (t *decTable) field(name []byte) *decField {
	if len(name) < len(t.byLen) {
		for _, e := range t.byLen[len(name)] {
			if e.name == string(name) {
				return e.f
			}
		}
	}
	return nil
}

// decField is what the fast reader knows of one field, or of the values of
// a map field (the field's val).
type decField struct {
	fd       protoreflect.FieldDescriptor
	kind     protoreflect.Kind
	bit      uint64 // the field's bit in the set of members seen
	oneofBit uint64 // its oneof's bit in the set of oneofs seen; 0 when in none
	list     bool
	isMap    bool
	// nullable: JSON null is a value of the field (google.protobuf.Value,
	// google.protobuf.NullValue), not "unset".
	nullable    bool
	nullEnum    bool                               // the field is a NullValue
	unsupported bool                               // read on the general path only
	msg         *decTable                          // the message type, for message fields
	enumNums    map[string]protoreflect.EnumNumber // value names, for enum fields
	key         protoreflect.Kind                  // the key kind, for maps
	val         *decField                          // the values, for maps
	// Where the field is in its generated Go struct, when it is stored
	// there directly (storeKind).
	store   storeKind
	off     uintptr      // the offset of the Go field
	wrapper reflect.Type // for a oneof member: its wrapper struct
	iface   reflect.Type // for a oneof member: the oneof's interface type
}

// decTables caches decTableFor's results.
var decTables sync.Map // protoreflect.MessageDescriptor -> *decTable

// decTableFor returns the table of a message type, building it (and those
// of the types it holds) on first use. It is safe for concurrent use.
func decTableFor(md protoreflect.MessageDescriptor) *decTable {
	if v, ok := decTables.Load(md); ok {
		return v.(*decTable)
	}
	building := map[protoreflect.MessageDescriptor]*decTable{}
	t := buildDecTable(md, building)
	for bmd, bt := range building {
		decTables.LoadOrStore(bmd, bt)
	}
	return t
}

// buildDecTable builds the table of md; building holds the tables under
// construction, so that recursive types end.
func buildDecTable(md protoreflect.MessageDescriptor, building map[protoreflect.MessageDescriptor]*decTable) *decTable {
	if t, ok := building[md]; ok {
		return t
	}
	if v, ok := decTables.Load(md); ok {
		return v.(*decTable)
	}
	t := &decTable{wkt: wktOf(md), goType: goTypeOf(md)}
	if t.goType != nil {
		t.goPtr = reflect.PointerTo(t.goType)
	}
	building[md] = t
	fds := md.Fields()
	switch t.wkt {
	case wktUnsupported:
		t.unsupported = true
		return t
	case wktStruct:
		t.structFields = buildDecField(fds.ByNumber(1), building)
		return t
	case wktListValue:
		t.listValues = buildDecField(fds.ByNumber(1), building)
		return t
	case wktValue:
		for i, num := range [...]protoreflect.FieldNumber{1, 2, 3, 4, 5, 6} {
			t.valueKinds[i] = fds.ByNumber(num)
		}
		t.structTable = buildDecTable(t.valueKinds[valueStruct].Message(), building)
		t.listTable = buildDecTable(t.valueKinds[valueList].Message(), building)
		return t
	case wktTimestamp:
		t.tsSeconds, t.tsNanos = fds.ByNumber(1), fds.ByNumber(2)
		return t
	case wktEmpty:
		return t
	}
	if fds.Len() > 64 || md.Oneofs().Len() > 64 || md.RequiredNumbers().Len() > 0 {
		t.unsupported = true
		return t
	}
	t.byName = make(map[string]*decField, 2*fds.Len())
	fields := make([]*decField, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := buildDecField(fd, building)
		f.bit = 1 << i
		if od := fd.ContainingOneof(); od != nil && !fd.IsList() && !fd.IsMap() {
			f.oneofBit = 1 << od.Index()
		}
		fields[i] = f
		t.byName[string(fd.Name())] = f
	}
	for i, f := range fields { // JSON names win, as protojson looks them up first
		t.byName[fds.Get(i).JSONName()] = f
	}
	for name, f := range t.byName {
		if len(name) >= len(t.byLen) {
			t.byLen = append(t.byLen, make([][]namedField, len(name)+1-len(t.byLen))...)
		}
		t.byLen[len(name)] = append(t.byLen[len(name)], namedField{name, f})
	}
	if t.goType != nil {
		layoutFields(t, md, fields)
	}
	return t
}

// buildDecField describes fd (or, for a map's value, the value field).
func buildDecField(fd protoreflect.FieldDescriptor, building map[protoreflect.MessageDescriptor]*decTable) *decField {
	f := &decField{fd: fd, kind: fd.Kind(), list: fd.IsList(), isMap: fd.IsMap()}
	if f.isMap {
		f.key = fd.MapKey().Kind()
		f.val = buildDecField(fd.MapValue(), building)
		f.unsupported = f.val.unsupported
		return f
	}
	switch f.kind {
	case protoreflect.MessageKind:
		f.msg = buildDecTable(fd.Message(), building)
		f.nullable = fd.Message().FullName() == "google.protobuf.Value"
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.IsClosed() {
			f.unsupported = true
			break
		}
		f.nullEnum = ed.FullName() == "google.protobuf.NullValue"
		f.nullable = f.nullEnum
		vals := ed.Values()
		f.enumNums = make(map[string]protoreflect.EnumNumber, vals.Len())
		for i := range vals.Len() {
			f.enumNums[string(vals.Get(i).Name())] = vals.Get(i).Number()
		}
	case protoreflect.GroupKind:
		f.unsupported = true
	}
	return f
}

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

// ws skips JSON white space.
func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte (0 at the end).
func (d *fastDecoder) next() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes the literal lit (null, true or false) when it comes
// next.
func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// colon consumes the ':' after a member name.
func (d *fastDecoder) colon() bool {
	if d.next() != ':' {
		return false
	}
	d.i++
	d.ws()
	return true
}

// more consumes the ',' or the closing byte after a member or element,
// and reports whether another one follows; ok is false for anything else.
func (d *fastDecoder) more(closing byte) (more, ok bool) {
	switch d.next() {
	case ',':
		d.i++
		d.ws()
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

// enter consumes the opening byte of an object or array and reports
// whether a member or element follows: more is false for an empty one
// (its closing byte then consumed too), ok is false when the value does
// not open with opening. A loop over the members or elements reads each
// and then calls more.
func (d *fastDecoder) enter(opening, closing byte) (more, ok bool) {
	if d.i >= len(d.b) || d.b[d.i] != opening {
		return false, false
	}
	d.i++
	if d.next() == closing {
		d.i++
		return false, true
	}
	return true, true
}

// strNeeds marks the bytes that end a run of plain ASCII string text.
var strNeeds = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// str reads a string token and returns its text: a slice of the input
// when it has no escapes, else of d.buf (valid until the next str).
func (d *fastDecoder) str() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if !strNeeds[c] {
			continue
		}
		switch {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			d.i = j + 1
			return s, true
		case c == '\\':
			return d.strEscaped(start, j)
		case c < 0x20:
			return nil, false
		}
		ascii = false
	}
	return nil, false
}

// strEscaped reads the rest of a string token from its first escape at j,
// the text starting at start; the text goes to d.buf.
func (d *fastDecoder) strEscaped(start, j int) ([]byte, bool) {
	out := d.buf[:0]
	run := start // the start of the raw run being copied
	for j < len(d.b) {
		c := d.b[j]
		if c != '"' && c != '\\' {
			if c < 0x20 {
				return nil, false
			}
			j++
			continue
		}
		if !utf8.Valid(d.b[run:j]) {
			return nil, false
		}
		out = append(out, d.b[run:j]...)
		if c == '"' {
			d.i = j + 1
			d.buf = out
			return out, true
		}
		if j+1 >= len(d.b) {
			return nil, false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.b, j+2)
			if !ok {
				return nil, false
			}
			switch {
			case 0xDC00 <= r && r < 0xE000: // a low surrogate alone
				return nil, false
			case 0xD800 <= r && r < 0xDC00: // must be followed by its low half
				if j+12 > len(d.b) || d.b[j+6] != '\\' || d.b[j+7] != 'u' {
					return nil, false
				}
				lo, ok := hex4(d.b, j+8)
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return nil, false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				j += 6
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return nil, false
		}
		j += 2
		run = j
	}
	return nil, false
}

// hex4 reads the four hexadecimal digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a JSON number token (RFC 8259 §6) and returns its text and
// whether it is an integer literal (no fraction, no exponent).
func (d *fastDecoder) number() (raw []byte, isInt, ok bool) {
	n, isInt := numberLen(d.b[d.i:])
	if n == 0 {
		return nil, false, false
	}
	raw = d.b[d.i : d.i+n]
	d.i += n
	return raw, isInt, true
}

// numberLen returns the length of the JSON number at the start of b (0
// when there is none) and whether it is an integer literal.
func numberLen(b []byte) (n int, isInt bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return 0, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
		isInt = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
		isInt = false
	}
	return i, isInt
}

// skip reads and discards one JSON value, whose objects and arrays may
// nest levels deep at most (protojson's limit on skipped values).
func (d *fastDecoder) skip(levels int) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; c {
	case '"':
		_, ok := d.str()
		return ok
	case 'n':
		return d.literal("null")
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case '{', '[':
		if levels < 1 {
			return false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		more, ok := d.enter(c, closing)
		for ; more; more, ok = d.more(closing) {
			if c == '{' {
				if _, ok := d.str(); !ok || !d.colon() {
					return false
				}
			}
			if !d.skip(levels - 1) {
				return false
			}
		}
		return ok
	}
	_, _, ok := d.number()
	return ok
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

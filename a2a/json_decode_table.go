package a2a

// The fast reader's field tables (see unmarshalFast): what it knows of
// each message type, built once per type and cached.

import (
	"reflect"
	"sync"

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

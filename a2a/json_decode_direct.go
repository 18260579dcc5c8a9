package a2a

// Storing decoded values straight into generated Go structs. Setting a
// field through protoreflect boxes every value into an interface and goes
// through package reflect (three allocations for one string member, a
// reflect append for each list element); for the generated types (the
// A2A messages), the fast reader instead stores a field's value at its
// offset in the struct, as an assignment in Go code would: the field
// found by the number in its `protobuf` struct tag, a oneof member
// through its wrapper type (Part_Text for Part.text). A field whose Go
// shape is not one handled here (maps, 64-bit numbers, repeated enums,
// ...) is set through protoreflect, and so is any message that is not of
// a generated type (dynamicpb); the values are the same either way.

import (
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// storeKind says how a field's value is stored in its Go struct.
type storeKind uint8

const (
	storeReflect      storeKind = iota // through protoreflect
	storeString                        // string
	storeStrings                       // []string
	storeInt32                         // int32, or an enum type
	storeBool                          // bool
	storeBytes                         // []byte
	storeInt32Ptr                      // *int32 (proto3 optional)
	storeBoolPtr                       // *bool
	storeStringPtr                     // *string
	storeMessage                       // *T
	storeMessages                      // []*T
	storeOneofString                   // a oneof member held in a wrapper's string
	storeOneofBytes                    // ... in a wrapper's []byte
	storeOneofMessage                  // ... in a wrapper's *T
)

// goTypeOf returns the generated struct type for md, or nil when md has
// none registered (or a registered type with another descriptor).
func goTypeOf(md protoreflect.MessageDescriptor) reflect.Type {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil || mt.Descriptor() != md {
		return nil
	}
	pt := reflect.TypeOf(mt.Zero().Interface())
	if pt.Kind() != reflect.Pointer || pt.Elem().Kind() != reflect.Struct {
		return nil
	}
	return pt.Elem()
}

// layoutFields finds where each field of an ordinary message of Go type
// t.goType is stored; fields[i] describes md.Fields().Get(i).
func layoutFields(t *decTable, md protoreflect.MessageDescriptor, fields []*decField) {
	st := t.goType
	byNum := map[protoreflect.FieldNumber]reflect.StructField{}
	oneofs := map[protoreflect.Name]reflect.StructField{}
	for i := range st.NumField() {
		sf := st.Field(i)
		if tag := sf.Tag.Get("protobuf"); tag != "" {
			if parts := strings.Split(tag, ","); len(parts) > 1 {
				if n, err := strconv.Atoi(parts[1]); err == nil {
					byNum[protoreflect.FieldNumber(n)] = sf
				}
			}
		}
		if name := sf.Tag.Get("protobuf_oneof"); name != "" {
			oneofs[protoreflect.Name(name)] = sf
		}
	}
	for i, f := range fields {
		fd := md.Fields().Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if sf, ok := oneofs[od.Name()]; ok {
				layoutOneof(f, fd, st, sf)
			}
			continue
		}
		sf, ok := byNum[fd.Number()]
		if !ok {
			continue
		}
		f.off = sf.Offset
		f.store = storeFor(f, sf.Type, fd.HasPresence())
	}
}

// storeFor returns how a value of f is stored in a Go field of type gt.
func storeFor(f *decField, gt reflect.Type, presence bool) storeKind {
	if f.isMap {
		return storeReflect
	}
	k := gt.Kind()
	switch f.kind {
	case protoreflect.StringKind:
		switch {
		case f.list && k == reflect.Slice && gt.Elem().Kind() == reflect.String:
			return storeStrings
		case f.list:
		case k == reflect.String && !presence:
			return storeString
		case k == reflect.Pointer && gt.Elem().Kind() == reflect.String:
			return storeStringPtr
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.EnumKind:
		switch {
		case f.list:
		case k == reflect.Int32 && !presence:
			return storeInt32
		case k == reflect.Pointer && gt.Elem().Kind() == reflect.Int32:
			return storeInt32Ptr
		}
	case protoreflect.BoolKind:
		switch {
		case f.list:
		case k == reflect.Bool && !presence:
			return storeBool
		case k == reflect.Pointer && gt.Elem().Kind() == reflect.Bool:
			return storeBoolPtr
		}
	case protoreflect.BytesKind:
		if !f.list && k == reflect.Slice && gt.Elem().Kind() == reflect.Uint8 {
			return storeBytes
		}
	case protoreflect.MessageKind:
		if f.msg.goType == nil {
			break
		}
		switch {
		case f.list && k == reflect.Slice && gt.Elem() == reflect.PointerTo(f.msg.goType):
			return storeMessages
		case !f.list && gt == reflect.PointerTo(f.msg.goType):
			return storeMessage
		}
	}
	return storeReflect
}

// layoutOneof finds the wrapper type of the oneof member fd, held in the
// interface field sf of the struct st.
func layoutOneof(f *decField, fd protoreflect.FieldDescriptor, st reflect.Type, sf reflect.StructField) {
	// Set the member in a new message and see what the interface holds.
	m := reflect.New(st).Interface().(proto.Message).ProtoReflect()
	if fd.Message() != nil {
		m.Set(fd, m.NewField(fd))
	} else {
		m.Set(fd, fd.Default())
	}
	held := reflect.ValueOf(m.Interface()).Elem().FieldByIndex(sf.Index)
	if held.Kind() != reflect.Interface || held.IsNil() {
		return
	}
	wt := held.Elem().Type()
	if wt.Kind() != reflect.Pointer || wt.Elem().Kind() != reflect.Struct || wt.Elem().NumField() != 1 {
		return
	}
	inner := wt.Elem().Field(0)
	var store storeKind
	switch storeFor(f, inner.Type, false) {
	case storeString:
		store = storeOneofString
	case storeBytes:
		store = storeOneofBytes
	case storeMessage:
		store = storeOneofMessage
	default:
		return
	}
	f.store, f.off, f.wrapper, f.iface = store, sf.Offset, wt.Elem(), sf.Type
}

// reflectAt returns the message of type t at p through protoreflect.
func (t *decTable) reflectAt(p unsafe.Pointer) protoreflect.Message {
	return reflect.NewAt(t.goType, p).Interface().(proto.Message).ProtoReflect()
}

// newStruct allocates a zero struct of the Go type gt.
func newStruct(gt reflect.Type) unsafe.Pointer {
	return reflect.New(gt).UnsafePointer()
}

// The generated types of the well-known types read here directly.
var (
	structGoType    = reflect.TypeFor[structpb.Struct]()
	valueGoType     = reflect.TypeFor[structpb.Value]()
	listValueGoType = reflect.TypeFor[structpb.ListValue]()
	timestampGoType = reflect.TypeFor[timestamppb.Timestamp]()
)

// messageAt reads the JSON form of the generated message of type t at p:
// one message level.
func (d *fastDecoder) messageAt(p unsafe.Pointer, t *decTable) bool {
	if t.unsupported {
		return false
	}
	if t.wkt == wktValue && t.goType == valueGoType {
		return d.valueAt((*structpb.Value)(p)) // counts its level
	}
	d.depth++
	if d.depth > MaxDepth {
		return false
	}
	var ok bool
	switch {
	case t.wkt == wktNone:
		ok = d.fields(nil, p, t)
	case t.goType == structGoType:
		ok = d.structFields(&(*structpb.Struct)(p).Fields)
	case t.goType == listValueGoType:
		ok = d.listValues(&(*structpb.ListValue)(p).Values)
	case t.goType == timestampGoType:
		ok = d.timestampAt((*timestamppb.Timestamp)(p))
	default:
		d.depth-- // message counts the level again
		return d.message(t.reflectAt(p), t)
	}
	d.depth--
	return ok
}

// valueAt reads any JSON value as a google.protobuf.Value: one message
// level (the Struct or ListValue it may hold is none).
func (d *fastDecoder) valueAt(v *structpb.Value) bool {
	d.depth++
	if d.depth > MaxDepth || d.i >= len(d.b) {
		return false
	}
	ok := true
	switch c := d.b[d.i]; c {
	case 'n':
		ok = d.literal("null")
		v.Kind = &structpb.Value_NullValue{}
	case 't':
		ok = d.literal("true")
		v.Kind = &structpb.Value_BoolValue{BoolValue: true}
	case 'f':
		ok = d.literal("false")
		v.Kind = &structpb.Value_BoolValue{}
	case '"':
		var s []byte
		s, ok = d.str()
		v.Kind = &structpb.Value_StringValue{StringValue: d.text(s)}
	case '{':
		sv := new(structpb.Struct)
		v.Kind = &structpb.Value_StructValue{StructValue: sv}
		ok = d.structFields(&sv.Fields)
	case '[':
		lv := new(structpb.ListValue)
		v.Kind = &structpb.Value_ListValue{ListValue: lv}
		ok = d.listValues(&lv.Values)
	default:
		raw, _, isNum := d.number()
		f, err := strconv.ParseFloat(string(raw), 64)
		ok = isNum && err == nil
		v.Kind = &structpb.Value_NumberValue{NumberValue: f}
	}
	d.depth--
	return ok
}

// structFields reads an object as the fields of a google.protobuf.Struct.
// A key given twice is an error (as for any map).
func (d *fastDecoder) structFields(fields *map[string]*structpb.Value) bool {
	more, ok := d.enter('{', '}')
	if *fields == nil {
		*fields = make(map[string]*structpb.Value)
	}
	for ; more; more, ok = d.more('}') {
		name, ok := d.str()
		if !ok {
			return false
		}
		if _, dup := (*fields)[string(name)]; dup || !d.colon() {
			return false
		}
		key := d.text(name)
		v := new(structpb.Value)
		if !d.valueAt(v) {
			return false
		}
		(*fields)[key] = v
	}
	return ok
}

// listValues reads an array as the values of a google.protobuf.ListValue.
func (d *fastDecoder) listValues(values *[]*structpb.Value) bool {
	more, ok := d.enter('[', ']')
	for ; more; more, ok = d.more(']') {
		v := new(structpb.Value)
		if !d.valueAt(v) {
			return false
		}
		*values = append(*values, v)
	}
	return ok
}

// timestampAt reads a google.protobuf.Timestamp (see parseTimestamp).
func (d *fastDecoder) timestampAt(ts *timestamppb.Timestamp) bool {
	s, ok := d.str()
	if !ok {
		return false
	}
	secs, nanos, ok := parseTimestamp(s)
	ts.Seconds, ts.Nanos = secs, nanos
	return ok
}

// fieldAt reads the value of a member into the field f of the generated
// message at p (f.store is not storeReflect).
func (d *fastDecoder) fieldAt(p unsafe.Pointer, f *decField) bool {
	fp := unsafe.Add(p, f.off)
	switch f.store {
	case storeMessage:
		child := *(*unsafe.Pointer)(fp)
		if child == nil {
			child = newStruct(f.msg.goType)
			*(*unsafe.Pointer)(fp) = child
		}
		return d.messageAt(child, f.msg)
	case storeMessages:
		more, ok := d.enter('[', ']')
		list := (*[]unsafe.Pointer)(fp)
		for ; more; more, ok = d.more(']') {
			child := newStruct(f.msg.goType)
			if !d.messageAt(child, f.msg) {
				return false
			}
			if *list == nil {
				*list = make([]unsafe.Pointer, 0, 2)
			}
			*list = append(*list, child)
		}
		return ok
	case storeStrings:
		more, ok := d.enter('[', ']')
		list := (*[]string)(fp)
		for ; more; more, ok = d.more(']') {
			s, ok := d.str()
			if !ok {
				return false
			}
			if *list == nil {
				*list = make([]string, 0, 2)
			}
			*list = append(*list, d.text(s))
		}
		return ok
	case storeOneofString, storeOneofBytes, storeOneofMessage:
		w := reflect.New(f.wrapper)
		wp := w.UnsafePointer()
		reflect.NewAt(f.iface, fp).Elem().Set(w)
		switch f.store {
		case storeOneofMessage:
			child := newStruct(f.msg.goType)
			*(*unsafe.Pointer)(wp) = child
			return d.messageAt(child, f.msg)
		case storeOneofString:
			s, ok := d.str()
			*(*string)(wp) = d.text(s)
			return ok
		}
		v, ok := d.scalar(f)
		if ok {
			*(*[]byte)(wp) = v.Bytes()
		}
		return ok
	}
	v, ok := d.scalar(f)
	if !ok {
		return false
	}
	switch f.store {
	case storeString:
		*(*string)(fp) = v.String()
	case storeStringPtr:
		s := v.String()
		*(**string)(fp) = &s
	case storeInt32, storeInt32Ptr:
		var n int32
		if f.kind == protoreflect.EnumKind {
			n = int32(v.Enum())
		} else {
			n = int32(v.Int())
		}
		if f.store == storeInt32 {
			*(*int32)(fp) = n
		} else {
			*(**int32)(fp) = &n
		}
	case storeBool:
		*(*bool)(fp) = v.Bool()
	case storeBoolPtr:
		b := v.Bool()
		*(**bool)(fp) = &b
	case storeBytes:
		*(*[]byte)(fp) = v.Bytes()
	}
	return true
}

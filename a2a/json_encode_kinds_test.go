package a2a

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestMarshalScalarKinds covers the field kinds A2A does not use (64-bit
// integers, floats, non-string map keys, repeated enums) through a dynamic
// message, which also exercises the non-generated Struct path.
func TestMarshalScalarKinds(t *testing.T) {
	md := kindsDescriptor(t)
	m := dynamicpb.NewMessage(md)
	set := func(name string, v protoreflect.Value) { m.Set(md.Fields().ByName(protoreflect.Name(name)), v) }
	set("i64", protoreflect.ValueOfInt64(math.MinInt64))
	set("u64", protoreflect.ValueOfUint64(math.MaxUint64))
	set("s32", protoreflect.ValueOfInt32(-7))
	set("f32", protoreflect.ValueOfUint32(math.MaxUint32))
	set("flt", protoreflect.ValueOfFloat32(0.1))
	set("dbl", protoreflect.ValueOfFloat64(-2.5e-9))
	set("nan", protoreflect.ValueOfFloat64(math.Inf(1)))
	byNum := m.Mutable(md.Fields().ByName("by_num")).Map()
	for _, k := range []int32{10, -3, 2} {
		byNum.Set(protoreflect.ValueOfInt32(k).MapKey(), protoreflect.ValueOfString("v"))
	}
	byFlag := m.Mutable(md.Fields().ByName("by_flag")).Map()
	byFlag.Set(protoreflect.ValueOfBool(true).MapKey(), protoreflect.ValueOfString("t"))
	byFlag.Set(protoreflect.ValueOfBool(false).MapKey(), protoreflect.ValueOfString("f"))
	states := m.Mutable(md.Fields().ByName("states")).List()
	states.Append(protoreflect.ValueOfEnum(1))
	states.Append(protoreflect.ValueOfEnum(9))
	meta := m.Mutable(md.Fields().ByName("meta")).Message()
	metaFields := meta.Mutable(meta.Descriptor().Fields().ByName("fields")).Map()
	val := metaFields.NewValue()
	vm := val.Message()
	vm.Set(vm.Descriptor().Fields().ByName("bool_value"), protoreflect.ValueOfBool(true))
	metaFields.Set(protoreflect.ValueOfString("ok").MapKey(), val)

	got, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"i64":"-9223372036854775808","u64":"18446744073709551615","s32":-7,"f32":4294967295,"flt":0.1,"dbl":-2.5e-9,"nan":"Infinity","byNum":{"-3":"v","2":"v","10":"v"},"byFlag":{"false":"f","true":"t"},"states":["COLOR_RED",9],"meta":{"ok":true}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// protojson must read our output back to the same message.
	back := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(got, back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m, back) {
		t.Fatalf("round trip mismatch: %v", back)
	}
}

// kindsDescriptor builds parley.test.Kinds, a message with one field of each
// kind TestMarshalScalarKinds covers.
func kindsDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("parley_test/kinds.proto"),
		Package:    proto.String("parley.test"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/struct.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Kinds"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("i64", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
				field("u64", 2, descriptorpb.FieldDescriptorProto_TYPE_UINT64, ""),
				field("s32", 3, descriptorpb.FieldDescriptorProto_TYPE_SINT32, ""),
				field("f32", 4, descriptorpb.FieldDescriptorProto_TYPE_FIXED32, ""),
				field("flt", 5, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, ""),
				field("dbl", 6, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
				field("nan", 7, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
				field("by_num", 8, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".parley.test.Kinds.ByNumEntry"),
				field("by_flag", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".parley.test.Kinds.ByFlagEntry"),
				field("states", 10, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".parley.test.Color"),
				field("meta", 11, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Struct"),
			},
			NestedType: []*descriptorpb.DescriptorProto{
				mapEntry("ByNumEntry", descriptorpb.FieldDescriptorProto_TYPE_INT32),
				mapEntry("ByFlagEntry", descriptorpb.FieldDescriptorProto_TYPE_BOOL),
			},
		}},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
			},
		}},
	}
	for _, f := range fdp.MessageType[0].Field {
		if f.GetName() == "by_num" || f.GetName() == "by_flag" || f.GetName() == "states" {
			f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		}
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Kinds")
}

func field(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{
		Name:     proto.String(name),
		Number:   proto.Int32(num),
		Type:     typ.Enum(),
		Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		JsonName: proto.String(jsonCamel(name)),
	}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

func jsonCamel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = []rune(strings.ToUpper(string(r)))[0]
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mapEntry(name string, key descriptorpb.FieldDescriptorProto_Type) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{
		Name: proto.String(name),
		Field: []*descriptorpb.FieldDescriptorProto{
			field("key", 1, key, ""),
			field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
		},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
}

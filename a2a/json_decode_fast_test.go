package a2a

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/durationpb" // for allKinds
	_ "google.golang.org/protobuf/types/known/emptypb"    // for allKinds
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// allKinds is a message type built for the tests, with a field of every
// kind the fast reader reads (A2A itself has only int32 numbers, no floats
// and no maps with integer keys), read through dynamicpb.
var allKinds = func() protoreflect.MessageDescriptor {
	const (
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	)
	type T = descriptorpb.FieldDescriptorProto_Type
	field := func(name string, num int32, label descriptorpb.FieldDescriptorProto_Label, typ T, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Label: label.Enum(), Type: typ.Enum()}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	entry := func(name string, key, val T, valType string) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			Field: []*descriptorpb.FieldDescriptorProto{field("key", 1, opt, key, ""), field("value", 2, opt, val, valType)}}
	}
	const (
		i32, i64, u32, u64 = descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT32, descriptorpb.FieldDescriptorProto_TYPE_UINT64
		s32, s64, f32, f64 = descriptorpb.FieldDescriptorProto_TYPE_SINT32, descriptorpb.FieldDescriptorProto_TYPE_SINT64, descriptorpb.FieldDescriptorProto_TYPE_FIXED32, descriptorpb.FieldDescriptorProto_TYPE_FIXED64
		sf32, sf64         = descriptorpb.FieldDescriptorProto_TYPE_SFIXED32, descriptorpb.FieldDescriptorProto_TYPE_SFIXED64
		flt, dbl, bl       = descriptorpb.FieldDescriptorProto_TYPE_FLOAT, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, descriptorpb.FieldDescriptorProto_TYPE_BOOL
		str, byt           = descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BYTES
		enm, msg           = descriptorpb.FieldDescriptorProto_TYPE_ENUM, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	)
	oneof := func(f *descriptorpb.FieldDescriptorProto, idx int32) *descriptorpb.FieldDescriptorProto {
		f.OneofIndex = proto.Int32(idx)
		return f
	}
	optional := oneof(field("opt_int", 40, opt, i32, ""), 1)
	optional.Proto3Optional = proto.Bool(true)
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("parley_test_allkinds.proto"), Package: proto.String("parleytest"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/struct.proto", "google/protobuf/timestamp.proto", "google/protobuf/empty.proto", "google/protobuf/duration.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Color"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)}, {Name: proto.String("COLOR_RED"), Number: proto.Int32(1)}, {Name: proto.String("COLOR_BLUE"), Number: proto.Int32(-2)}}}},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("AllKinds"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("f_int32", 1, opt, i32, ""), field("f_int64", 2, opt, i64, ""), field("f_uint32", 3, opt, u32, ""), field("f_uint64", 4, opt, u64, ""),
				field("f_sint32", 5, opt, s32, ""), field("f_sint64", 6, opt, s64, ""), field("f_fixed32", 7, opt, f32, ""), field("f_fixed64", 8, opt, f64, ""),
				field("f_sfixed32", 9, opt, sf32, ""), field("f_sfixed64", 10, opt, sf64, ""), field("f_float", 11, opt, flt, ""), field("f_double", 12, opt, dbl, ""),
				field("f_bool", 13, opt, bl, ""), field("f_string", 14, opt, str, ""), field("f_bytes", 15, opt, byt, ""), field("f_enum", 16, opt, enm, ".parleytest.Color"),
				field("r_int64", 17, rep, i64, ""), field("r_enum", 18, rep, enm, ".parleytest.Color"), field("r_double", 19, rep, dbl, ""), field("r_bytes", 20, rep, byt, ""),
				field("m_int32", 21, rep, msg, ".parleytest.AllKinds.MInt32Entry"), field("m_bool", 22, rep, msg, ".parleytest.AllKinds.MBoolEntry"),
				field("m_uint64", 23, rep, msg, ".parleytest.AllKinds.MUint64Entry"), field("m_value", 24, rep, msg, ".parleytest.AllKinds.MValueEntry"),
				field("m_self", 25, rep, msg, ".parleytest.AllKinds.MSelfEntry"),
				field("child", 26, opt, msg, ".parleytest.AllKinds"), field("children", 27, rep, msg, ".parleytest.AllKinds"),
				oneof(field("o_string", 28, opt, str, ""), 0), oneof(field("o_int64", 29, opt, i64, ""), 0), oneof(field("o_value", 30, opt, msg, ".google.protobuf.Value"), 0),
				field("ts", 31, opt, msg, ".google.protobuf.Timestamp"), field("empty", 32, opt, msg, ".google.protobuf.Empty"),
				field("st", 33, opt, msg, ".google.protobuf.Struct"), field("val", 34, opt, msg, ".google.protobuf.Value"),
				field("lv", 35, opt, msg, ".google.protobuf.ListValue"), field("dur", 36, opt, msg, ".google.protobuf.Duration"),
				field("r_value", 37, rep, msg, ".google.protobuf.Value"), field("nul", 38, opt, enm, ".google.protobuf.NullValue"),
				field("r_null", 39, rep, enm, ".google.protobuf.NullValue"), optional,
				field("m_string", 41, rep, msg, ".parleytest.AllKinds.MStringEntry"), field("m_int64", 42, rep, msg, ".parleytest.AllKinds.MInt64Entry"),
			},
			NestedType: []*descriptorpb.DescriptorProto{
				entry("MInt32Entry", i32, str, ""), entry("MBoolEntry", bl, i64, ""), entry("MUint64Entry", u64, enm, ".parleytest.Color"),
				entry("MValueEntry", str, msg, ".google.protobuf.Value"), entry("MSelfEntry", s32, msg, ".parleytest.AllKinds"),
				entry("MStringEntry", str, str, ""), entry("MInt64Entry", sf64, flt, ""),
			},
			OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}, {Name: proto.String("_opt_int")}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

// decodeTargets are the message types every input is read as.
var decodeTargets = []struct {
	name string
	new  func() proto.Message
}{
	{"SendMessageRequest", func() proto.Message { return &SendMessageRequest{} }},
	{"StreamResponse", func() proto.Message { return &StreamResponse{} }},
	{"AgentCard", func() proto.Message { return &AgentCard{} }},
	{"ListTasksRequest", func() proto.Message { return &ListTasksRequest{} }},
	{"TaskPushNotificationConfig", func() proto.Message { return &TaskPushNotificationConfig{} }},
	{"Value", func() proto.Message { return &structpb.Value{} }},
	{"Timestamp", func() proto.Message { return &timestamppb.Timestamp{} }},
	{"AllKinds", func() proto.Message { return dynamicpb.NewMessage(allKinds) }},
	{"GetTaskRequest", func() proto.Message { return &GetTaskRequest{} }},
	{"Task", func() proto.Message { return &Task{} }},
}

// checkDifferential reads data as a message made by newMsg with Unmarshal
// and with the general path alone: both must give the same message, or
// both an error of the same kind (Syntax, and Field where the general
// path names one). Whenever the fast reader accepts the input, the general
// path must accept it too, with the same message. It reports whether the
// fast reader accepted it.
func checkDifferential(t *testing.T, data []byte, name string, newMsg func() proto.Message) bool {
	t.Helper()
	want := newMsg()
	wantErr := unmarshalGeneral(data, want)
	got := newMsg()
	if s, ok := got.(*SendMessageRequest); ok { // Unmarshal starts from scratch
		proto.Merge(s, sampleSendRequest())
	}
	gotErr := Unmarshal(data, got)
	fast := newMsg()
	fastOK := unmarshalFast(data, fast)
	if fastOK {
		if wantErr != nil {
			t.Fatalf("%s: the fast reader accepts what the general path refuses (%v)\ninput: %q", name, wantErr, data)
		}
		if !proto.Equal(fast, want) {
			t.Fatalf("%s: the fast reader's message differs\ninput: %q\nfast:    %v\ngeneral: %v", name, data, fast, want)
		}
	}
	switch {
	case wantErr == nil && gotErr == nil:
		if !proto.Equal(got, want) {
			t.Fatalf("%s: Unmarshal's message differs\ninput: %q\ngot:  %v\nwant: %v", name, data, got, want)
		}
	case wantErr != nil && gotErr != nil:
		var wd, gd *DecodeError
		if !errors.As(wantErr, &wd) || !errors.As(gotErr, &gd) {
			t.Fatalf("%s: errors are not DecodeErrors: %v / %v", name, gotErr, wantErr)
		}
		if gd.Syntax != wd.Syntax || (wd.Field != "" && gd.Field != wd.Field) {
			t.Fatalf("%s: error kinds differ\ninput: %q\ngot:  %+v\nwant: %+v", name, data, gd, wd)
		}
		if !isEmpty(got) {
			t.Fatalf("%s: message not reset on error: %v", name, got)
		}
	default:
		t.Fatalf("%s: Unmarshal gives %v, the general path %v\ninput: %q", name, gotErr, wantErr, data)
	}
	return fastOK
}

// isEmpty reports whether m has no field set.
func isEmpty(m proto.Message) bool {
	empty := true
	m.ProtoReflect().Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
		empty = false
		return false
	})
	return empty
}

// FuzzDecodeDifferential: Unmarshal (the fast reader, falling back to the
// general path) and the general path alone agree on every input, read as
// each of decodeTargets. The seed corpus is testdata/fuzz/FuzzDecodeDifferential.
func FuzzDecodeDifferential(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tg := range decodeTargets {
			checkDifferential(t, data, tg.name, tg.new)
		}
	})
}

// TestFastDecoderTakes: the inputs peers ordinarily send are read by the
// fast reader (not handed to the general path), and read right.
func TestFastDecoderTakes(t *testing.T) {
	sample, err := Marshal(sampleSendRequest())
	if err != nil {
		t.Fatal(err)
	}
	task, err := Marshal(sampleTask())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target int // index in decodeTargets
		in     string
	}{
		{0, string(sample)},
		{1, `{"task":` + string(task) + `}`},
		{0, `{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"text":"hi","media_type":"text/plain"}],"metadata":{"a":[1,2.5,null,true,"s",{"b":{}}]}},"configuration":{"history_length":"3"}}`},
		{0, " \t\r\n{\"message\":{\"messageId\":\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\",\"role\":1,\"parts\":[{\"raw\":\"AAEC\"},{\"raw\":\"-_8\"}]},\"jsonrpc\":\"2.0\",\"x\":{\"y\":[[],{}]}}\n"},
		{0, `{"message":null,"configuration":{"historyLength":null,"acceptedOutputModes":null}}`},
		{2, `{"name":"a","securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"securityRequirements":[{"schemes":{"bearer":{"list":["read"]}}}]}`},
		{3, `{"status":"TASK_STATE_WORKING","statusTimestampAfter":"2025-04-17T17:47:09.680794+02:00","pageSize":50}`},
		{7, `{"fInt64":"-9223372036854775808","fUint64":18446744073709551615,"fSint32":-1,"fFixed64":"7","fFloat":"NaN","fDouble":-1.5e-300,"fBool":true,"fBytes":"AA==","fEnum":"COLOR_BLUE",` +
			`"rInt64":[1,"2"],"rEnum":[1,"COLOR_RED",-7],"mInt32":{"-5":"x"},"mBool":{"true":1,"false":"2"},"mUint64":{"9":"COLOR_RED"},"mValue":{"a":null},"mSelf":{"1":{"child":{}}},` +
			`"oValue":null,"ts":"1970-01-01T00:00:00Z","empty":{"x":[1]},"st":{"k":[]},"val":null,"lv":[{},[]],"rValue":[null,1],"nul":null,"rNull":[null,0],"optInt":0,"mInt64":{"-1":1e-50}}`},
	} {
		tg := decodeTargets[c.target]
		if !checkDifferential(t, []byte(c.in), tg.name, tg.new) {
			t.Errorf("%s: the fast reader does not take %s", tg.name, c.in)
		}
	}
}

// TestFastDecoderDefers: inputs the fast reader leaves to the general
// path, which accepts some of them.
func TestFastDecoderDefers(t *testing.T) {
	for _, c := range []struct {
		target int
		in     string
		ok     bool // the general path accepts it
	}{
		{0, `{"message":{"messageId":"m","role":"user","parts":[]}}`, false},    // a v0.3 enum spelling
		{0, `{"configuration":{"historyLength":1.0}}`, true},                    // an integral float
		{0, `{"configuration":{"historyLength":1e}}`, true},                     // protojson reads "1e" as 1
		{0, `{"message":{"parts":[{"text":"a","url":"b"}]}}`, false},            // a oneof set twice
		{0, `{"tenant":"a","tenant":"b"}`, false},                               // a duplicate
		{0, `{"[google.api.http]":1}`, true},                                    // an extension name
		{2, `{"securityRequirements":[{"schemes":{"bearer":["read"]}}]}`, true}, // a bare StringList
		{7, `{"dur":"1s"}`, true},                                               // a well-known type read on the general path only
		{0, "{\"tenant\":\"\xff\"}", false},                                     // not UTF-8
		{0, `{"tenant":"\ud800"}`, false},                                       // a lone surrogate
		{0, `{"message":{"metadata":` + strings.Repeat(`{"a":`, MaxDepth) + `1` + strings.Repeat(`}`, MaxDepth) + `}}`, false}, // too deep
	} {
		tg := decodeTargets[c.target]
		if checkDifferential(t, []byte(c.in), tg.name, tg.new) {
			t.Errorf("%s: the fast reader takes %s", tg.name, c.in)
		}
		if err := Unmarshal([]byte(c.in), tg.new()); (err == nil) != c.ok {
			t.Errorf("%s: Unmarshal(%s) = %v", tg.name, c.in, err)
		}
	}
}

func BenchmarkDecodeSendMessageRequest(b *testing.B) {
	data, err := Marshal(sampleSendRequest())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dec  func([]byte, proto.Message) error
	}{{"Unmarshal", Unmarshal}, {"general", unmarshalGeneral}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var m SendMessageRequest
				if err := c.dec(data, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeTask(b *testing.B) {
	data, err := Marshal(sampleTask())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dec  func([]byte, proto.Message) error
	}{{"Unmarshal", Unmarshal}, {"general", unmarshalGeneral}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var m Task
				if err := c.dec(data, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeSendMessageResponse is the answer to the request of
// BenchmarkDecodeSendMessageRequest: a task holding the message.
func BenchmarkEncodeSendMessageResponse(b *testing.B) {
	req := sampleSendRequest()
	resp := &SendMessageResponse{Payload: &SendMessageResponse_Task{Task: &Task{Id: "t-1", ContextId: "c-1",
		Status:    &TaskStatus{State: TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.Now()},
		Artifacts: []*Artifact{{ArtifactId: "echo", Parts: req.GetMessage().GetParts()}},
		History:   []*Message{req.GetMessage()}}}}
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		var err error
		if buf, err = AppendJSON(buf[:0], resp); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// TestFastDecoderGenerated: what Parley's encoder and protojson write for
// generated messages (every field present or not, odd strings, undefined
// enum numbers, Struct metadata) is read by the fast reader, as the
// general path reads it; proto names and enum numbers too.
func TestFastDecoderGenerated(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	taken, total := 0, 0
	for i := range 3000 {
		var m proto.Message
		switch i % 4 {
		case 0:
			m = g.streamResponse()
		case 1:
			m = g.sendMessageResponse()
		case 2:
			m = g.task()
		default:
			m = g.message()
		}
		var data []byte
		var err error
		switch i % 3 {
		case 0:
			data, err = Marshal(m)
		case 1:
			data, err = protojson.MarshalOptions{UseProtoNames: true, UseEnumNumbers: i%2 == 0}.Marshal(m)
		default:
			data, err = protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(m)
		}
		if err != nil {
			continue // a timestamp out of range, a string that is not UTF-8
		}
		total++
		newMsg := func() proto.Message { return m.ProtoReflect().New().Interface() }
		if checkDifferential(t, data, string(m.ProtoReflect().Descriptor().Name()), newMsg) {
			taken++
		} else {
			t.Errorf("the fast reader does not take %s", data)
		}
	}
	t.Logf("%d of %d taken by the fast reader", taken, total)
}

// TestFastDecoderConcurrent: the field tables are built once and shared;
// goroutines reading the same types at once, from an empty cache, build
// and read them safely (go test -race).
func TestFastDecoderConcurrent(t *testing.T) {
	sample, err := Marshal(sampleSendRequest())
	if err != nil {
		t.Fatal(err)
	}
	task, err := Marshal(sampleTask())
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{sample, []byte(`{"task":` + string(task) + `}`), task}
	decTables.Clear()
	done := make(chan error)
	for g := range 8 {
		go func() {
			for i := range 20 {
				in := inputs[(g+i)%len(inputs)]
				for _, tg := range decodeTargets {
					fast, general := tg.new(), tg.new()
					ok := unmarshalFast(in, fast)
					if err := unmarshalGeneral(in, general); ok && (err != nil || !proto.Equal(fast, general)) {
						done <- errors.New(tg.name + ": the fast reader differs on " + string(in))
						return
					}
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

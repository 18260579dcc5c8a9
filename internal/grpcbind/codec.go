package grpcbind

import (
	"bytes"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
)

// message carries any message of the method table through connect-go, so
// that one generic handler and one generic client serve every operation:
// the initializers below put an empty message of the right type in it
// before connect-go decodes into it. A stream event that several streams
// carry also brings its shared cache of encodings (a2a.EventCache), so
// that the codecs encode it once for all of them.
type message struct {
	proto.Message
	cache *a2a.EventCache
}

// shared returns the cache of v's encodings that v shares with other
// streams, and the StreamResponse it holds them for; nil when there is
// none.
func shared(v any) (*a2a.EventCache, *a2a.StreamResponse) {
	m, ok := v.(*message)
	if !ok {
		return nil, nil
	}
	resp, ok := m.Message.(*a2a.StreamResponse)
	if !ok || !m.cache.Holds(resp) {
		return nil, nil
	}
	return m.cache, resp
}

// requestOf returns the initializer of an operation's request messages.
func requestOf(m *a2a.Method) func(connect.Spec, any) error {
	return func(_ connect.Spec, v any) error {
		v.(*message).Message = m.NewRequest()
		return nil
	}
}

// responseOf returns the initializer of an operation's response messages:
// StreamResponse for streaming ones.
func responseOf(m *a2a.Method) func(connect.Spec, any) error {
	return func(_ connect.Spec, v any) error {
		if m.Streaming {
			v.(*message).Message = &a2a.StreamResponse{}
		} else {
			v.(*message).Message = m.NewResponse()
		}
		return nil
	}
}

// protoOf returns the proto message a codec is given: the one a message
// carries, or v itself (connect-go also encodes its own messages, such as
// the google.rpc.Status of an error, with the codec).
func protoOf(v any) proto.Message {
	if m, ok := v.(*message); ok {
		return m.Message
	}
	p, _ := v.(proto.Message)
	return p
}

// protoCodec is the binary protobuf codec (application/grpc and
// application/grpc+proto) over message.
type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

// Marshal returns bytes of their own: connect-go may reuse them.
func (c protoCodec) Marshal(v any) ([]byte, error) {
	if cache, _ := shared(v); cache != nil {
		return c.MarshalAppend(nil, v)
	}
	return proto.Marshal(protoOf(v))
}

func (protoCodec) MarshalAppend(b []byte, v any) ([]byte, error) {
	if cache, resp := shared(v); cache != nil {
		data, err := cache.LoadBytes(resp, "proto", func() ([]byte, error) { return proto.Marshal(resp) })
		if err != nil {
			return b, err
		}
		return append(b, data...), nil
	}
	return proto.MarshalOptions{}.MarshalAppend(b, protoOf(v))
}

func (protoCodec) Unmarshal(b []byte, v any) error {
	m := protoOf(v)
	return utf8Err(proto.Unmarshal(b, m), a2a.BinaryUTF8Field, b, m)
}

// utf8Err replaces a decoding error caused by a string that is not UTF-8
// by one naming the field (find finds it in b), which connect-go returns
// as INVALID_ARGUMENT, the status of InvalidParamsError (spec §5.4).
func utf8Err(err error, find func([]byte, protoreflect.MessageDescriptor) string, b []byte, m proto.Message) error {
	if err == nil || m == nil {
		return err
	}
	if f := find(b, m.ProtoReflect().Descriptor()); f != "" {
		return errors.New("invalid parameters: " + f + ": is not valid UTF-8")
	}
	return err
}

// jsonCodec is the ProtoJSON codec (application/grpc+json) over message.
type jsonCodec struct{}

func (jsonCodec) Name() string { return "json" }

// Marshal returns bytes of their own: connect-go may reuse them.
func (jsonCodec) Marshal(v any) ([]byte, error) {
	if cache, resp := shared(v); cache != nil {
		data, err := cache.LoadBytes(resp, "protojson", func() ([]byte, error) { return protojson.Marshal(resp) })
		return bytes.Clone(data), err
	}
	return protojson.Marshal(protoOf(v))
}

func (jsonCodec) Unmarshal(b []byte, v any) error {
	m := protoOf(v)
	return utf8Err(protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m), a2a.JSONUTF8Field, b, m)
}

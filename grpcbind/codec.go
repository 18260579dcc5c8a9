package grpcbind

import (
	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// message carries any message of the method table through connect-go, so
// that one generic handler and one generic client serve every operation:
// the initializers below put an empty message of the right type in it
// before connect-go decodes into it.
type message struct{ proto.Message }

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

func (protoCodec) Marshal(v any) ([]byte, error) { return proto.Marshal(protoOf(v)) }

func (protoCodec) MarshalAppend(b []byte, v any) ([]byte, error) {
	return proto.MarshalOptions{}.MarshalAppend(b, protoOf(v))
}

func (protoCodec) Unmarshal(b []byte, v any) error { return proto.Unmarshal(b, protoOf(v)) }

// jsonCodec is the ProtoJSON codec (application/grpc+json) over message.
type jsonCodec struct{}

func (jsonCodec) Name() string { return "json" }

func (jsonCodec) Marshal(v any) ([]byte, error) { return protojson.Marshal(protoOf(v)) }

func (jsonCodec) Unmarshal(b []byte, v any) error {
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, protoOf(v))
}

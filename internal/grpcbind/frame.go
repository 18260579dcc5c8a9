package grpcbind

import "encoding/binary"

// AppendFrame appends msg to dst as one gRPC length-prefixed message, the
// form every message of a gRPC call travels in over HTTP/2 (spec §10.1
// leaves the transport to gRPC): a flag byte saying the message is not
// compressed, its length as four big-endian bytes, then its bytes. The
// handler and Transport leave framing to connect-go; the checker and the
// load generator, which write gRPC calls and answers by hand, frame with
// this.
func AppendFrame(dst, msg []byte) []byte {
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

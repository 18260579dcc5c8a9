package a2ahttp

import (
	"time"

	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/sse"
)

// Parking takes HTTP/1.1 SubscribeToTask streams that have been silent for
// a while off net/http's connection machinery, so that an idle
// subscription holds no handler goroutine and no connection buffers
// (Options.Parking). A stream that may park is served with
// "Connection: close": the connection serves that one stream.
type Parking = sse.Parking

// NewParking returns a Parking that parks streams silent for after (0: 20
// ms). Close it after the http.Server's Shutdown.
func NewParking(after time.Duration) *Parking { return sse.NewParking(after) }

// GRPCOptions configure the gRPC binding (Options.GRPC): message size
// limits, server reflection, the readiness its health service reports.
type GRPCOptions = grpcbind.Options

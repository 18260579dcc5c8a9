package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// grpcSend builds and sends a gRPC call. It returns the exchange, the
// response and when the call was sent, or the result of a call that could
// not be made.
func (t *target) grpcSend(ctx context.Context, method string, req proto.Message, o callOpts, streaming bool) (*exchange, *http.Response, time.Time, *result) {
	hr, shown, err := t.newGRPCRequest(ctx, method, req, o)
	if err != nil {
		return nil, nil, time.Time{}, buildFailure(err)
	}
	ex := &exchange{Method: hr.Method, URL: hr.URL.String(), ReqHeader: hr.Header.Clone(), ReqBody: shown, IsGRPC: true, Streaming: streaming}
	start := time.Now()
	resp, err := t.client(o).Do(hr)
	if err != nil {
		ex.Err, ex.Elapsed = err, time.Since(start)
		return nil, nil, start, &result{ex: ex}
	}
	ex.Status, ex.Header, ex.Proto = resp.StatusCode, resp.Header, resp.ProtoMajor
	return ex, resp, start, nil
}

// grpcCall performs a unary gRPC call.
func (t *target) grpcCall(ctx context.Context, method string, req proto.Message, o callOpts) *result {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ex, resp, start, failed := t.grpcSend(ctx, method, req, o, false)
	if failed != nil {
		return failed
	}
	defer resp.Body.Close()
	r := &result{ex: ex}
	if !isGRPCContentType(resp.Header) || resp.StatusCode != http.StatusOK {
		return grpcWithoutMessages(r, resp, start)
	}
	fr := &frameReader{r: resp.Body, encoding: resp.Header.Get("Grpc-Encoding")}
	var msgs [][]byte
	var ferr error
	for {
		m, err := fr.next()
		if err != nil {
			if err != io.EOF {
				ferr = err
			}
			break
		}
		msgs = append(msgs, m)
	}
	ex.Elapsed = time.Since(start)
	ex.Trailer = resp.Trailer
	ex.GRPC = grpcStatusOf(resp.Header, resp.Trailer)
	grpcUnaryOutcome(ctx, r, method, msgs, ferr)
	return r
}

// grpcUnaryOutcome grades what a unary call read: its status, and the one
// message a success carries.
func grpcUnaryOutcome(ctx context.Context, r *result, method string, msgs [][]byte, ferr error) {
	ex, st := r.ex, r.ex.GRPC
	switch {
	case ferr != nil && ctx.Err() == nil && st == nil:
		ex.Err = fmt.Errorf("reading the response: %w", ferr)
	case ferr != nil && st == nil:
		ex.Err = ctx.Err()
	case st == nil:
		r.broken = "the call ended without a grpc-status"
	case st.Code != 0:
		r.err = st.wireError(ex.Status)
	case ferr != nil:
		r.broken = "unreadable response message: " + ferr.Error()
	case len(msgs) != 1:
		r.broken = fmt.Sprintf("%d response messages for a unary call", len(msgs))
	default:
		r.bin = msgs[0]
		if out := grpcOutput(method); out != nil {
			if err := proto.Unmarshal(r.bin, out); err != nil {
				r.broken = "the response message does not decode: " + err.Error()
				return
			}
			r.raw, _ = a2a.Marshal(out)
			ex.Body = r.raw
		}
		if r.raw == nil {
			r.raw = []byte("{}")
		}
	}
}

// grpcWithoutMessages reads a response that carries no messages: an error
// status (a trailers-only response), an empty stream, or not gRPC at all.
// A unary call keeps the status only when it is an error.
func grpcWithoutMessages(r *result, resp *http.Response, start time.Time) *result {
	ex := r.ex
	ex.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	ex.Elapsed = time.Since(start)
	st := grpcStatusOf(resp.Header, resp.Trailer)
	if ex.Streaming {
		ex.GRPC = st
	}
	switch {
	case st != nil && st.Code != 0:
		ex.GRPC = st
		r.err = st.wireError(resp.StatusCode)
	case st != nil && isGRPCContentType(resp.Header) && resp.StatusCode == http.StatusOK:
		ex.Closed = true // an empty stream
	case httpLevelError(ex) != nil:
		r.err = httpLevelError(ex)
	default:
		r.broken = fmt.Sprintf("not a gRPC response (HTTP %d, Content-Type %q)", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return r
}

// grpcStream performs a server-streaming gRPC call and reads its messages
// as ctl says. An error status after no message is the call's error
// (res.err), as a trailers-only response is; after messages it is a last
// event carrying the error.
func (t *target) grpcStream(ctx context.Context, method string, req proto.Message, o callOpts, ctl streamCtl) *result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ex, resp, start, failed := t.grpcSend(ctx, method, req, o, true)
	if failed != nil {
		return failed
	}
	defer resp.Body.Close()
	r := &result{ex: ex, idOK: true}
	if !isGRPCContentType(resp.Header) || resp.StatusCode != http.StatusOK || resp.Header.Get("Grpc-Status") != "" {
		return grpcWithoutMessages(r, resp, start)
	}
	take := func(ev *event) bool {
		if ev.Err != nil && len(ex.Events) == 0 {
			r.err = ev.Err // an error before any message is the call's error
			return false
		}
		return true
	}
	readEvents(ctx, ex, r, start, grpcEvents(resp), take, ctl)
	if ex.Closed {
		// The reader saw the end of the body: the trailers are complete.
		ex.Trailer, ex.GRPC = resp.Trailer, grpcStatusOf(http.Header{}, resp.Trailer)
	}
	return r
}

// grpcEvents returns a function that reads the next message of a gRPC
// stream as an event; the status that ends the stream is io.EOF when OK,
// a last event carrying the error otherwise.
func grpcEvents(resp *http.Response) func() (*event, error) {
	fr := &frameReader{r: resp.Body, encoding: resp.Header.Get("Grpc-Encoding")}
	ended := false
	return func() (*event, error) {
		if ended {
			return nil, io.EOF
		}
		m, err := fr.next()
		if err == io.EOF {
			ended = true
			st := grpcStatusOf(http.Header{}, resp.Trailer)
			switch {
			case st == nil:
				return nil, errors.New("the stream ended without a grpc-status")
			case st.Code != 0:
				return &event{Err: st.wireError(http.StatusOK)}, nil
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		ev := &event{Data: m}
		sr := &a2a.StreamResponse{}
		if err := proto.Unmarshal(m, sr); err != nil {
			ev.DecodeErr = err
		} else {
			ev.Resp = sr
		}
		return ev, nil
	}
}

package check

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// grpcStatus is the status a gRPC call ended with.
type grpcStatus struct {
	Code    int
	Message string
	Details *spb.Status // decoded grpc-status-details-bin, nil if absent
	BadBin  error       // grpc-status-details-bin present but undecodable
	Where   string      // "trailers", or "headers" for a trailers-only response
}

// grpcCodeName is the google.rpc.Code name of a status code.
func grpcCodeName(c int) string {
	if name, ok := code.Code_name[int32(c)]; ok && int(int32(c)) == c {
		return name
	}
	return "code " + strconv.Itoa(c)
}

// grpcStatusOf reads the status from the trailers, or from the headers of
// a trailers-only response; nil when there is none.
func grpcStatusOf(header, trailer http.Header) *grpcStatus {
	h, where := trailer, "trailers"
	if h.Get("Grpc-Status") == "" {
		h, where = header, "headers"
	}
	v := h.Get("Grpc-Status")
	if v == "" {
		return nil
	}
	st := &grpcStatus{Where: where, Code: -1}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		st.Code = n
	}
	st.Message = h.Get("Grpc-Message")
	if m, err := url.PathUnescape(st.Message); err == nil {
		st.Message = m
	}
	if bin := h.Get("Grpc-Status-Details-Bin"); bin != "" {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "="))
		if err == nil {
			s := &spb.Status{}
			if err = proto.Unmarshal(raw, s); err == nil {
				st.Details = s
			}
		}
		st.BadBin = err
	}
	return st
}

// wireError describes a status other than OK as a protocol error. The
// error is identified by the ErrorInfo reason, else by the status alone
// where §5.4 gives it one meaning worth grading (a grading choice, like
// the HTTP statuses in parseRESTError; FAILED_PRECONDITION, shared by
// several A2A errors, identifies none).
func (st *grpcStatus) wireError(httpStatus int) *wireError {
	e := &wireError{Shape: "grpc", Status: grpcCodeName(st.Code), GRPCCode: st.Code, Message: st.Message, DetailsOK: st.BadBin == nil}
	if httpStatus != http.StatusOK {
		e.HTTPStatus = httpStatus
	}
	if st.Details != nil {
		st.readDetails(e)
	}
	if c, ok := a2a.CodeForReason(e.Reason); ok {
		e.identify(c)
		return e
	}
	switch e.Status {
	case "UNAUTHENTICATED", "PERMISSION_DENIED": // §3.3.2, as the error table reads them
		if c, ok := a2a.CodeFromWire(a2a.Wire{GRPC: e.GRPCCode}); ok {
			e.identify(c)
		}
	case "INVALID_ARGUMENT":
		e.identify(a2a.CodeInvalidParams)
	case "NOT_FOUND":
		e.identify(a2a.CodeTaskNotFound)
	case "UNIMPLEMENTED":
		e.identify(a2a.CodeMethodNotFound)
	case "INTERNAL":
		e.identify(a2a.CodeInternal)
	}
	return e
}

// readDetails reads the status details into e: whether they agree with
// grpc-status, and the ErrorInfo (an A2A one preferred).
func (st *grpcStatus) readDetails(e *wireError) {
	e.HasDetails = len(st.Details.GetDetails()) > 0
	if st.Details.GetCode() != int32(st.Code) {
		e.DetailsOK = false // grpc-status-details-bin disagrees with grpc-status
	}
	for _, d := range st.Details.GetDetails() {
		m, err := d.UnmarshalNew()
		if err != nil {
			continue
		}
		if info, ok := m.(*errdetails.ErrorInfo); ok && (!e.HasInfo || info.GetDomain() == a2a.DomainA2A) {
			e.HasInfo = true
			e.Reason, e.Domain = info.GetReason(), info.GetDomain()
			e.Metadata = info.GetMetadata()
		}
	}
}

// describe renders the status on one line.
func (st *grpcStatus) describe() string {
	if st == nil {
		return "no grpc-status"
	}
	s := fmt.Sprintf("grpc-status %d %s", st.Code, grpcCodeName(st.Code))
	if st.Message != "" {
		s += " " + strconv.Quote(abridge(st.Message, 100))
	}
	for _, d := range st.Details.GetDetails() {
		m, err := d.UnmarshalNew()
		if err != nil {
			s += "; detail " + string(d.MessageName().Name())
			continue
		}
		switch v := m.(type) {
		case *errdetails.ErrorInfo:
			s += fmt.Sprintf("; ErrorInfo reason %s domain %s", v.GetReason(), v.GetDomain())
			if len(v.GetMetadata()) > 0 {
				s += fmt.Sprintf(" metadata %v", v.GetMetadata())
			}
		case *errdetails.BadRequest:
			for _, f := range v.GetFieldViolations() {
				s += fmt.Sprintf("; BadRequest %s: %s", f.GetField(), abridge(f.GetDescription(), 60))
			}
		default:
			s += "; detail " + string(m.ProtoReflect().Descriptor().Name())
		}
	}
	if st.BadBin != nil {
		s += "; grpc-status-details-bin undecodable"
	}
	return s
}

package server_test

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// fuzzLimits are small limits, so that the fuzzer crosses each of them
// often.
var fuzzLimits = server.Limits{MaxParts: 8, MaxIDBytes: 64, MaxMetadataBytes: 256, MaxPushSecretBytes: 32}

// FuzzSendLimits builds a SendMessage request from the fuzzer's sizes and
// token, and checks the core's answer against the limits: a request over
// any of them is InvalidParams with a violation naming the limit, and one
// within all of them is answered (the conformance agent's direct reply).
// The seed corpus is in testdata/fuzz/FuzzSendLimits.
func FuzzSendLimits(f *testing.F) {
	f.Add(uint8(1), uint8(0), uint16(0), uint8(0), "")
	f.Add(uint8(9), uint8(0), uint16(0), uint8(0), "")
	f.Add(uint8(1), uint8(65), uint16(0), uint8(0), "")
	f.Add(uint8(1), uint8(0), uint16(300), uint8(0), "")
	f.Add(uint8(1), uint8(0), uint16(0), uint8(9), "tok")
	f.Add(uint8(2), uint8(10), uint16(10), uint8(2), "a\r\nb")
	s := newServer(f, server.Options{Limits: fuzzLimits})
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, nParts, idLen uint8, metaLen uint16, refs uint8, token string) {
		if !utf8.ValidString(token) {
			t.Skip("proto strings are UTF-8; every binding's decoder refuses other bytes")
		}
		req, over := fuzzRequest(t, int(nParts)%40+1, int(idLen), int(metaLen)%2048, int(refs)%20, token, n.Add(1))
		_, err := s.SendMessage(anon(t), req)
		if over == "" {
			if err != nil {
				t.Fatalf("a request within the limits: %v", err)
			}
			return
		}
		var e *a2a.Error
		if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams {
			t.Fatalf("a request over %s: err = %v, want InvalidParams", over, err)
		}
		if !strings.Contains(e.Message, over) || !slicesHas(e.Violations, over) {
			t.Fatalf("a request over %s: %v (violations %v) does not name it", over, err, e.Violations)
		}
	})
}

// fuzzRequest builds the request and returns the name of the first limit
// it is over ("" when within all), in the order the core checks them.
func fuzzRequest(t *testing.T, nParts, idLen, metaLen, refs int, token string, seq int64) (*a2a.SendMessageRequest, string) {
	l := fuzzLimits
	id := "m" + strconv.FormatInt(seq, 36) + "-"
	id += strings.Repeat("i", max(0, idLen-len(id)))
	m := &a2a.Message{MessageId: id, Role: a2a.Role_ROLE_USER, Parts: parts(nParts)}
	m.Parts[0] = a2a.TextPart("message")
	for i := range refs {
		m.ReferenceTaskIds = append(m.ReferenceTaskIds, "r"+strconv.Itoa(i))
	}
	if metaLen > 0 {
		st, err := structpb.NewStruct(map[string]any{"k": strings.Repeat("v", metaLen)})
		if err != nil {
			t.Fatal(err)
		}
		m.Metadata = st
	}
	req := &a2a.SendMessageRequest{Message: m}
	if token != "" {
		req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/x", Token: token}}
	}
	switch {
	case len(id) > l.MaxIDBytes:
		return req, "maxIdBytes"
	case refs > l.MaxParts:
		return req, "maxParts"
	case m.Metadata != nil && proto.Size(m.Metadata) > l.MaxMetadataBytes:
		return req, "maxMetadataBytes"
	case nParts > l.MaxParts:
		return req, "maxParts"
	case len(token) > l.MaxPushSecretBytes:
		return req, "maxPushSecretBytes"
	case strings.ContainsFunc(token, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return req, "control characters"
	}
	return req, ""
}

// slicesHas reports whether a violation's description mentions s.
func slicesHas(v []a2a.FieldViolation, s string) bool {
	for _, x := range v {
		if strings.Contains(x.Description, s) {
			return true
		}
	}
	return false
}

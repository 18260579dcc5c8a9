package server

// Page tokens of ListTasks and ListTaskPushNotificationConfigs: opaque,
// signed, and bound to the caller and the filters (or the task) they were
// issued for.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// filterDigest binds a page token to the caller and the filters it was
// issued for, so a token replayed with other filters is refused.
func filterDigest(scope taskstore.Scope, req *a2a.ListTasksRequest) []byte {
	h := sha256.New()
	for _, s := range []string{scope.Tenant, scope.Owner, req.ContextId, req.Status.String()} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if ts := req.StatusTimestampAfter; ts != nil {
		_ = binary.Write(h, binary.BigEndian, ts.AsTime().UnixMilli())
	}
	return h.Sum(nil)[:8]
}

// pushFilterDigest binds a ListTaskPushNotificationConfigs page token to
// the caller and the task. Its leading label keeps it apart from a
// ListTasks digest, so a token of one list is refused by the other (and
// would only name a position in the caller's own data if it were not).
func pushFilterDigest(scope taskstore.Scope, taskID string) []byte {
	h := sha256.New()
	for _, s := range []string{"push-configs", scope.Tenant, scope.Owner, taskID} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:8]
}

// encodeCursor makes a page token: the position (status time in ms and task
// id), a digest of the filters, and an HMAC over both, base64url-encoded.
func (s *Server) encodeCursor(c taskstore.Cursor, filter []byte) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(c.Time.UnixMilli()))
	b = append(b, filter...)
	b = append(b, c.ID...)
	mac := hmac.New(sha256.New, s.opts.CursorKey)
	mac.Write(b)
	b = mac.Sum(b)[:len(b)+16]
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor checks and opens a page token.
func (s *Server) decodeCursor(tok string, filter []byte) (*taskstore.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 8+len(filter)+16 {
		return nil, false
	}
	body, sum := b[:len(b)-16], b[len(b)-16:]
	mac := hmac.New(sha256.New, s.opts.CursorKey)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil)[:16], sum) || !hmac.Equal(body[8:8+len(filter)], filter) {
		return nil, false
	}
	ms := int64(binary.BigEndian.Uint64(body[:8]))
	return &taskstore.Cursor{Time: time.UnixMilli(ms).UTC(), ID: string(body[8+len(filter):])}, true
}

package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// webhook is the local receiver of push notifications.
type webhook struct {
	ln  net.Listener
	srv *http.Server

	mu    sync.Mutex
	byKey map[string][]notification
	cond  chan struct{} // closed and replaced on every arrival
}

// notification is one POST the receiver got.
type notification struct {
	Header http.Header
	Body   []byte
}

func startWebhook(addr string) (*webhook, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	w := &webhook{ln: ln, byKey: map[string][]notification{}, cond: make(chan struct{})}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	return w, nil
}

// ServeHTTP records a notification and acknowledges it (§4.3.3: 2xx).
func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	w.mu.Lock()
	w.byKey[r.URL.Path] = append(w.byKey[r.URL.Path], notification{Header: r.Header.Clone(), Body: body})
	close(w.cond)
	w.cond = make(chan struct{})
	w.mu.Unlock()
	rw.WriteHeader(http.StatusOK)
}

// wait returns the notifications for path once done says they are enough,
// or when d has passed.
func (w *webhook) wait(ctx context.Context, path string, d time.Duration, done func([]notification) bool) []notification {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		w.mu.Lock()
		got := append([]notification(nil), w.byKey[path]...)
		ch := w.cond
		w.mu.Unlock()
		if done(got) {
			return got
		}
		select {
		case <-ch:
		case <-timer.C:
			w.mu.Lock()
			defer w.mu.Unlock()
			return append([]notification(nil), w.byKey[path]...)
		case <-ctx.Done():
			return got
		}
	}
}

func (w *webhook) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w.srv.Shutdown(ctx)
}

// decodeNotification reads a notification body as a StreamResponse and
// counts its payload members.
func decodeNotification(body []byte) (*a2a.StreamResponse, int, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, 0, err
	}
	n := 0
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate", "status_update", "artifact_update"} {
		if _, ok := top[k]; ok {
			n++
		}
	}
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(body, sr); err != nil {
		return nil, n, err
	}
	return sr, n, nil
}

// notificationTask returns the task id and state a notification reports.
func notificationTask(sr *a2a.StreamResponse) (string, a2a.TaskState) {
	switch {
	case sr.GetTask() != nil:
		return sr.GetTask().GetId(), sr.GetTask().GetStatus().GetState()
	case sr.GetStatusUpdate() != nil:
		return sr.GetStatusUpdate().GetTaskId(), sr.GetStatusUpdate().GetStatus().GetState()
	case sr.GetArtifactUpdate() != nil:
		return sr.GetArtifactUpdate().GetTaskId(), 0
	case sr.GetMessage() != nil:
		return sr.GetMessage().GetTaskId(), 0
	}
	return "", 0
}

// deliveryChecks registers the receiver with a message and grades what
// arrives (B3).
func (b *bindingRun) deliveryChecks(ctx context.Context) {
	ids := []string{"B3.delivery", "B3.body", "B3.authorization", "B3.content-type", "B3.token"}
	if b.hook == nil {
		for _, id := range ids {
			b.ac(id).skip("no --webhook-addr given: push delivery is not checked")
		}
		return
	}
	path := "/parley-check/" + a2a.NewID()
	secret, token := "parley-check-secret-"+a2a.NewID()[:8], "parley-check-token-"+a2a.NewID()[:8]
	hookURL := "http://" + b.hook.ln.Addr().String() + path
	cfg := &a2a.SendMessageConfiguration{ReturnImmediately: true, TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
		Url: hookURL, Token: token, Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: secret}}}
	res, resp := b.send(ctx, a2a.UserMessage("slow 300"), cfg, callOpts{})
	r := b.ac("B3.delivery").saw(res)
	skipRest := func(format string, args ...any) {
		for _, id := range ids[1:] {
			b.ac(id).skip(format, args...)
		}
	}
	if r.incomplete(res) {
		skipRest("no notification to look at")
		return
	}
	t := resp.GetTask()
	switch {
	case res.err.is(a2a.CodeInvalidParams):
		r.skip("the server refused the webhook URL %s (%s): an SSRF guard refusing loopback and private addresses, which §13.2 recommends; let the server allow this address to check delivery (parley serve --push-allow-private)", hookURL, describeError(res.err))
		skipRest("the webhook was refused")
		return
	case res.err.is(a2a.CodePushNotificationNotSupported):
		r.fail("the card declares pushNotifications, but the server refused the configuration: %s", describeError(res.err))
		skipRest("the webhook was refused")
		return
	case t == nil:
		r.skip("setting up: SendMessage with a push configuration returned no task (%s)", res.outcome())
		skipRest("no task")
		return
	}
	got := b.hook.wait(ctx, path, 4*time.Second, func(ns []notification) bool {
		for _, n := range ns {
			if sr, _, err := decodeNotification(n.Body); err == nil {
				if _, st := notificationTask(sr); a2a.IsTerminal(st) {
					return true
				}
			}
		}
		return false
	})
	if len(got) == 0 {
		r.skip("no notification arrived at %s within 4 s: the server may not deliver push notifications yet (or cannot reach this address); delivery is not graded", hookURL)
		skipRest("no notification arrived")
		return
	}
	var kinds []string
	terminal := false
	for _, n := range got {
		sr, _, err := decodeNotification(n.Body)
		if err != nil {
			kinds = append(kinds, "undecodable")
			continue
		}
		ev := &event{Resp: sr}
		kinds = append(kinds, ev.kind())
		if _, st := notificationTask(sr); a2a.IsTerminal(st) {
			terminal = true
		}
	}
	r.Received = fmt.Sprintf("%d POSTs to %s: %s", len(got), path, strings.Join(kinds, " "))
	if terminal {
		r.pass("%d notifications, the last state included: %s", len(got), strings.Join(kinds, " "))
	} else {
		r.pass("%d notifications (%s); the terminal state did not arrive within 4 s", len(got), strings.Join(kinds, " "))
	}

	r = b.ac("B3.body")
	r.Received = "first body: " + abridge(string(got[0].Body), 240)
	var bad []string
	for i, n := range got {
		sr, members, err := decodeNotification(n.Body)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("#%d is not a StreamResponse: %v", i, err))
		case members != 1:
			bad = append(bad, fmt.Sprintf("#%d has %d payload members", i, members))
		default:
			if id, _ := notificationTask(sr); id != t.GetId() {
				bad = append(bad, fmt.Sprintf("#%d names task %q, not %q", i, id, t.GetId()))
			}
			if v := a2a.CheckRequired(sr); len(v) > 0 {
				bad = append(bad, fmt.Sprintf("#%d: %s: %s", i, v[0].Field, v[0].Description))
			}
		}
	}
	if len(bad) > 0 {
		r.fail("%s", strings.Join(bad, "; "))
	} else {
		first := "the first is " + kinds[0]
		if strings.HasPrefix(kinds[0], "task(") {
			r.same()
		} else {
			r.differs("Parley sends a Task snapshot first")
		}
		r.pass("every body is one StreamResponse member for task %s; %s", t.GetId(), first)
	}

	r = b.ac("B3.authorization")
	want := "Bearer " + secret
	var wrong []string
	for i, n := range got {
		a := n.Header.Get("Authorization")
		scheme, cred, _ := strings.Cut(a, " ")
		if !strings.EqualFold(scheme, "Bearer") || cred != secret {
			wrong = append(wrong, fmt.Sprintf("#%d: %q", i, a))
		}
	}
	r.Received = "Authorization: " + got[0].Header.Get("Authorization")
	if len(wrong) > 0 {
		r.fail("want %q; got %s", want, strings.Join(wrong, ", "))
	} else {
		r.same().pass("Authorization: Bearer <the configured credentials> on every notification")
	}

	r = b.ac("B3.content-type")
	r.Received = "Content-Type: " + got[0].Header.Get("Content-Type")
	types := map[string]bool{}
	for _, n := range got {
		mt, _, _ := mime.ParseMediaType(n.Header.Get("Content-Type"))
		types[mt] = true
	}
	if len(types) == 1 && types["application/a2a+json"] {
		r.same().pass("application/a2a+json")
	} else {
		r.differs("Parley sends application/a2a+json").warn("%v", keys(types))
	}

	r = b.ac("B3.token")
	var carriers []string
	for _, h := range []string{"A2A-Notification-Token", "X-A2A-Notification-Token"} {
		if got[0].Header.Get(h) == token {
			carriers = append(carriers, h)
		}
	}
	if bytes.Contains(got[0].Body, []byte(token)) {
		carriers = append(carriers, "the body")
	}
	switch len(carriers) {
	case 0:
		r.differs("Parley sends it in A2A-Notification-Token and X-A2A-Notification-Token").na("the token was not found in the headers or the body")
	case 2:
		if carriers[1] == "X-A2A-Notification-Token" {
			r.same()
		}
		r.na("in %s", strings.Join(carriers, " and "))
	default:
		r.differs("Parley sends it in A2A-Notification-Token and X-A2A-Notification-Token").na("in %s", strings.Join(carriers, " and "))
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// equivalence compares, across the checked bindings, the outcome of the
// requests every binding made (§5.1).
func (s *session) equivalence(runs []*bindingRun) {
	r := s.cardCheck(Result{ID: "equivalence.bindings", Title: "every binding answers the same requests the same way",
		Level: "MUST", Section: "§5.1",
		Requires: "When an agent supports multiple protocols, all supported protocols MUST provide identical functionality, consistent behavior and the same error handling"})
	if len(runs) < 2 {
		r.na("one binding checked")
		return
	}
	var names []string
	for k := range runs[0].probes {
		names = append(names, k)
	}
	sort.Strings(names)
	var diffs, same []string
	for _, k := range names {
		vals := make([]string, len(runs))
		complete, differ := true, false
		for i, b := range runs {
			vals[i] = b.probes[k]
			if vals[i] == "" {
				complete = false
			}
			if vals[i] != vals[0] {
				differ = true
			}
		}
		if !complete {
			continue
		}
		if differ {
			var parts []string
			for i, b := range runs {
				parts = append(parts, b.t.binding+": "+vals[i])
			}
			diffs = append(diffs, k+" ("+strings.Join(parts, ", ")+")")
		} else {
			same = append(same, k)
		}
	}
	var bs []string
	for _, b := range runs {
		bs = append(bs, b.t.binding)
	}
	r.Sent = "the same requests on " + strings.Join(bs, " and ")
	r.Received = fmt.Sprintf("%d compared, %d alike", len(same)+len(diffs), len(same))
	if len(diffs) > 0 {
		r.fail("different answers to the same request: %s", strings.Join(diffs, "; "))
	} else {
		r.pass("%d requests answered alike", len(same))
	}
}

// ---------------------------------------------------------------------------
// JSON helpers used by the agent checks

// historyMember reports whether a Task's JSON has a history member.
func historyMember(raw json.RawMessage) bool {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	_, ok := o["history"]
	return ok
}

// artifactsMember reports whether any task of a ListTasksResponse's JSON
// has an artifacts member.
func artifactsMember(raw json.RawMessage) bool {
	var o struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	for _, t := range o.Tasks {
		if _, ok := t["artifacts"]; ok {
			return true
		}
	}
	return false
}

func msgEqual(a, b *a2a.Message) bool { return proto.Equal(a, b) }

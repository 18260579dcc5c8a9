package check

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// deliveryFamily is what the push delivery checks share: the webhook
// registered with a message, the task, and the notifications that arrived.
type deliveryFamily struct {
	*agentRun
	path, secret, token string // the webhook's path and the configured credentials and token
	task                *a2a.Task
	got                 []notification
	kinds               []string // the payload of each notification, for reports
	skip                string   // why the checks after B3.delivery cannot be graded, if so
}

// deliverySteps grade push delivery (B3) to the --webhook-addr receiver.
var deliverySteps = []step[*deliveryFamily]{
	agentStep("B3.delivery", (*deliveryFamily).delivery),
	agentStep("B3.body", (*deliveryFamily).body),
	agentStep("B3.authorization", (*deliveryFamily).authorization),
	agentStep("B3.content-type", (*deliveryFamily).contentType),
	agentStep("B3.token", (*deliveryFamily).tokenCarrier),
}

// deliveryChecks runs deliverySteps when Run has a webhook receiver.
func (a *agentRun) deliveryChecks(ctx context.Context) {
	if a.hook == nil {
		endAll(a.bindingRun, deliverySteps, Skip, "no --webhook-addr given: push delivery is not checked")
		return
	}
	f := &deliveryFamily{agentRun: a, path: "/parley-check/" + a2a.NewID(),
		secret: "parley-check-secret-" + nonce(), token: "parley-check-token-" + nonce()}
	runSteps(ctx, a.bindingRun, f, deliverySteps)
}

// ready ends r as skipped when B3.delivery had nothing to grade.
func (f *deliveryFamily) ready(r *rec) bool {
	if f.skip != "" {
		r.skip("%s", f.skip)
		return false
	}
	return true
}

// delivery sends 0.3 s of work with a push configuration for the
// receiver and waits up to 4 s for the notifications up to a terminal
// state.
func (f *deliveryFamily) delivery(ctx context.Context, r *rec) {
	hookURL := "http://" + f.hook.ln.Addr().String() + f.path
	cfg := &a2a.SendMessageConfiguration{ReturnImmediately: true, TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
		Url: hookURL, Token: f.token, Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: f.secret}}}
	res, resp := f.send(ctx, f.msg("slow 300"), cfg, callOpts{})
	f.task = resp.GetTask()
	switch {
	case !r.gradable(res):
		f.skip = "no notification to look at"
	case res.err.is(a2a.CodeInvalidParams):
		r.skip("the server refused the webhook URL %s (%s): an SSRF guard refusing loopback and private addresses, which §13.2 recommends; let the server allow this address to check delivery (parley serve --push-allow-private)", hookURL, describeError(res.err))
		f.skip = "the webhook was refused"
	case res.err.is(a2a.CodePushNotificationNotSupported):
		r.fail("the card declares pushNotifications, but the server refused the configuration: %s", describeError(res.err))
		f.skip = "the webhook was refused"
	case f.task == nil:
		r.skip("setting up: SendMessage with a push configuration returned no task (%s)", res.outcome())
		f.skip = "no task"
	}
	if f.skip != "" {
		return
	}
	f.got = f.hook.wait(ctx, f.path, 4*time.Second, func(ns []notification) bool {
		return slices.ContainsFunc(ns, func(n notification) bool { return n.terminal() })
	})
	if len(f.got) == 0 {
		r.skip("no notification arrived at %s within 4 s: the server may not deliver push notifications yet (or cannot reach this address); delivery is not graded", hookURL)
		f.skip = "no notification arrived"
		return
	}
	terminal := false
	for _, n := range f.got {
		sr, _, err := decodeNotification(n.Body)
		if err != nil {
			f.kinds = append(f.kinds, "undecodable")
			continue
		}
		f.kinds = append(f.kinds, (&event{Resp: sr}).kind())
		terminal = terminal || n.terminal()
	}
	kinds := strings.Join(f.kinds, " ")
	r.Received = fmt.Sprintf("%d POSTs to %s: %s", len(f.got), f.path, kinds)
	if terminal {
		r.pass("%d notifications, the last state included: %s", len(f.got), kinds)
	} else {
		r.pass("%d notifications (%s); the terminal state did not arrive within 4 s", len(f.got), kinds)
	}
}

// body grades every notification body: one StreamResponse member, for
// the task.
func (f *deliveryFamily) body(_ context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	r.Received = "first body: " + abridge(string(f.got[0].Body), 240)
	var bad []string
	for i, n := range f.got {
		sr, members, err := decodeNotification(n.Body)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("#%d is not a StreamResponse: %v", i, err))
		case members != 1:
			bad = append(bad, fmt.Sprintf("#%d has %d payload members", i, members))
		default:
			if id, _ := notificationTask(sr); id != f.task.GetId() {
				bad = append(bad, fmt.Sprintf("#%d names task %q, not %q", i, id, f.task.GetId()))
			}
			if miss := firstMissing(sr); miss != "" {
				bad = append(bad, fmt.Sprintf("#%d: %s", i, miss))
			}
		}
	}
	if len(bad) > 0 {
		r.fail("%s", strings.Join(bad, "; "))
		return
	}
	if strings.HasPrefix(f.kinds[0], "task(") {
		r.same()
	} else {
		r.differs("Parley sends a Task snapshot first")
	}
	r.pass("every body is one StreamResponse member for task %s; the first is %s", f.task.GetId(), f.kinds[0])
}

func (f *deliveryFamily) authorization(_ context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	var wrong []string
	for i, n := range f.got {
		a := n.Header.Get("Authorization")
		scheme, cred, _ := strings.Cut(a, " ")
		if !strings.EqualFold(scheme, "Bearer") || cred != f.secret {
			wrong = append(wrong, fmt.Sprintf("#%d: %q", i, a))
		}
	}
	r.Received = "Authorization: " + f.got[0].Header.Get("Authorization")
	if len(wrong) > 0 {
		r.fail("want %q; got %s", "Bearer "+f.secret, strings.Join(wrong, ", "))
	} else {
		r.same().pass("Authorization: Bearer <the configured credentials> on every notification")
	}
}

func (f *deliveryFamily) contentType(_ context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	r.Received = "Content-Type: " + f.got[0].Header.Get("Content-Type")
	types := map[string]bool{}
	for _, n := range f.got {
		mt, _, _ := mime.ParseMediaType(n.Header.Get("Content-Type"))
		types[mt] = true
	}
	if len(types) == 1 && types["application/a2a+json"] {
		r.same().pass("application/a2a+json")
	} else {
		r.differs("Parley sends application/a2a+json").warn("%v", slices.Sorted(maps.Keys(types)))
	}
}

// tokenCarrier looks for the configured token in the first
// notification's headers and body.
func (f *deliveryFamily) tokenCarrier(_ context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	first := f.got[0]
	var carriers []string
	for _, h := range []string{"A2A-Notification-Token", "X-A2A-Notification-Token"} {
		if first.Header.Get(h) == f.token {
			carriers = append(carriers, h)
		}
	}
	if bytes.Contains(first.Body, []byte(f.token)) {
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

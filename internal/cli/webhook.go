package cli

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// webhookSynopsis is the usage line and the notes of `parley webhook -h`.
const webhookSynopsis = `webhook [flags]

Listens on --addr and prints every push notification POSTed to it (any
path), one line each; --auth and --token make it check what the agent sends.
Register it with parley push create URL TASK_ID --url http://ADDR/hook; a
server refuses webhooks on loopback and private addresses unless it runs
with --push-allow-private.`

// webhook runs `parley webhook`: a push notification receiver for
// developers. It prints every notification it accepts, one per line.
func webhook(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley webhook", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9000", "listen address `HOST:PORT` (port 0 picks a free one)")
	auth := fs.String("auth", "", "require this Authorization `VALUE`, e.g. \"Bearer xyz\" (401 otherwise)")
	token := fs.String("token", "", "require this notification `TOKEN` in A2A-Notification-Token or X-A2A-Notification-Token (401 otherwise)")
	authFile := fs.String("auth-file", "", "like --auth, with the `VALUE` read from a file")
	tokenFile := fs.String("token-file", "", "like --token, with the `TOKEN` read from a file")
	asJSON := fs.Bool("json", false, "print each notification as one line of JSON (the body as received, compacted)")
	failFirst := fs.Int("fail-first", 0, "answer 500 to the first `N` deliveries, to exercise the sender's retries")
	if err := parseCommandFlags(fs, args, "webhook", webhookSynopsis, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *failFirst < 0 {
		return usageError{errors.New("--fail-first must not be negative")}
	}
	warn := func(w string) { fmt.Fprintln(stderr, "parley webhook: warning: "+w) }
	var err error
	if *auth, err = valueOrFile("auth", *auth, *authFile, warn); err != nil {
		return err
	}
	if *token, err = valueOrFile("token", *token, *tokenFile, warn); err != nil {
		return err
	}
	ln, err := listen("--addr", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	wh := &webhookReceiver{auth: *auth, token: *token, json: *asJSON, failFirst: *failFirst, out: stdout, errs: stderr}
	hs := &http.Server{Handler: wh, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	fmt.Fprintf(stdout, "Listening for push notifications on http://%s/ (any path)\n", ln.Addr())
	if *auth == "" && *token == "" {
		fmt.Fprintln(stderr, "parley webhook: no --auth or --token given: every notification is accepted")
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shut)
}

// webhookReceiver is the handler of `parley webhook`.
type webhookReceiver struct {
	auth, token string
	json        bool
	failFirst   int

	mu         sync.Mutex // serializes output and the delivery count
	out, errs  io.Writer
	deliveries int
}

// ServeHTTP checks and prints one notification: 204 when it was accepted.
func (rc *webhookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "push notifications are POSTed", http.StatusMethodNotAllowed)
		return
	}
	if why := rc.check(r.Header); why != "" {
		rc.logf("%s rejected (401): %s", r.RemoteAddr, why)
		http.Error(w, why, http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.deliveries++
	n := rc.deliveries
	rc.mu.Unlock()
	if n <= rc.failFirst {
		rc.logf("delivery %d answered 500 (--fail-first %d)", n, rc.failFirst)
		http.Error(w, "failing on purpose (--fail-first)", http.StatusInternalServerError)
		return
	}
	ev := new(a2a.StreamResponse)
	if err := a2a.Unmarshal(body, ev); err != nil {
		rc.logf("delivery %d is not a StreamResponse (400): %v", n, err)
		http.Error(w, "not a StreamResponse: "+err.Error(), http.StatusBadRequest)
		return
	}
	var line string
	if rc.json {
		var b bytes.Buffer
		if err := json.Compact(&b, body); err != nil {
			line = string(body)
		} else {
			line = b.String()
		}
	} else {
		line = time.Now().Format("15:04:05.000") + " " + describeNotification(ev)
	}
	rc.mu.Lock()
	fmt.Fprintln(rc.out, line)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// check returns why the headers fail the -auth and -token requirements,
// or "" when they pass.
func (rc *webhookReceiver) check(h http.Header) string {
	if rc.auth != "" {
		got := h.Get("Authorization")
		wantScheme, wantCred, _ := strings.Cut(rc.auth, " ")
		gotScheme, gotCred, _ := strings.Cut(got, " ")
		if got == "" {
			return "no Authorization header"
		}
		// The scheme is case-insensitive (RFC 9110); the credentials are not.
		if !strings.EqualFold(wantScheme, gotScheme) || subtle.ConstantTimeCompare([]byte(wantCred), []byte(gotCred)) != 1 {
			return "wrong Authorization"
		}
	}
	if rc.token != "" {
		got := h.Get("A2A-Notification-Token")
		if got == "" {
			got = h.Get("X-A2A-Notification-Token")
		}
		if got == "" {
			return "no A2A-Notification-Token header"
		}
		if subtle.ConstantTimeCompare([]byte(rc.token), []byte(got)) != 1 {
			return "wrong notification token"
		}
	}
	return ""
}

// logf writes a line about a delivery on stderr.
func (rc *webhookReceiver) logf(format string, args ...any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fmt.Fprintf(rc.errs, "parley webhook: "+format+"\n", args...)
}

// describeNotification renders a notification on one line.
func describeNotification(ev *a2a.StreamResponse) string {
	switch {
	case ev.GetTask() != nil:
		t := ev.GetTask()
		s := fmt.Sprintf("task %s %s (context %s, %s, %s)", t.Id, stateName(t.GetStatus().GetState()),
			t.ContextId, plural(len(t.History), "message"), plural(len(t.Artifacts), "artifact"))
		if m := t.GetStatus().GetMessage(); m != nil {
			s += ": " + quoteLine(a2a.JoinText(m.GetParts()))
		}
		return s
	case ev.GetStatusUpdate() != nil:
		u := ev.GetStatusUpdate()
		s := fmt.Sprintf("status %s %s", u.TaskId, stateName(u.GetStatus().GetState()))
		if m := u.GetStatus().GetMessage(); m != nil {
			s += ": " + quoteLine(a2a.JoinText(m.GetParts()))
		}
		return s
	case ev.GetArtifactUpdate() != nil:
		u := ev.GetArtifactUpdate()
		a := u.GetArtifact()
		s := fmt.Sprintf("artifact %s %s", u.TaskId, a.GetArtifactId())
		if a.GetName() != "" {
			s += " (" + a.GetName() + ")"
		}
		if u.Append {
			s += " append"
		}
		if u.LastChunk {
			s += " last-chunk"
		}
		s += ": " + plural(len(a.GetParts()), "part")
		if txt := a2a.JoinText(a.GetParts()); txt != "" {
			s += " " + quoteLine(txt)
		}
		return s
	case ev.GetMessage() != nil:
		m := ev.GetMessage()
		return fmt.Sprintf("message %s: %s", m.MessageId, quoteLine(a2a.JoinText(m.GetParts())))
	}
	return "empty notification"
}

// quoteLine quotes a text for one line, shortened to 200 characters.
func quoteLine(s string) string {
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return strconv.Quote(s)
}

// plural writes n and noun, with an "s" unless n is one: "1 message",
// "0 messages", "2 messages".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

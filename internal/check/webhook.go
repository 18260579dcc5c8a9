package check

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// webhook is the local receiver of push notifications.
type webhook struct {
	ln  net.Listener
	srv *http.Server

	mu    sync.Mutex
	byKey map[string][]notification // by URL path
	cond  chan struct{}             // closed and replaced on every arrival
}

// notification is one POST the receiver got.
type notification struct {
	Header http.Header
	Body   []byte
}

// startWebhook listens on addr for notifications.
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

// close stops the receiver.
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

// terminal reports whether the notification carries a terminal state.
func (n notification) terminal() bool {
	sr, _, err := decodeNotification(n.Body)
	if err != nil {
		return false
	}
	_, st := notificationTask(sr)
	return a2a.IsTerminal(st)
}

package inspect

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// maxNotification bounds one push notification the receiver keeps.
const maxNotification = 4 << 20

// Notification is one push notification the receiver got.
type Notification struct {
	Seq     int         `json:"seq"`
	At      string      `json:"at"`
	Headers http.Header `json:"headers"`
	Body    string      `json:"body"`
	Valid   bool        `json:"valid"`             // a StreamResponse, in ProtoJSON
	Problem string      `json:"problem,omitempty"` // why it is not
	TaskID  string      `json:"taskId,omitempty"`
	Kind    string      `json:"kind,omitempty"`
	State   string      `json:"state,omitempty"`
}

// inbox keeps the last notifications.
type inbox struct {
	mu   sync.Mutex
	max  int
	seq  int
	list []Notification
}

func newInbox(max int) *inbox { return &inbox{max: max} }

// add keeps n, numbering it, and forgets the oldest beyond max.
func (in *inbox) add(n Notification) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.seq++
	n.Seq = in.seq
	in.list = append(in.list, n)
	if len(in.list) > in.max {
		in.list = in.list[len(in.list)-in.max:]
	}
}

// after returns the notifications numbered above seq.
func (in *inbox) after(seq int) []Notification {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := []Notification{}
	for _, n := range in.list {
		if n.Seq > seq {
			out = append(out, n)
		}
	}
	return out
}

// receivePush is the push receiver: it keeps whatever arrives at its
// secret path, says whether it is a valid StreamResponse, and answers 200.
func (s *Server) receivePush(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") != s.pushID {
		http.NotFound(w, r)
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxNotification+1))
	if err != nil {
		http.Error(w, "could not read the body", http.StatusBadRequest)
		return
	}
	n := Notification{At: time.Now().Format("15:04:05.000"), Headers: redact(r.Header), Body: string(b[:min(len(b), maxNotification)])}
	sr := &a2a.StreamResponse{}
	switch err := a2a.Unmarshal(b, sr); {
	case len(b) > maxNotification:
		n.Problem = "the body is larger than " + strconv.Itoa(maxNotification) + " bytes"
	case err != nil:
		n.Problem = err.Error()
	case a2a.StreamEvent{Response: sr}.Kind() == a2a.EventNone:
		n.Problem = "not a StreamResponse: it has no task, message, statusUpdate or artifactUpdate"
	case len(a2a.CheckRequired(sr)) > 0:
		n.Problem = "a REQUIRED member is missing: " + a2a.JoinViolations(a2a.CheckRequired(sr))
	default:
		ev := a2a.StreamEvent{Response: sr}
		n.Valid, n.TaskID, n.Kind = true, ev.TaskID(), string(ev.Kind())
		if st := ev.State(); st != a2a.TaskState_TASK_STATE_UNSPECIFIED {
			n.State = st.String()
		}
	}
	s.inbox.add(n)
	w.WriteHeader(http.StatusOK)
}

// pushList returns the notifications after ?after=SEQ.
func (s *Server) pushList(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	writeJSON(w, http.StatusOK, map[string]any{"notifications": s.inbox.after(after)})
}

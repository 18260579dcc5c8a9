package interop_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// jsSDK03Version is the v0.3 release of the JS SDK, installed under the
// npm alias a2a-sdk-03 (internal/interop/js/package.json).
const jsSDK03Version = "0.3.14"

// checkSDK03Installed skips (or fails in CI) without the aliased v0.3 SDK.
func checkSDK03Installed(t *testing.T, dir string) {
	t.Helper()
	if why := testkit.MissingNode(dir, "a2a-sdk-03"); why != "" {
		testenv.SkipOrFailInCI(t, why)
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "a2a-sdk-03", "package.json"))
	var pkg struct{ Version string }
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != jsSDK03Version {
		t.Fatalf("a2a-sdk-03 is %q (%v), want %s: run `%s` in the module root", pkg.Version, err, jsSDK03Version, testkit.NPMInstall)
	}
}

// webhook records what push notifications bring.
type webhook struct {
	mu    sync.Mutex
	posts []pushPost
}

type pushPost struct {
	header http.Header
	body   []byte
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.posts = append(w.posts, pushPost{r.Header.Clone(), b})
	w.mu.Unlock()
}

// forTask returns the posts about a task, waiting up to 10 s for one whose
// task is completed.
func (w *webhook) forTask(t *testing.T, id string) []map[string]any {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []map[string]any
		completed := false
		w.mu.Lock()
		for _, p := range w.posts {
			var m map[string]any
			if json.Unmarshal(p.body, &m) == nil && m["id"] == id {
				if p.header.Get("Content-Type") != "application/json" || p.header.Get("X-A2A-Notification-Token") != "push-token" {
					t.Errorf("push headers: %v", p.header)
				}
				out = append(out, m)
				if st, _ := m["status"].(map[string]any); st["state"] == "completed" {
					completed = true
				}
			}
		}
		w.mu.Unlock()
		if completed || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestJSClient03Interop runs the official JS SDK's v0.3 client
// (internal/interop/js/client03_check.mjs) against `parley serve`, once per
// binding (JSON-RPC, HTTP+JSON and gRPC): card, send, stream, get,
// cancel, resubscribe, push config set/get/list/delete and errors. A push config it registers receives
// v0.3 payloads (the Task object, kind "task"), and Parley's v1.0 client
// reads the task the v0.3 client created. Once as Parley serves by
// default and once with the A2A 1.1 preview on, whose 1.1 interfaces a
// v0.3 reader of the card must not be led to.
func TestJSClient03Interop(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir)
	checkSDK03Installed(t, dir)
	hook := &webhook{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	for _, round := range rounds(t, "--push-allow-private") {
		base := round.base
		for _, binding := range []string{"JSONRPC", "HTTP+JSON", "GRPC"} {
			t.Run(round.name+"/"+binding, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, "client03_check.mjs", base, binding, hs.URL+"/hook")
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("node client03_check.mjs %s %s failed (%v):\n%s", base, binding, err, out)
				}
				t.Logf("node client03_check.mjs %s %s:\n%s", base, binding, out)
				_, after, ok := strings.Cut(string(out), "TASK ")
				if !ok {
					t.Fatal("the script named no task")
				}
				id := strings.TrimSpace(strings.SplitN(after, "\n", 2)[0])
				posts := hook.forTask(t, id)
				if len(posts) == 0 {
					t.Fatalf("no v0.3 push notification for task %s", id)
				}
				for _, p := range posts {
					if p["kind"] != "task" {
						t.Errorf("push payload is not a v0.3 Task: %v", p)
					}
				}
				// The same task through Parley's v1.0 client, which sees no
				// generation (a 1.1 member) with the preview on or off.
				c := parleyClient(t, ctx, base)
				task, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
				if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || task.GetGeneration() != 0 || c.Interface().GetProtocolVersion() != "1.0" {
					t.Errorf("v1.0 GetTask of the v0.3 task over %s: %v, %v", c.Interface().GetProtocolVersion(), task, err)
				}
			})
		}
	}
}

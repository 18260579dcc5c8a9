package cli_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestStreamInterrupted: Ctrl-C during a streaming command (send --stream,
// task subscribe) says that the task goes on at the agent and how to
// follow or cancel it, and exits 130.
func TestStreamInterrupted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"name":"slowpoke","description":"d","version":"1","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],
				"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
				"supportedInterfaces":[{"url":"` + base + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`))
		case "/message:stream", "/tasks/t-7:subscribe":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"task\":{\"id\":\"t-7\",\"contextId\":\"c-7\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the task never ends
		default:
			http.NotFound(w, r)
		}
	})
	srv.Start()
	defer srv.Close()

	for _, args := range [][]string{{"send", srv.URL, "hello", "--stream"}, {"task", "subscribe", srv.URL, "t-7"}} {
		cmd := exec.Command(testkit.ParleyBinary(t), args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley " + args[0], KillAtCleanup: true})
		if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "t-7") }, 15*time.Second); err != nil {
			t.Fatalf("parley %v: no event shown: %v", args, err)
		}
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		var ee *exec.ExitError
		if err := p.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("parley %v after Ctrl-C: %v, want exit status 130\n%s", args, err, p.Stderr())
		}
		contains(t, "stderr", p.Stderr(), "interrupted: task t-7 goes on at the agent (last state WORKING)",
			"parley task subscribe "+srv.URL+" t-7", "parley task cancel "+srv.URL+" t-7")
	}
}

// TestURLWithoutScheme: for the client commands a bare host is an Agent
// Card reference (A2A CLI SPEC §7.2): a loopback one is reached over http;
// check and load, which take URLs only, suggest the URL meant, exit 2.
func TestURLWithoutScheme(t *testing.T) {
	t.Parallel()
	dead := testkit.FreeAddr(t)
	for _, args := range [][]string{{"card", dead}, {"send", dead, "hi"}, {"task", "list", dead}} {
		_, errs := mustRun(t, 3, args...)
		contains(t, strings.Join(args, " "), errs, "cannot connect to http://"+dead+"/")
	}
	for _, args := range [][]string{{"check", "127.0.0.1:9"}, {"load", "127.0.0.1:9"}} {
		_, errs := mustRun(t, 2, args...)
		contains(t, strings.Join(args, " "), errs, "127.0.0.1:9 is not a URL: did you mean http://127.0.0.1:9?")
	}
}

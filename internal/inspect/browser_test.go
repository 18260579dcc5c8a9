package inspect_test

// The inspector in a real browser: Debian's chromium, headless, driven by
// chromedp, against a `parley serve` running the conformance agent with
// push delivery on.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley.dev/parley/internal/inspect"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// chromium returns the browser's path, skipping the test (failing it
// under CI=true) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipOrFailInCI(t, "no chromium on PATH: install it (Debian: apt-get install -y chromium) to run the inspector's browser test")
	return ""
}

// browser starts a headless chromium with a fresh profile and returns a
// context driving one tab. It is closed when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// screenshotOnFailure saves the page as a PNG when the test has failed:
// in $PARLEY_TEST_ARTIFACTS, or the system's temporary directory.
func screenshotOnFailure(t *testing.T, ctx context.Context) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dir := os.Getenv("PARLEY_TEST_ARTIFACTS")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "parley-test-artifacts")
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)) // quality 100: a PNG
		if err != nil {
			t.Logf("no screenshot: %v", err)
			return
		}
		file := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if err := os.WriteFile(file, png, 0o644); err == nil {
				t.Logf("screenshot of the page: %s", file)
			}
		}
	})
}

// serveAgent runs `parley serve` with the conformance agent, delivering
// push notifications to loopback addresses, and returns its base URL.
func serveAgent(t *testing.T) string {
	t.Helper()
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), "serve", "--agent", "conformance", "--store", "memory", "--push-allow-private", "--addr", addr,
		"--protocol-versions", "1.1,1.0,0.3") // the task page shows an A2A 1.1 task's timeline
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}
	return "http://" + addr
}

// startInspector serves the inspector for target and returns its page URL.
func startInspector(t *testing.T, target string) string {
	t.Helper()
	ln, err := inspect.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := inspect.New(inspect.Options{Target: target, Logger: testkit.DiscardLogger})
	go s.Serve(ln)
	return s.PageURL(ln)
}

// waitText waits until the text of the element sel contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	w, _ := json.Marshal(want)
	expr := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.textContent.includes(%s); })()`, q, w)
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := poll(ctx, t); err != nil {
			return fmt.Errorf("waiting for %s to contain %q: %w", sel, want, err)
		}
		return nil
	})
}

// click clicks the element sel.
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// step runs actions with a deadline, failing the test with what.
func step(t *testing.T, ctx context.Context, what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	began := time.Now()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Logf("%s: %v", what, time.Since(began).Round(time.Millisecond))
}

// TestInspectorInBrowser: load a card, send a streamed message with push,
// watch it complete, open the task, see the raw traffic and the push
// notifications, and run parley check.
func TestInspectorInBrowser(t *testing.T) {
	ctx := browser(t)
	screenshotOnFailure(t, ctx)
	agent := serveAgent(t)
	page := startInspector(t, agent)

	step(t, ctx, "load the card", 20*time.Second,
		chromedp.Navigate(page),
		waitText("#card-name", "Parley conformance agent"),
		waitText("#card-checks", "card.required"),
		waitText("#card-counts", "0 MUST failed"),
		waitText("#card-interfaces", "GRPC"),
		waitText("#card-skills", "Echo"))

	step(t, ctx, "send a streamed message", 20*time.Second,
		click(`#tabs button[data-tab="send"]`),
		chromedp.SetValue(chromedp.CSS("#text"), "stream 3"),
		click("#use-push"),
		click("#send"),
		waitText("#task-state", "COMPLETED"),
		waitText(`#artifacts [data-artifact="stream"]`, "chunk 0chunk 1chunk 2"),
		waitText(`#artifacts [data-artifact="stream"]`, "complete"),
		waitText("#timeline", "WORKING"))

	step(t, ctx, "open the task", 20*time.Second,
		click(`#tabs button[data-tab="tasks"]`),
		click("#tasks-search"),
		chromedp.WaitVisible(chromedp.CSS("#tasks-table tr[data-task]")),
		click("#tasks-table tr[data-task]"),
		waitText("#task-detail", "stream 3"),
		waitText("#task-detail", "COMPLETED"),
		// The 1.1 timeline beside the artifacts, by generation: the
		// message at 1, the artifact where it started.
		waitText("#task-timeline", "user stream 3"),
		waitText("#task-timeline", "artifact stream"))
	order := evaluate[string](t, ctx, `[...document.querySelectorAll('#task-timeline li')].map((li) => li.dataset.generation).join(',')`)
	gens := strings.Split(order, ",")
	for i := 1; i < len(gens); i++ {
		a, _ := strconv.Atoi(gens[i-1])
		b, _ := strconv.Atoi(gens[i])
		if b < a || a < 1 {
			t.Fatalf("the task page's timeline is not in generation order: %s", order)
		}
	}

	step(t, ctx, "see the raw traffic", 10*time.Second,
		click(`#tabs button[data-tab="traffic"]`),
		waitText("#traffic", "SendStreamingMessage"),
		waitText("#traffic", "agent-card.json"))
	frames := evaluate[int](t, ctx, `document.querySelectorAll('#traffic pre.frame').length`)
	if frames < 5 {
		t.Fatalf("the traffic shows %d SSE frames, want the stream's five events", frames)
	}

	step(t, ctx, "see the push notifications", 20*time.Second,
		click(`#tabs button[data-tab="push"]`),
		waitText("#push-list", "COMPLETED"),
		waitText("#push-list", "artifactUpdate"))

	step(t, ctx, "run parley check", 2*time.Minute,
		click(`#tabs button[data-tab="check"]`),
		click("#check-run"),
		waitText("#check-status", "done: no MUST failed"),
		waitText("#check-results", "B1"))
}

// TestInspectorNarrowWindow: in a phone-sized window the page has no
// horizontal scroll and the composer sits above the timeline.
func TestInspectorNarrowWindow(t *testing.T) {
	ctx := browser(t)
	screenshotOnFailure(t, ctx)
	page := startInspector(t, serveAgent(t))
	step(t, ctx, "narrow window", 20*time.Second,
		chromedp.EmulateViewport(400, 800),
		chromedp.Navigate(page),
		waitText("#card-name", "Parley conformance agent"),
		click(`#tabs button[data-tab="send"]`))
	overflow := evaluate[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`)
	composerBottom := evaluate[float64](t, ctx, `document.getElementById('composer').getBoundingClientRect().bottom`)
	timelineTop := evaluate[float64](t, ctx, `document.getElementById('timeline').getBoundingClientRect().top`)
	if overflow {
		t.Error("the page scrolls sideways in a 400 px window")
	}
	if timelineTop < composerBottom {
		t.Errorf("timeline top %v above composer bottom %v: want one column", timelineTop, composerBottom)
	}
}

// evaluate returns the value of a JavaScript expression in the page.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// TestInspectorOneTimeCodeInBrowser: the page trades the code of its URL
// for a cookie the page's script cannot read, drops the code from the
// address bar, and works again on reload by the cookie alone; the same
// URL opened in another browser (the code already used) is refused.
func TestInspectorOneTimeCodeInBrowser(t *testing.T) {
	ctx := browser(t)
	screenshotOnFailure(t, ctx)
	page := startInspector(t, serveAgent(t))
	step(t, ctx, "open the page", 20*time.Second,
		chromedp.Navigate(page),
		waitText("#card-name", "Parley conformance agent"))
	if c := evaluate[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("the page's script reads the cookie %q: want it HttpOnly", c)
	}
	if href := evaluate[string](t, ctx, `location.href`); strings.Contains(href, "code=") {
		t.Errorf("the code stays in the address bar: %s", href)
	}
	step(t, ctx, "reload: the cookie alone lets the page in", 20*time.Second,
		chromedp.Reload(),
		waitText("#card-name", "Parley conformance agent"))

	other := browser(t)
	screenshotOnFailure(t, other)
	step(t, other, "the used code in another browser", 20*time.Second,
		chromedp.Navigate(page),
		waitText("#status", "refused"))
}

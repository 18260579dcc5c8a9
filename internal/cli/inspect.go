package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"runtime"

	"parley.dev/parley/internal/inspect"
)

// inspectSynopsis is the usage line and the notes of `parley inspect -h`.
const inspectSynopsis = `inspect [URL] [flags]

Starts the inspector, a web page on this machine for looking at an A2A
agent: its card and the card's checks, a message composer (text, files,
data; any binding; a bearer token and headers), a live timeline of
events with artifacts reassembled, the task list, the raw HTTP traffic of
every call, a receiver for push notifications, and parley check's report.
The page listens on 127.0.0.1 only, on a free port unless --addr says
otherwise. Its URL (printed on standard output, and opened in the
browser unless --no-open) carries a one-time code, which the page trades
on first use for a session cookie: the code then works no more (run
parley inspect again for a new one). Everything the page needs is in this binary:
it fetches nothing from the internet. Ctrl-C stops it.`

// inspectCmd runs `parley inspect`.
func inspectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley inspect", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback `HOST:PORT` to listen on (port 0: a free one)")
	noOpen := fs.Bool("no-open", false, "only print the page's URL; do not open a browser")
	if err := parseCommandFlags(fs, args, "inspect", inspectSynopsis, stdout); err != nil {
		return err
	}
	target := ""
	if fs.NArg() > 0 { // flags may follow the URL
		target = fs.Arg(0)
		if err := parseCommandFlags(fs, fs.Args()[1:], "inspect", inspectSynopsis, stdout); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
		}
		if err := checkAgentURL(target); err != nil {
			return err
		}
	}
	ln, err := inspect.Listen(*addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr %s: %v", *addr, err)}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s := inspect.New(inspect.Options{Target: target, Logger: log})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	page := s.PageURL(ln)
	fmt.Fprintf(stdout, "Parley inspector: %s\n", page)
	if !*noOpen {
		if err := openBrowser(page); err != nil {
			fmt.Fprintf(stdout, "(no browser could be opened: %v; open the URL yourself)\n", err)
		}
	}
	fmt.Fprintln(stdout, "Ctrl-C stops it.")
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		ln.Close()
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
}

// openBrowser asks the desktop to open url in the user's browser, without
// waiting for it.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reap it
	return nil
}

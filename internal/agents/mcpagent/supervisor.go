package mcpagent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the MCP revision Parley asks the server for: the
// latest stable one, whose tool calls carry elicitation as a request
// from the server, progress by token and cancellation by notification.
// The SDK's newer draft (2026-07-28, stateless) is not asked for: a
// server may still answer with an older revision it supports.
const protocolVersion = "2025-11-25"

// conn is one MCP session with the server: one run of the child over
// stdio, or one session over streamable HTTP.
type conn struct {
	sess  *mcp.ClientSession
	tools *toolSet
	dead  chan struct{} // closed once the session ended
	cause error         // why it ended; set before dead is closed
	hung  error         // set, under supervisor.mu, when keepAlive closed it
}

// errHung is the cause of the calls stopped, and of the session closed,
// when the server is taken for hung.
var errHung = errors.New("the MCP server stopped answering")

// errTooLarge is why a session over stdio ended when the server sent a
// message larger than the MCP SDK reads (mcp.DefaultMaxLineLength, 16
// MiB, for a child: its CommandTransport has no setting): the rest of the
// line cannot be skipped, so the SDK closes the session, and the child is
// stopped and started again.
var errTooLarge = fmt.Errorf("the MCP server sent a message larger than %d MiB, the most one MCP message over stdio may be (its session was closed, and the server is started again)", mcp.DefaultMaxLineLength>>20)

// tooLarge reports whether err is the SDK's refusal of a message over its
// line limit. The SDK does not export that error; its text is matched,
// and TestMCPAgentResultTooLarge fails if it changes.
func tooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "exceeded the configured maximum line length")
}

// keepAliveMisses is how many pings in a row a server may miss before it
// is taken for hung (MCP 2025-11-25, ping: "multiple failed pings MAY
// trigger a connection reset").
const keepAliveMisses = 3

// keepAlive pings the server of c every Options.KeepAlive until the
// session ends. When keepAliveMisses pings in a row get no answer, the
// server is taken for hung: the calls on the session are stopped (closing
// an MCP session waits for its requests in flight), and the session is
// closed, which stops the child. A server that does not know ping is not
// pinged again.
func (s *supervisor) keepAlive(c *conn) {
	every := s.o.KeepAlive
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for missed := 0; ; {
		select {
		case <-c.dead:
			return
		case <-s.stop.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.stop, every/2)
		err := c.sess.Ping(ctx, nil)
		cancel()
		var je *jsonrpc.Error
		switch {
		case err == nil:
			missed = 0
			continue
		case errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound, s.stop.Err() != nil, c.ended() != nil:
			return
		}
		if missed++; missed < keepAliveMisses {
			continue
		}
		cause := fmt.Errorf("%w: it answered none of %d pings in a row (%v)", errHung, missed, err)
		s.log.Warn("the MCP server is taken for hung; stopping it", "cause", cause)
		s.mu.Lock()
		c.hung = cause
		s.unset(c) // no new call on it
		s.mu.Unlock()
		s.hung(c, cause)
		_ = c.sess.Close()
		return
	}
}

// ended reports why the session ended, nil while it is up.
func (c *conn) ended() error {
	select {
	case <-c.dead:
		return c.cause
	default:
		return nil
	}
}

// supervisor keeps one session with the MCP server up: it starts the
// child (or opens the HTTP session), and starts it again, with a growing
// pause, when it ends, until Close.
type supervisor struct {
	o      Options
	client *mcp.Client
	log    *slog.Logger

	hung func(*conn, error) // stops the calls on a session taken for hung

	mu    sync.Mutex
	cur   *conn
	up    chan struct{} // closed when cur is a live session
	stop  context.Context
	close context.CancelFunc
	done  chan struct{} // closed when the loop has ended
}

// Restart pauses: the first restart waits minBackoff, each failed start
// doubles it, up to maxBackoff; a session that lived stableAfter starts
// the count again.
const (
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = 10 * time.Second
	stableAfter = 30 * time.Second
)

// start connects once (an error here is the server's start failing) and
// then supervises the session in the background. It returns the first
// session.
func (s *supervisor) start(ctx context.Context) (*conn, error) {
	s.stop, s.close = context.WithCancel(context.Background())
	s.up, s.done = make(chan struct{}), make(chan struct{})
	c, err := s.connect(ctx)
	if err != nil {
		s.close()
		close(s.done)
		return nil, err
	}
	s.set(c)
	go s.loop(c)
	return c, nil
}

// loop waits for each session to end and starts the next one.
func (s *supervisor) loop(c *conn) {
	defer close(s.done)
	backoff := minBackoff
	for {
		began := time.Now()
		go s.keepAlive(c)
		s.await(c)
		if s.stop.Err() != nil {
			return
		}
		if time.Since(began) > stableAfter {
			backoff = minBackoff
		}
		s.log.Warn("the MCP server stopped; starting it again", "cause", c.cause, "in", backoff)
		for {
			select {
			case <-s.stop.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			ctx, cancel := context.WithTimeout(s.stop, s.o.StartTimeout)
			next, err := s.connect(ctx)
			cancel()
			if err == nil {
				c = next
				if !s.set(c) {
					_ = c.sess.Close() // started as Close was called: shutdown will not see it
					return
				}
				s.log.Info("the MCP server is up again", "tools", len(c.tools.names))
				break
			}
			if s.stop.Err() != nil {
				return
			}
			s.log.Warn("the MCP server could not be started again", "err", err, "retryIn", backoff)
		}
	}
}

// await waits for c's session to end, records why, and marks the agent
// without a session until the next one is up.
func (s *supervisor) await(c *conn) {
	waitErr := c.sess.Wait()
	closeErr := c.sess.Close() // over stdio: the child's exit status
	cause := errors.New("the MCP server closed the session")
	switch {
	case s.stop.Err() != nil:
		cause = errClosing
	case tooLarge(waitErr):
		cause = errTooLarge // the child was stopped for it: its exit status says nothing
	case closeErr != nil:
		cause = fmt.Errorf("the MCP server exited: %v", closeErr)
	case waitErr != nil && !errors.Is(waitErr, mcp.ErrConnectionClosed):
		cause = fmt.Errorf("the MCP server's session ended: %v", waitErr)
	case s.o.URL == "":
		cause = errors.New("the MCP server exited")
	}
	s.mu.Lock()
	if c.hung != nil {
		cause = c.hung
	}
	c.cause = cause
	close(c.dead)
	s.unset(c)
	s.mu.Unlock()
}

// unset leaves the agent without a live session when c was it, until the
// next one is up. Callers hold s.mu.
func (s *supervisor) unset(c *conn) {
	if s.cur == c {
		s.cur = nil
		s.up = make(chan struct{})
	}
}

// set makes c the live session, unless the supervisor is stopping: then
// it reports false, and the caller closes c. The check is made under s.mu,
// which shutdown takes after stopping, so that a session started again
// while Parley stops is closed either by shutdown (it found it) or by the
// loop (set refused it), never left running with shutdown waiting on it.
func (s *supervisor) set(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop.Err() != nil {
		return false
	}
	s.cur = c
	close(s.up)
	return true
}

// session returns the live session, waiting for one while the server
// restarts, until ctx ends.
func (s *supervisor) session(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		c, up := s.cur, s.up
		s.mu.Unlock()
		if c != nil {
			return c, nil
		}
		select {
		case <-up:
		case <-s.stop.Done():
			return nil, errors.New("the MCP server is stopped")
		case <-ctx.Done():
			return nil, fmt.Errorf("the MCP server is not running (it is being started again): %w", context.Cause(ctx))
		}
	}
}

// connect starts the child (or opens the HTTP session), initializes the
// session and lists the tools.
func (s *supervisor) connect(ctx context.Context) (*conn, error) {
	var t mcp.Transport
	if s.o.URL != "" {
		t = &mcp.StreamableClientTransport{Endpoint: s.o.URL, HTTPClient: s.o.HTTPClient}
	} else {
		cmd := exec.Command(s.o.Command[0], s.o.Command[1:]...)
		cmd.Env = s.o.Env
		stderr, err := logLines(s.log, s.o.Command[0])
		if err != nil {
			return nil, err
		}
		cmd.Stderr = stderr
		defer stderr.Close() // the child has its own copy once started
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: s.o.StopGrace}
	}
	sess, err := s.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		_ = sess.Close()
		return nil, fmt.Errorf("listing the MCP server's tools: %w", err)
	}
	return &conn{sess: sess, tools: tools, dead: make(chan struct{})}, nil
}

// shutdown stops supervising and closes the session (over stdio: the
// child's standard input, then SIGTERM and SIGKILL after StopGrace).
func (s *supervisor) shutdown() {
	s.close()
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c != nil {
		_ = c.sess.Close()
	}
	<-s.done
}

// logLines returns the write end of a pipe whose lines are logged at
// WARN: the child's standard error. The reader ends when every copy of
// the write end is closed (the caller's once the child started, the
// child's when it exits).
func logLines(log *slog.Logger, program string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			log.Warn("MCP server stderr", "program", program, "line", sc.Text())
		}
		_, _ = io.Copy(io.Discard, r) // after a line too long: drained, so the child never blocks
	}()
	return w, nil
}

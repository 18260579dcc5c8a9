package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

const taskSynopsis = `task SUBCOMMAND -a AGENT [ID] [flags]
       task SUBCOMMAND URL [ID] [flags]   (the older spelling)

  task get -a AGENT ID        print a task (--history N: with its last N
                              messages; --timeline N|all: with its A2A 1.1
                              timeline; --wait: once it is finished or
                              needs input; --wait-change: once it next
                              changes, a long poll of an A2A 1.1 agent)
  task list -a AGENT          list tasks, newest first (--context-id,
                              --status, --page-size, --page-token,
                              --history, --include-artifacts, --since);
                              the ARTIFACTS column comes with
                              --include-artifacts
  task cancel -a AGENT ID     cancel a task
  task download -a AGENT ID   write the task's artifacts to files in --dir:
                              text and bytes as they are (a file part by
                              its name), data as JSON; a part that refers
                              to a URL is named, not fetched; no file is
                              overwritten
  task subscribe -a AGENT ID  stream a task's events until it ends or
                              needs input or authorization
  task push-config create|get|list|delete -a AGENT TASK_ID [CONFIG_ID]
                              the task's push notification configurations
                              (parley push -h)
  task wait URL ID            the older spelling of task get --wait

Exit status 0 whenever the task is shown, whatever its state (subscribe
and get --wait name a state other than COMPLETED in a warning on stderr);
1 an error the agent returned, 2 bad usage, 3 the agent could not be
reached, 4 authentication missing or refused, 5 --timeout expired.`

// taskCmd runs `parley task get|list|cancel|subscribe|wait`.
func taskCmd(ctx context.Context, e *env, args []string) error {
	sub, args := splitSubcommand(args)
	if sub == "push-config" { // A2A CLI SPEC §7.1's name for `parley push`
		e.name = "task"
		return pushCmd(ctx, e, args)
	}
	e.name = strings.TrimSpace("task " + sub)
	fs, c := e.newFlags(taskSynopsis, true)
	f := addTaskFlags(fs, sub)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkTaskArgs(sub, pos); err != nil {
		return err
	}
	hl, err := f.historyLength()
	if err != nil {
		return err
	}
	var list *a2a.ListTasksRequest
	if sub == "list" {
		if list, err = f.listRequest(hl); err != nil {
			return err
		}
	}

	if sub == "get" && f.wait {
		sub = "wait" // task get --wait: the wait of `task wait`
	}
	timeout := defaultTimeout
	if sub == "subscribe" || sub == "wait" || f.waitChange {
		timeout = 0
	}
	ctx, cl, done, err := c.dial(ctx, timeout, pos[0])
	if err != nil {
		return err
	}
	defer done()
	url := pos[0]
	switch sub {
	case "get":
		return e.taskGet(ctx, cl, url, &a2a.GetTaskRequest{Id: pos[1], HistoryLength: hl, TimelineLength: f.timelineLength()}, f.waitChange)
	case "list":
		return e.taskList(ctx, cl, list)
	case "cancel":
		return e.taskCancel(ctx, cl, pos[1])
	case "download":
		return e.taskDownload(ctx, cl, url, pos[1], f.dir)
	case "subscribe":
		if c.json && !f.stream {
			// -o json without --stream: the one terminal Task (A2A CLI
			// SPEC Appendix B), as task get --wait prints it.
			return e.taskWait(ctx, cl, url, pos[1])
		}
		if !e.streams(cl) {
			return e.taskWait(ctx, cl, url, pos[1]) // polls
		}
		return e.showStream(ctx, cl.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: pos[1]}), url, false)
	default: // "wait"
		return e.taskWait(ctx, cl, url, pos[1])
	}
}

// splitSubcommand takes the subcommand off args, when their first word is
// not a flag.
func splitSubcommand(args []string) (sub string, rest []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// checkTaskArgs checks the subcommand and the number of positional
// arguments of `parley task`.
func checkTaskArgs(sub string, pos []string) error {
	switch sub {
	case "get", "cancel", "subscribe", "wait", "download":
		return wantArgs(pos, 2, 2, "the agent URL", "the task ID")
	case "list":
		return wantArgs(pos, 1, 1, "the agent URL")
	case "":
		return usageError{fmt.Errorf("missing subcommand: get, list, cancel, subscribe, download or push-config")}
	}
	return usageError{fmt.Errorf("unknown subcommand %q: want get, list, cancel, subscribe, download or push-config", sub)}
}

// taskFlags are the flags of `parley task` besides the common ones:
// --history, --wait-change for `task get`, and those of `task list`.
type taskFlags struct {
	history       int
	timeline      *int32 // --timeline: nil unless given; -1 for all
	dir           string
	stream        bool
	wait          bool
	waitChange    bool
	contextID     string
	status        string
	pageSize      int
	pageToken     string
	withArtifacts bool
	since         string
}

// addTaskFlags defines the flags of `parley task` on fs, with those of
// the subcommand sub.
func addTaskFlags(fs *flag.FlagSet, sub string) *taskFlags {
	f := &taskFlags{}
	fs.IntVar(&f.history, "history", -1, "at most `N` history messages per task (historyLength; -1: the server's default)")
	if sub == "get" {
		fs.Func("timeline", "show the task's timeline (A2A 1.1, asked as a 1.1 call; the agent must serve 1.1): its last `N` entries, or all", func(s string) error {
			n := int32(-1)
			if s != "all" {
				v, err := strconv.ParseInt(s, 10, 32)
				if err != nil || v < 0 {
					return fmt.Errorf("want a count of 0 or more, or all")
				}
				n = int32(v)
			}
			f.timeline = &n
			return nil
		})
		fs.BoolVar(&f.wait, "wait", false, "wait until the task is finished or needs input or authorization (streams when the agent can, "+
			"else polls every --poll-interval), then print it; no time limit unless --timeout")
		fs.BoolVar(&f.wait, "watch", false, "the same as --wait")
		fs.BoolVar(&f.waitChange, "wait-change", false, "read the task's generation, then wait until the task changes and print it then: "+
			"a long poll (A2A 1.1's currentGeneration; the agent must serve 1.1, e.g. parley serve --protocol-versions 1.1,1.0,0.3); "+
			"no time limit unless --timeout")
	}
	if sub == "subscribe" {
		fs.BoolVar(&f.stream, "stream", false, "with -o json: one StreamResponse per line as the events arrive (JSON Lines), "+
			"instead of the one Task it ends with")
	}
	if sub == "download" {
		fs.StringVar(&f.dir, "dir", ".", "write the files in `DIR`, which must exist")
	}
	if sub == "list" {
		fs.StringVar(&f.contextID, "context-id", "", "only tasks of the context `ID`")
		fs.StringVar(&f.contextID, "context", "", "the same as --context-id `ID`")
		fs.StringVar(&f.status, "status", "", "only tasks in `STATE` (e.g. completed, working, input-required)")
		fs.IntVar(&f.pageSize, "page-size", 0, "at most `N` tasks (1..100; default: the server's, 50)")
		fs.StringVar(&f.pageToken, "page-token", "", "the page after this `TOKEN` (from the previous page)")
		fs.BoolVar(&f.withArtifacts, "include-artifacts", false, "include the tasks' artifacts, counted in an ARTIFACTS column (without it the server leaves them out, and so does the table)")
		fs.StringVar(&f.since, "since", "", "only tasks whose status changed at or after `TIME` (RFC 3339, or a duration such as 1h: that long ago)")
	}
	return f
}

// timelineLength is --timeline as a timelineLength, a member only 1.1
// has, so that the client makes the call in 1.1: nil without the flag;
// "all" is a count no timeline reaches (unset would mean all too, but
// would not ask for 1.1).
func (f *taskFlags) timelineLength() *int32 {
	if f.timeline == nil {
		return nil
	}
	if *f.timeline < 0 {
		all := int32(math.MaxInt32)
		return &all
	}
	return f.timeline
}

// historyLength is --history as a historyLength: nil for the server's
// default.
func (f *taskFlags) historyLength() (*int32, error) {
	if f.history < -1 {
		return nil, usageError{fmt.Errorf("--history %d: want 0 or more", f.history)}
	}
	if f.history < 0 {
		return nil, nil
	}
	h := int32(f.history)
	return &h, nil
}

// listRequest is the ListTasks request the flags of `task list` ask for.
func (f *taskFlags) listRequest(hl *int32) (*a2a.ListTasksRequest, error) {
	req := &a2a.ListTasksRequest{ContextId: f.contextID, PageToken: f.pageToken, HistoryLength: hl}
	if f.status != "" {
		st, ok := parseState(f.status)
		if !ok {
			return nil, usageError{fmt.Errorf("--status %q: not a task state", f.status)}
		}
		req.Status = st
	}
	if f.pageSize != 0 {
		n := int32(f.pageSize)
		req.PageSize = &n
	}
	if f.withArtifacts {
		req.IncludeArtifacts = &f.withArtifacts
	}
	if f.since != "" {
		t, err := parseSince(f.since)
		if err != nil {
			return nil, usageError{err}
		}
		req.StatusTimestampAfter = a2a.Timestamp(t)
	}
	return req, nil
}

// taskGet runs `task get`, and with wait `task get --wait-change`. It
// exits 0 whatever the task's state: it shows the task, and the state is
// in what it prints.
func (e *env) taskGet(ctx context.Context, cl *client.Client, url string, req *a2a.GetTaskRequest, wait bool) error {
	hl := req.HistoryLength
	var t *a2a.Task
	var err error
	if wait {
		t, err = e.waitChange(ctx, cl, url, req)
	} else {
		t, err = cl.GetTask(ctx, req)
	}
	if err != nil {
		return err
	}
	if e.c.json {
		return e.out.jsonLine(t)
	}
	e.out.printTask(t, hl != nil || e.c.verbose)
	e.nextSteps(url, t)
	return nil
}

// waitChange waits, for `task get --wait-change`, for the task's next
// change (client.WaitForChange, spec §3.2.7), with a live line, and
// returns the task then; a task already terminal at once.
func (e *env) waitChange(ctx context.Context, cl *client.Client, url string, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	start, frame := time.Now(), 0
	e.out.startLive(func() string {
		frame++
		return fmt.Sprintf("%c waiting for task %s to change · %.0fs", spinner[frame%len(spinner)], req.Id, time.Since(start).Seconds())
	})
	t, err := cl.WaitForChange(ctx, req)
	e.out.stopLiveLine()
	switch {
	case interrupted(ctx):
		fmt.Fprintf(e.stderr, "parley %s: interrupted while waiting for task %s to change: parley task get %s %s\n", e.name, req.Id, url, req.Id)
		return nil, codeError{errReported, ExitInterrupted}
	case errors.Is(err, client.ErrNoGeneration):
		return nil, fmt.Errorf("%w: --wait-change needs an agent that serves A2A 1.1 (parley serve --protocol-versions 1.1,1.0,0.3), and --a2a-version, when given, 1.1", err)
	}
	return t, err
}

// taskList runs `task list`.
func (e *env) taskList(ctx context.Context, cl *client.Client, req *a2a.ListTasksRequest) error {
	l, err := cl.ListTasks(ctx, req)
	if err != nil {
		return err
	}
	if e.c.json {
		return e.out.jsonLine(l)
	}
	e.out.printTaskList(l, req.GetIncludeArtifacts())
	return nil
}

// taskCancel runs `task cancel`.
func (e *env) taskCancel(ctx context.Context, cl *client.Client, id string) error {
	t, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{Id: id})
	if err != nil {
		return err
	}
	if e.c.json {
		return e.out.jsonLine(t)
	}
	e.out.printTask(t, false)
	return nil
}

// taskWait runs `task get --wait` (and `task wait`), with a live line
// while it waits, and names a state other than COMPLETED in a warning
// (outcome); it exits 0 whatever the state. It reads
// the task first: a task already finished or waiting for input is shown
// as it is, without subscribing, since an agent may refuse to subscribe to
// a terminal task in ways (spec §3.1.6 names UnsupportedOperationError;
// other SDKs answer otherwise) that the wait would report as failures.
func (e *env) taskWait(ctx context.Context, cl *client.Client, url, id string) error {
	t, err := cl.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
	if err != nil {
		return err
	}
	if st := t.GetStatus().GetState(); !a2a.IsTerminal(st) && !a2a.IsInterrupted(st) {
		start, frame := time.Now(), 0
		e.out.startLive(func() string {
			frame++
			return fmt.Sprintf("%c waiting for task %s · %.0fs", spinner[frame%len(spinner)], id, time.Since(start).Seconds())
		})
		last := t.GetStatus().GetState()
		t, err = cl.WaitForCompletion(ctx, id)
		e.out.stopLiveLine()
		if interrupted(ctx) {
			return e.interruptedTask(url, id, last)
		}
		if err != nil {
			return err
		}
	}
	if e.c.json {
		if err := e.out.jsonLine(t); err != nil {
			return err
		}
	} else {
		e.out.printTask(t, false)
		e.nextSteps(url, t)
	}
	e.outcome(url, id, t.GetStatus().GetState())
	return nil
}

// parseState reads a task state: "completed", "input-required",
// "TASK_STATE_COMPLETED" and so on.
func parseState(s string) (a2a.TaskState, bool) {
	name := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if !strings.HasPrefix(name, "TASK_STATE_") {
		name = "TASK_STATE_" + name
	}
	v, ok := a2a.TaskState_value[name]
	if !ok || v == 0 {
		return 0, false
	}
	return a2a.TaskState(v), true
}

// parseSince reads --since: an RFC 3339 time, or a duration ago.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration (1h)", s)
}

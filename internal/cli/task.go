package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// taskCmd runs `parley task get|list|cancel|subscribe|wait`.
func taskCmd(ctx context.Context, e *env, args []string) error {
	const synopsis = `task SUBCOMMAND URL [ID] [flags]

  task get URL ID        print a task (--history N: with its last N messages)
  task list URL          list tasks, newest first (--context, --status,
                         --page-size, --page-token, --history,
                         --include-artifacts, --since)
  task cancel URL ID     cancel a task
  task subscribe URL ID  stream a task's events until it ends
  task wait URL ID       wait until a task is finished or needs input
                         (streams when the agent can, else polls), then
                         print it`
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	e.name = strings.TrimSpace("task " + sub)
	fs, c := e.newFlags(synopsis, true)
	history := fs.Int("history", -1, "at most `N` history messages per task (historyLength; -1: the server's default)")
	var contextID, status, pageToken, since string
	var pageSize int
	var withArtifacts bool
	if sub == "list" {
		fs.StringVar(&contextID, "context", "", "only tasks of the context `ID`")
		fs.StringVar(&status, "status", "", "only tasks in `STATE` (e.g. completed, working, input-required)")
		fs.IntVar(&pageSize, "page-size", 0, "at most `N` tasks (1..100; default: the server's, 50)")
		fs.StringVar(&pageToken, "page-token", "", "the page after this `TOKEN` (from the previous page)")
		fs.BoolVar(&withArtifacts, "include-artifacts", false, "include the tasks' artifacts")
		fs.StringVar(&since, "since", "", "only tasks whose status changed at or after `TIME` (RFC 3339, or a duration such as 1h: that long ago)")
	}
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	switch sub {
	case "get", "cancel", "subscribe", "wait":
		err = wantArgs(pos, 2, 2, "the agent URL and the task ID")
	case "list":
		err = wantArgs(pos, 1, 1, "the agent URL")
	case "":
		err = usageError{fmt.Errorf("missing subcommand: get, list, cancel, subscribe or wait")}
	default:
		err = usageError{fmt.Errorf("unknown subcommand %q: want get, list, cancel, subscribe or wait", sub)}
	}
	if err != nil {
		return err
	}
	if *history < -1 {
		return usageError{fmt.Errorf("--history %d: want 0 or more", *history)}
	}
	var hl *int32
	if *history >= 0 {
		h := int32(*history)
		hl = &h
	}
	req := &a2a.ListTasksRequest{ContextId: contextID, PageToken: pageToken, HistoryLength: hl}
	if sub == "list" {
		if status != "" {
			st, ok := parseState(status)
			if !ok {
				return usageError{fmt.Errorf("--status %q: not a task state", status)}
			}
			req.Status = st
		}
		if pageSize != 0 {
			n := int32(pageSize)
			req.PageSize = &n
		}
		if withArtifacts {
			req.IncludeArtifacts = &withArtifacts
		}
		if since != "" {
			t, err := parseSince(since)
			if err != nil {
				return usageError{err}
			}
			req.StatusTimestampAfter = a2a.Timestamp(t)
		}
	}

	def := defaultTimeout
	if sub == "subscribe" || sub == "wait" {
		def = 0
	}
	ctx, cancel := c.context(ctx, def)
	defer cancel()
	cl, err := c.connect(ctx, pos[0])
	if err != nil {
		return err
	}
	defer cl.Close()
	switch sub {
	case "get":
		t, err := cl.GetTask(ctx, &a2a.GetTaskRequest{Id: pos[1], HistoryLength: hl})
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(t)
		}
		e.out.printTask(t, hl != nil)
		e.nextSteps(pos[0], t)
	case "list":
		l, err := cl.ListTasks(ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(l)
		}
		e.out.printTaskList(l)
	case "cancel":
		t, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{Id: pos[1]})
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(t)
		}
		e.out.printTask(t, false)
	case "subscribe":
		return e.showStream(cl.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: pos[1]}), pos[0])
	case "wait":
		start, frame := time.Now(), 0
		e.out.startLive(func() string {
			frame++
			return fmt.Sprintf("%c waiting for task %s · %.0fs", spinner[frame%len(spinner)], pos[1], time.Since(start).Seconds())
		})
		t, err := cl.WaitForCompletion(ctx, pos[1])
		e.out.stopLiveLine()
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(t)
		}
		e.out.printTask(t, false)
		e.nextSteps(pos[0], t)
	}
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

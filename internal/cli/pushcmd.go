package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
)

// pushCmd runs `parley push create|get|list|delete`: manage the push
// notification configurations of a task.
func pushCmd(ctx context.Context, e *env, args []string) error {
	const synopsis = `push SUBCOMMAND URL TASK_ID [CONFIG_ID] [flags]

  push create URL TASK_ID --url WEBHOOK   register a webhook for the task
                                          (--token-value, --auth-scheme,
                                          --auth-credentials, --id)
  push get URL TASK_ID CONFIG_ID          print a configuration
  push list URL TASK_ID                   list the task's configurations
  push delete URL TASK_ID CONFIG_ID       delete a configuration`
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	e.name = strings.TrimSpace("push " + sub)
	fs, c := e.newFlags(synopsis, true)
	var webhook, tokenValue, scheme, creds, id, pageToken string
	var pageSize int
	switch sub {
	case "create":
		fs.StringVar(&webhook, "url", "", "the webhook `URL` notifications are POSTed to (required)")
		fs.StringVar(&tokenValue, "token-value", "", "a `TOKEN` the agent sends with every notification (the config's token)")
		fs.StringVar(&scheme, "auth-scheme", "", "the HTTP authentication `SCHEME` the agent uses at the webhook, e.g. Bearer")
		fs.StringVar(&creds, "auth-credentials", "", "the `CREDENTIALS` for --auth-scheme (sent as Authorization: SCHEME CREDENTIALS)")
		fs.StringVar(&id, "id", "", "the configuration's `ID` (default: the server assigns one)")
	case "list":
		fs.IntVar(&pageSize, "page-size", 0, "at most `N` configurations")
		fs.StringVar(&pageToken, "page-token", "", "the page after this `TOKEN`")
	}
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	switch sub {
	case "create", "list":
		err = wantArgs(pos, 2, 2, "the agent URL and the task ID")
	case "get", "delete":
		err = wantArgs(pos, 3, 3, "the agent URL, the task ID and the configuration ID")
	case "":
		err = usageError{errors.New("missing subcommand: create, get, list or delete")}
	default:
		err = usageError{fmt.Errorf("unknown subcommand %q: want create, get, list or delete", sub)}
	}
	if err != nil {
		return err
	}
	if sub == "create" {
		switch {
		case webhook == "":
			return usageError{errors.New("--url WEBHOOK is required")}
		case creds != "" && scheme == "":
			return usageError{errors.New("--auth-credentials needs --auth-scheme")}
		}
	}
	ctx, cancel := c.context(ctx, defaultTimeout)
	defer cancel()
	cl, err := c.connect(ctx, pos[0])
	if err != nil {
		return err
	}
	defer cl.Close()
	taskID := pos[1]
	switch sub {
	case "create":
		cfg := &a2a.TaskPushNotificationConfig{TaskId: taskID, Id: id, Url: webhook, Token: tokenValue}
		if scheme != "" {
			cfg.Authentication = &a2a.AuthenticationInfo{Scheme: scheme, Credentials: creds}
		}
		got, err := cl.CreateTaskPushNotificationConfig(ctx, cfg)
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(got)
		}
		e.out.printPushConfig(got)
	case "get":
		got, err := cl.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: taskID, Id: pos[2]})
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(got)
		}
		e.out.printPushConfig(got)
	case "list":
		req := &a2a.ListTaskPushNotificationConfigsRequest{TaskId: taskID, PageToken: pageToken, PageSize: int32(pageSize)}
		l, err := cl.ListTaskPushNotificationConfigs(ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			return e.out.jsonLine(l)
		}
		for _, cfg := range l.GetConfigs() {
			e.out.printPushConfig(cfg)
		}
		e.out.printf("%d configuration(s)", len(l.GetConfigs()))
		if l.GetNextPageToken() != "" {
			e.out.printf("; next page: --page-token %s", l.GetNextPageToken())
		}
		e.out.printf("\n")
	case "delete":
		if err := cl.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: taskID, Id: pos[2]}); err != nil {
			return err
		}
		if c.json {
			e.out.printf("{\"deleted\":%s,\"taskId\":%s}\n", jsonQuote(pos[2]), jsonQuote(taskID))
			return nil
		}
		e.out.printf("deleted push config %s of task %s\n", pos[2], taskID)
	}
	return nil
}

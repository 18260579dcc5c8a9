package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

const pushSynopsis = `push SUBCOMMAND URL TASK_ID [CONFIG_ID] [flags]

  push create URL TASK_ID --url WEBHOOK   register a webhook for the task
                                          (--token-value, --auth-scheme,
                                          --auth-credentials, --id)
  push get URL TASK_ID CONFIG_ID          print a configuration
  push list URL TASK_ID                   list the task's configurations
  push delete URL TASK_ID CONFIG_ID       delete a configuration`

// pushCmd runs `parley push create|get|list|delete`: manage the push
// notification configurations of a task.
func pushCmd(ctx context.Context, e *env, args []string) error {
	sub, args := splitSubcommand(args)
	if e.name == "task" {
		e.name = strings.TrimSpace("task push-config " + sub)
	} else {
		e.name = strings.TrimSpace("push " + sub)
	}
	fs, c := e.newFlags(pushSynopsis, true)
	f := addPushCmdFlags(fs, sub)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkPushArgs(sub, pos); err != nil {
		return err
	}
	if sub == "create" {
		if err := f.checkCreate(); err != nil {
			return err
		}
	}
	ctx, cl, done, err := c.dial(ctx, defaultTimeout, pos[0])
	if err != nil {
		return err
	}
	defer done()
	if !cl.Card().GetCapabilities().GetPushNotifications() { // A2A CLI SPEC §13.3; the agent's answer, spec §3.1.7
		return a2a.NewError(a2a.CodePushNotificationNotSupported, "the agent's card declares no push notifications (capabilities.pushNotifications)")
	}
	taskID := pos[1]
	switch sub {
	case "create":
		return e.pushCreate(ctx, cl, f.config(taskID))
	case "get":
		return e.pushGet(ctx, cl, taskID, pos[2])
	case "list":
		return e.pushList(ctx, cl, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: taskID, PageToken: f.pageToken, PageSize: int32(f.pageSize)})
	default: // "delete"
		return e.pushDelete(ctx, cl, taskID, pos[2])
	}
}

// checkPushArgs checks the subcommand and the number of positional
// arguments of `parley push`.
func checkPushArgs(sub string, pos []string) error {
	switch sub {
	case "create", "list":
		return wantArgs(pos, 2, 2, "the agent URL", "the task ID")
	case "get", "delete":
		return wantArgs(pos, 3, 3, "the agent URL", "the task ID", "the configuration ID")
	case "":
		return usageError{errors.New("missing subcommand: create, get, list or delete")}
	}
	return usageError{fmt.Errorf("unknown subcommand %q: want create, get, list or delete", sub)}
}

// pushCmdFlags are the flags of `push create` and `push list`.
type pushCmdFlags struct {
	webhook, tokenValue, scheme, creds, id string // push create
	pageToken                              string // push list
	pageSize                               int    // push list
	tokenValueFile, credsFile              string // push create: the secrets from files
}

// addPushCmdFlags defines the flags of the push subcommand sub on fs.
func addPushCmdFlags(fs *flag.FlagSet, sub string) *pushCmdFlags {
	f := &pushCmdFlags{}
	switch sub {
	case "create":
		fs.StringVar(&f.webhook, "url", "", "the webhook `URL` notifications are POSTed to (required)")
		fs.StringVar(&f.tokenValue, "token-value", "", "a `TOKEN` the agent sends with every notification (the config's token)")
		fs.StringVar(&f.scheme, "auth-scheme", "", "the HTTP authentication `SCHEME` the agent uses at the webhook, e.g. Bearer")
		fs.StringVar(&f.creds, "auth-credentials", "", "the `CREDENTIALS` for --auth-scheme (sent as Authorization: SCHEME CREDENTIALS)")
		fs.StringVar(&f.tokenValueFile, "token-value-file", "", "like --token-value, with the token read from `FILE`")
		fs.StringVar(&f.credsFile, "auth-credentials-file", "", "like --auth-credentials, with the credentials read from `FILE`")
		fs.StringVar(&f.id, "id", "", "the configuration's `ID` (default: the server assigns one)")
	case "list":
		fs.IntVar(&f.pageSize, "page-size", 0, "at most `N` configurations")
		fs.StringVar(&f.pageToken, "page-token", "", "the page after this `TOKEN`")
	}
	return f
}

// checkCreate checks the flags of `push create`.
func (f *pushCmdFlags) checkCreate() error {
	var err error
	if f.tokenValue, err = valueOrFile("token-value", f.tokenValue, f.tokenValueFile, nil); err != nil {
		return err
	}
	if f.creds, err = valueOrFile("auth-credentials", f.creds, f.credsFile, nil); err != nil {
		return err
	}
	switch {
	case f.webhook == "":
		return usageError{errors.New("--url WEBHOOK is required")}
	case f.creds != "" && f.scheme == "":
		return usageError{errors.New("--auth-credentials needs --auth-scheme")}
	}
	return nil
}

// config is the configuration `push create` registers for the task.
func (f *pushCmdFlags) config(taskID string) *a2a.TaskPushNotificationConfig {
	cfg := &a2a.TaskPushNotificationConfig{TaskId: taskID, Id: f.id, Url: f.webhook, Token: f.tokenValue}
	if f.scheme != "" {
		cfg.Authentication = &a2a.AuthenticationInfo{Scheme: f.scheme, Credentials: f.creds}
	}
	return cfg
}

// pushCreate runs `push create`.
func (e *env) pushCreate(ctx context.Context, cl *client.Client, cfg *a2a.TaskPushNotificationConfig) error {
	got, err := cl.CreateTaskPushNotificationConfig(ctx, cfg)
	if err != nil {
		return withPrivateWebhookHint(err)
	}
	if e.c.json {
		return e.out.jsonLine(got)
	}
	e.out.printPushConfig(got)
	return nil
}

// pushGet runs `push get`.
func (e *env) pushGet(ctx context.Context, cl *client.Client, taskID, id string) error {
	got, err := cl.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: taskID, Id: id})
	if err != nil {
		return err
	}
	if e.c.json {
		return e.out.jsonLine(got)
	}
	e.out.printPushConfig(got)
	return nil
}

// pushList runs `push list`.
func (e *env) pushList(ctx context.Context, cl *client.Client, req *a2a.ListTaskPushNotificationConfigsRequest) error {
	l, err := cl.ListTaskPushNotificationConfigs(ctx, req)
	if err != nil {
		return err
	}
	if e.c.json {
		return e.out.jsonLine(l)
	}
	for _, cfg := range l.GetConfigs() {
		e.out.printPushConfig(cfg)
	}
	e.out.printf("Configs Shown: %d\n", len(l.GetConfigs()))
	if l.GetNextPageToken() != "" {
		e.out.printf("Next Page Token: %s\n", l.GetNextPageToken())
	}
	return nil
}

// pushDelete runs `push delete`.
func (e *env) pushDelete(ctx context.Context, cl *client.Client, taskID, id string) error {
	if err := cl.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: taskID, Id: id}); err != nil {
		return err
	}
	if e.c.json {
		e.out.printf("{\"deleted\":%s,\"taskId\":%s}\n", jsonQuote(id), jsonQuote(taskID))
		return nil
	}
	e.out.printf("Deleted Config ID: %s\nTask ID: %s\n", id, taskID)
	return nil
}

// withPrivateWebhookHint adds advice to the refusal of a webhook whose
// address is loopback, private or link-local: the server's message (the
// push guard's "… is not allowed") cannot say how the server is run, but
// a Parley server accepts such webhooks with --push-allow-private.
func withPrivateWebhookHint(err error) error {
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		return err
	}
	msg := strings.ToLower(ae.WireMessage())
	if !strings.Contains(msg, "not allowed") {
		return err
	}
	for _, word := range []string{"loopback", "private", "link-local", "non-public"} {
		if strings.Contains(msg, word) {
			return fmt.Errorf("%w\n  hint: the server refuses webhooks on loopback and private addresses; "+
				"for development, run a Parley server with --push-allow-private (or --push-allow-host HOST)", err)
		}
	}
	return err
}

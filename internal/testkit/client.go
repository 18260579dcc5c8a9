package testkit

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Ptr returns a pointer to v, for the optional fields of requests.
func Ptr[T any](v T) *T { return &v }

// CheckRequired reports, as an error of the test, each REQUIRED member m
// lacks (a2a.CheckRequired); what names the response in the message.
func CheckRequired(tb testing.TB, what string, m proto.Message) {
	tb.Helper()
	if v := a2a.CheckRequired(m); len(v) > 0 {
		tb.Errorf("%s response lacks REQUIRED members: %v", what, v)
	}
}

// SendTask sends text as a user message with cfg (which may be nil) and
// returns the task the answer must be. An answer that is not a task fails
// the test; one lacking a REQUIRED member is reported (CheckRequired).
func SendTask(tb testing.TB, ctx context.Context, c *client.Client, text string, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	tb.Helper()
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage(text), Configuration: cfg})
	if err != nil || resp.GetTask() == nil {
		tb.Fatalf("SendMessage(%q) = %v, %v; want a task", text, resp, err)
	}
	CheckRequired(tb, "SendMessage", resp)
	return resp.GetTask()
}

package client_test

import (
	"context"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Resume a task's stream by hand, from the last event a previous reader
// kept (a process that restarted, say). Within one loop the Client does
// this by itself when a connection breaks (Options.Resumes).
func ExampleClient_SubscribeToTask_resume() {
	base, stop := serveDemo()
	defer stop()
	ctx := context.Background()
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(card, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	// A first reader stops after three events and keeps the last number.
	var id string
	var last uint64
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 4 every 20")}) {
		if err != nil {
			panic(err)
		}
		id, last = ev.TaskID(), ev.Seq
		if last == 3 {
			break
		}
	}
	// Later: the events after it, and nothing before.
	for ev, err := range c.SubscribeToTask(client.WithResumeAfter(ctx, last), &a2a.SubscribeToTaskRequest{Id: id}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Seq, eventLine(ev))
	}
	// Output:
	// 4 artifact: chunk 1
	// 5 artifact: chunk 2
	// 6 artifact: chunk 3
	// 7 status: TASK_STATE_COMPLETED
}

// eventLine describes an event in one short line.
func eventLine(ev a2a.StreamEvent) string {
	if au := ev.Response.GetArtifactUpdate(); au != nil {
		return "artifact: " + a2a.JoinText(au.GetArtifact().GetParts())
	}
	return "status: " + ev.State().String()
}

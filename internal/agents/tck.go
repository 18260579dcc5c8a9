package agents

import (
	"context"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// The official conformance kit (a2a-tck) tells the agent under test what to
// do through the prefix of the messageId it sends: its ids are the prefix,
// a dash and a per-run suffix ("tck-artifact-text-1a2b3c4d"). The behaviours
// below are the kit's contract, as its reference agents carry it out; the
// strings in them are the ones the kit's tests look for. ACTS (acts.go)
// names most of them again, keyed on the message's text instead.

// tckDelay is how long "tck-delayed-complete" (and ACTS's
// "tck-long-running") stays WORKING: the kit's streaming timeout, long
// enough that a non-blocking send sees the task unfinished while a blocking
// one waits for the end.
const tckDelay = 2 * time.Second

// behaviour is what the agent does for one message of a test contract.
type behaviour func(ctx context.Context, req *server.Request, em *server.Emitter) error

// rule is one behaviour of a test contract: what the agent does for a
// message whose key (its messageId, or its first text part) starts with
// prefix.
type rule struct {
	prefix string
	run    behaviour
}

// ruleFor returns the behaviour of the rule with the longest prefix that
// key starts with, so that "tck-artifact-file-url" is never taken for
// "tck-artifact-file"; nil when key starts with none.
func ruleFor(rules []rule, key string) behaviour {
	var best *rule
	for i := range rules {
		r := &rules[i]
		if strings.HasPrefix(key, r.prefix) && (best == nil || len(r.prefix) > len(best.prefix)) {
			best = r
		}
	}
	if best == nil {
		return nil
	}
	return best.run
}

// sharedRules are the behaviours the kit's contract and ACTS's both name,
// carried out the same way for both.
var sharedRules = []rule{
	{"tck-complete-task", statusOnly(a2a.TaskState_TASK_STATE_COMPLETED, "Hello from TCK")},
	{"tck-artifact-text", completeWith(false, textArtifact("text", "Generated text content"))},
	{"tck-artifact-file", completeWith(false, tckFileArtifact)},
	{"tck-artifact-file-url", completeWith(false, tckFileURLArtifact)},
	{"tck-artifact-data", completeWith(false, tckDataArtifact)},
	{"tck-message-response", func(_ context.Context, _ *server.Request, em *server.Emitter) error {
		return em.Reply(a2a.AgentMessage("Direct message response"))
	}},
	{"tck-input-required", statusOnly(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "Input required")},
	{"tck-auth-required", statusOnly(a2a.TaskState_TASK_STATE_AUTH_REQUIRED, "Authorization required")},
	{"tck-reject-task", statusOnly(a2a.TaskState_TASK_STATE_REJECTED, "rejected")},
}

// tckRules is the kit's contract, keyed on the messageId.
var tckRules = append(slices.Clip(sharedRules),
	rule{"tck-delayed-complete", afterDelay(nil, "Done after delay")},
	rule{"tck-stream-001", completeWith(true, textArtifact("stream", "Stream hello from TCK"))},
	rule{"tck-stream-002", completeWith(false, nil)},
	rule{"tck-stream-003", completeWith(true, textArtifact("stream", "Stream task lifecycle"))},
	rule{"tck-stream-ordering-001", completeWith(true, textArtifact("stream", "Ordered output"))},
	rule{"tck-stream-artifact-text", completeWith(true, textArtifact("stream", "Streamed text content"))},
	rule{"tck-stream-artifact-file", completeWith(true, tckFileArtifact)},
	rule{"tck-stream-artifact-chunked", chunked},
)

// statusOnly returns a behaviour that moves the task to state, with a
// status message of text.
func statusOnly(state a2a.TaskState, text string) behaviour {
	return func(_ context.Context, _ *server.Request, em *server.Emitter) error {
		return em.StatusText(state, text)
	}
}

// completeWith returns a behaviour that emits the artifact newArtifact
// makes (none when it is nil) and completes the task, reporting WORKING
// first when working is set (the kit's streaming scenarios expect a status
// update before the artifact). Each task gets an artifact of its own.
func completeWith(working bool, newArtifact func() *a2a.Artifact) behaviour {
	return func(_ context.Context, _ *server.Request, em *server.Emitter) error {
		if working {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
		}
		if newArtifact != nil {
			if err := em.Artifact(newArtifact()); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}
}

// textArtifact returns a maker of artifacts with the id and one text part.
func textArtifact(id, text string) func() *a2a.Artifact {
	return func() *a2a.Artifact { return a2a.TextArtifact(id, text) }
}

// tckFileArtifact is the kit's file artifact: the bytes "tck" as a file
// named output.txt of type text/plain. A2A v1.0 has no file part: a file is
// a part with raw bytes, a filename and a media type.
func tckFileArtifact() *a2a.Artifact {
	return a2a.NewArtifact("file", &a2a.Part{
		Content:   &a2a.Part_Raw{Raw: []byte("tck")},
		Filename:  "output.txt",
		MediaType: "text/plain",
	})
}

// tckFileURLArtifact is the kit's file artifact by reference: a part with
// the URL https://example.com/output.txt, named output.txt, text/plain.
func tckFileURLArtifact() *a2a.Artifact {
	return a2a.NewArtifact("file-url", &a2a.Part{
		Content:   &a2a.Part_Url{Url: "https://example.com/output.txt"},
		Filename:  "output.txt",
		MediaType: "text/plain",
	})
}

// tckDataArtifact is the kit's data artifact, {"key":"value","count":42}.
func tckDataArtifact() *a2a.Artifact {
	v, err := structpb.NewValue(map[string]any{"key": "value", "count": 42})
	if err != nil {
		panic(err) // a constant that always converts
	}
	return a2a.NewArtifact("data", &a2a.Part{Content: &a2a.Part_Data{Data: v}})
}

// afterDelay returns a behaviour that works for tckDelay (returning early
// when the task is canceled), then emits the artifact newArtifact makes
// (none when it is nil) and completes with a status message of text
// (slow).
func afterDelay(newArtifact func() *a2a.Artifact, text string) behaviour {
	return func(ctx context.Context, _ *server.Request, em *server.Emitter) error {
		var a *a2a.Artifact
		if newArtifact != nil {
			a = newArtifact()
		}
		return slow(ctx, em, tckDelay, a, text)
	}
}

// chunked streams one artifact in two chunks, "chunk-1 " and then
// "chunk-2" appended as the last chunk, and completes.
func chunked(_ context.Context, _ *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	if err := em.StartArtifact(a2a.TextArtifact("chunked", "chunk-1 ")); err != nil {
		return err
	}
	if err := em.FinishArtifact(a2a.TextArtifact("chunked", "chunk-2")); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

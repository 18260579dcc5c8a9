// Package agents holds Parley's built-in agents: Echo, a minimal example;
// Conformance, the test agent that checkers and interop tests drive (its
// behaviours are listed on Conformance); and ACTS, which speaks only the
// behaviour contract of the A2A Conformance Test Specification.
package agents

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// Echo answers every message with a completed task whose one artifact
// ("echo") repeats the message's text parts.
func Echo() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		if err := em.Artifact(a2a.TextArtifact("echo", a2a.JoinText(req.Message.GetParts()))); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// Conformance is the conformance agent. Its behaviour is keyed on the
// first text part of the message, trimmed:
//
//	message          a direct Message reply "pong", no task
//	input-required   parks in INPUT_REQUIRED; a follow-up completes it,
//	                 echoing the follow-up's text
//	auth-required    parks in AUTH_REQUIRED
//	reject, fail     ends REJECTED or FAILED with a status message
//	stream N         N chunks "chunk 0".."chunk N-1" of artifact "stream",
//	                 then COMPLETED
//	stream N every MS
//	                 as stream N, with MS milliseconds between two chunks
//	                 (ends when canceled); for resume tests
//	slow MS          WORKING, waits MS milliseconds (ends when canceled),
//	                 then completes with the echo artifact
//	append-unknown   an append to an artifact never sent, then COMPLETED
//	anything else    WORKING, artifact "echo" with the text, COMPLETED
//
// A messageId starting with "test-resubscribe-message-id" behaves like
// "slow 4000".
//
// A messageId starting with one of the prefixes of the official conformance
// kit (a2a-tck) chooses the kit's behaviour instead, whatever the text and
// on follow-ups too; the longest matching prefix wins. Every other messageId,
// including other "tck-" ones, leaves the text rules above in charge.
//
//	messageId prefix             behaviour
//	tck-complete-task            COMPLETED, status message "Hello from TCK"
//	tck-delayed-complete         WORKING, 2 s (ends when canceled), then
//	                             COMPLETED, status message "Done after delay"
//	tck-artifact-text            artifact "text": text "Generated text
//	                             content"; COMPLETED
//	tck-artifact-file            artifact "file": raw bytes "tck", filename
//	                             output.txt, text/plain; COMPLETED
//	tck-artifact-file-url        artifact "file-url": url
//	                             https://example.com/output.txt, filename
//	                             output.txt, text/plain; COMPLETED
//	tck-artifact-data            artifact "data": data
//	                             {"key":"value","count":42}; COMPLETED
//	tck-message-response         a direct Message "Direct message response"
//	tck-input-required           INPUT_REQUIRED ("Input required"); a
//	                             follow-up with this prefix keeps it there
//	tck-auth-required            AUTH_REQUIRED ("Authorization required")
//	tck-reject-task              REJECTED, status message "rejected"
//	tck-stream-001               WORKING, artifact "stream": "Stream hello
//	                             from TCK"; COMPLETED
//	tck-stream-002               COMPLETED, no artifact
//	tck-stream-003               WORKING, artifact "stream": "Stream task
//	                             lifecycle"; COMPLETED
//	tck-stream-ordering-001      WORKING, artifact "stream": "Ordered
//	                             output"; COMPLETED
//	tck-stream-artifact-text     WORKING, artifact "stream": "Streamed text
//	                             content"; COMPLETED
//	tck-stream-artifact-file     WORKING, the file artifact of
//	                             tck-artifact-file; COMPLETED
//	tck-stream-artifact-chunked  WORKING, artifact "chunked" in two chunks,
//	                             "chunk-1 " then "chunk-2" (append, last
//	                             chunk); COMPLETED
//
// A follow-up on an INPUT_REQUIRED task therefore completes it when its
// messageId carries tck-complete-task (as the kit sends), and is echoed as
// above when it carries no prefix of the kit's.
//
// Otherwise, a first text part that starts (once trimmed) with one of the
// prefixes of ACTS's behaviour contract (the A2A Conformance Test
// Specification, draft 0.1.0 at commit dbcabfba, §11.2) chooses its
// behaviour, before the words above; the longest prefix wins, and a text
// starting "tck-" with none of them is echoed as any other text. A
// follow-up whose text names no behaviour runs the one its task's first
// message named, if it named one. The ACTS agent (ACTS) behaves the same
// for these prefixes.
//
//	first text part        behaviour
//	tck-complete-task      COMPLETED, status message "Hello from TCK"
//	tck-input-required     INPUT_REQUIRED ("Input required"), again on
//	                       every follow-up
//	tck-auth-required      AUTH_REQUIRED ("Authorization required"); not in
//	                       §11.2's table, but the suite's tests need it
//	tck-reject-task        REJECTED, status message "rejected"
//	tck-message-response   a direct Message "Direct message response"
//	tck-artifact-text      as the kit's prefixes of the same names: one
//	tck-artifact-file      artifact (text, raw bytes, URL, or data), then
//	tck-artifact-file-url  COMPLETED
//	tck-artifact-data
//	tck-long-running       WORKING, 2 s (ends when canceled), artifact
//	                       "result", COMPLETED
//	tck-multi-turn         INPUT_REQUIRED (no status message); each
//	                       follow-up asks again, until one whose first word
//	                       is "done" completes it ("Conversation complete")
//	tck-cancel             WORKING until the task is canceled
//	tck-stream-basic       WORKING, artifact "stream": "Streamed content",
//	                       COMPLETED
//	tck-stream-chunked     WORKING, artifact "chunked" in two chunks,
//	                       COMPLETED (as tck-stream-artifact-chunked)
//	tck-task-failure       FAILED, with a status message
func Conformance() server.Agent {
	return server.AgentFunc(conformance)
}

func conformance(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if run := ruleFor(tckRules, req.Message.GetMessageId()); run != nil {
		return run(ctx, req, em) // the conformance kit's contract
	}
	if run := actsFor(req); run != nil {
		return run(ctx, req, em) // ACTS's contract
	}
	text := strings.TrimSpace(a2a.FirstText(req.Message))
	if req.Task != nil && req.Task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		return echo(em, text) // the follow-up the task asked for
	}
	if strings.HasPrefix(req.Message.GetMessageId(), "test-resubscribe-message-id") {
		return slow(ctx, em, 4000*time.Millisecond, a2a.TextArtifact("echo", text), "")
	}
	word, arg, _ := strings.Cut(text, " ")
	switch word {
	case "message":
		return em.Reply(a2a.AgentMessage("pong"))
	case "input-required":
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "more input is required: send a follow-up message on this task")
	case "auth-required":
		return em.StatusText(a2a.TaskState_TASK_STATE_AUTH_REQUIRED, "authorization is required to continue")
	case "reject":
		return em.StatusText(a2a.TaskState_TASK_STATE_REJECTED, "the agent rejected the task")
	case "fail":
		return em.StatusText(a2a.TaskState_TASK_STATE_FAILED, "the agent failed the task on request")
	case "stream":
		n, every, ok := streamArgs(arg)
		if !ok {
			break
		}
		return stream(ctx, em, n, every)
	case "slow":
		ms, err := strconv.Atoi(strings.TrimSpace(arg))
		if err != nil || ms < 0 {
			break
		}
		return slow(ctx, em, time.Duration(ms)*time.Millisecond, a2a.TextArtifact("echo", text), "")
	case "append-unknown":
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		if err := em.FinishArtifact(a2a.TextArtifact("never-sent", "appended")); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}
	return echo(em, text)
}

// streamArgs reads the arguments of "stream N" and "stream N every MS":
// the number of chunks and the pause between two of them.
func streamArgs(arg string) (n int, every time.Duration, ok bool) {
	f := strings.Fields(arg)
	if len(f) != 1 && (len(f) != 3 || f[1] != "every") {
		return 0, 0, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0, 0, false
	}
	if len(f) == 3 {
		ms, err := strconv.Atoi(f[2])
		if err != nil || ms < 0 {
			return 0, 0, false
		}
		every = time.Duration(ms) * time.Millisecond
	}
	return n, every, true
}

// stream works, emits n chunks of the "stream" artifact with a pause of
// every between two of them, and completes. A canceled task stops at once.
func stream(ctx context.Context, em *server.Emitter, n int, every time.Duration) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	var tick *time.Ticker
	if every > 0 && n > 1 {
		tick = time.NewTicker(every)
		defer tick.Stop()
	}
	for i := 0; i < n; i++ {
		if i > 0 && tick != nil {
			select {
			case <-ctx.Done():
				return nil // canceled: the core already recorded it
			case <-tick.C:
			}
		}
		if err := streamChunk(em, i, n); err != nil {
			return err
		}
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

// streamChunk emits chunk i of n of the "stream" artifact: the first starts
// it, the others are appended, the last one finishes it.
func streamChunk(em *server.Emitter, i, n int) error {
	chunk := a2a.TextArtifact("stream", fmt.Sprintf("chunk %d", i))
	switch {
	case n == 1:
		return em.Artifact(chunk)
	case i == 0:
		return em.StartArtifact(chunk)
	case i == n-1:
		return em.FinishArtifact(chunk)
	}
	return em.AppendArtifact(chunk)
}

// echo completes the task with an "echo" artifact holding text.
func echo(em *server.Emitter, text string) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	if err := em.Artifact(a2a.TextArtifact("echo", text)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

// slow works for d (WORKING; returning early, with nothing more, when the
// task is canceled), then emits the artifact a (none when nil) and
// completes, with the status message text unless it is empty. "slow MS"
// and the kit's delayed behaviours (afterDelay) are all this.
func slow(ctx context.Context, em *server.Emitter, d time.Duration, a *a2a.Artifact, text string) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil // canceled: the core already recorded it
	case <-t.C:
	}
	if a != nil {
		if err := em.Artifact(a); err != nil {
			return err
		}
	}
	if text == "" {
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}
	return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, text)
}

// Card returns the agent card of a built-in agent ("echo", "conformance"
// or "acts") for the given interfaces, for example those of
// a2ahttp.Interfaces. Each declares streaming, one skill, and text/plain in
// and out (the acts agent application/json out too, for its data
// artifact).
//
// The card does not declare push notifications: server.New accepts that
// capability only with a Pusher to deliver them. To serve push, set
// card.Capabilities.PushNotifications to true and give server.Options.Push.
func Card(kind string, interfaces []*a2a.AgentInterface) (*a2a.AgentCard, error) {
	yes := true
	card := &a2a.AgentCard{
		SupportedInterfaces: interfaces,
		Version:             "1.0.0",
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Provider:            &a2a.AgentProvider{Organization: "Parley", Url: "https://parley.dev"},
	}
	switch kind {
	case "echo":
		card.Name = "Parley echo agent"
		card.Description = "Answers every message with a task whose artifact repeats the message's text."
		card.Skills = []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Repeats the text it receives.", Tags: []string{"echo", "test"}}}
	case "conformance":
		card.Name = "Parley conformance agent"
		card.Description = "A test agent whose behaviour is chosen by the first word of the message: message, input-required, auth-required, reject, fail, stream N, stream N every MS, slow MS, append-unknown, or one of the tck-* prefixes of ACTS (§11.2); anything else is echoed."
		card.Skills = []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Repeats the text it receives, or follows one of the test commands.",
			Tags: []string{"echo", "conformance", "test"}, Examples: []string{"hello", "stream 3", "stream 20 every 100", "input-required", "slow 2000"}}}
	case "acts":
		card.Name = "Parley ACTS agent"
		card.Description = "A test agent that speaks only the behaviour contract of ACTS, the A2A Conformance Test Specification (draft 0.1.0, §11.2): " +
			"the first text part of the message starts with the name of a behaviour, such as tck-complete-task; any other message is rejected."
		card.DefaultOutputModes = []string{"text/plain", "application/json"}
		card.Skills = []*a2a.AgentSkill{{Id: "acts", Name: "ACTS behaviours", Description: "Carries out the behaviour the message's first text part names.",
			Tags: []string{"acts", "conformance", "test"}, Examples: actsPrefixes()}}
	default:
		return nil, fmt.Errorf("agents: unknown agent %q (want %s)", kind, names)
	}
	return card, nil
}

// ByName returns a built-in agent by name.
func ByName(kind string) (server.Agent, error) {
	switch kind {
	case "echo":
		return Echo(), nil
	case "conformance":
		return Conformance(), nil
	case "acts":
		return ACTS(), nil
	}
	return nil, fmt.Errorf("agents: unknown agent %q (want %s)", kind, names)
}

// names lists the built-in agents, for errors.
const names = "echo, conformance or acts"

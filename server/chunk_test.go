package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// The named chunk methods set append and lastChunk as their names say, and
// mean the same as the deprecated Chunk with the matching booleans.
func TestArtifactChunkMethods(t *testing.T) {
	t.Parallel()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		for _, step := range []error{
			em.StartArtifact(a2a.TextArtifact("a", "1")),
			em.AppendArtifact(a2a.TextArtifact("a", "2")),
			em.FinishArtifact(a2a.TextArtifact("a", "3")),
			em.AppendArtifact(a2a.TextArtifact("b", "started by an append")),
			em.StartArtifact(a2a.TextArtifact("c", "old")),
			em.Artifact(a2a.TextArtifact("c", "new")),
			em.Chunk(a2a.TextArtifact("d", "deprecated"), true, true),
		} {
			if step != nil {
				return step
			}
		}
		for name, emit := range map[string]func(*a2a.Artifact) error{
			"StartArtifact": em.StartArtifact, "AppendArtifact": em.AppendArtifact, "FinishArtifact": em.FinishArtifact,
		} {
			if err := emit(&a2a.Artifact{ArtifactId: "bad"}); err == nil {
				t.Errorf("%s(an artifact without parts) = nil, want an error", name)
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	evs, err := testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq("chunks")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task:SUBMITTED", "artifact:a:1:append=false:last=false", "artifact:a:2:append=true:last=false",
		"artifact:a:3:append=true:last=true", "artifact:b:started by an append:append=true:last=false",
		"artifact:c:old:append=false:last=false", "artifact:c:new:append=false:last=true",
		"artifact:d:deprecated:append=true:last=true", "status:COMPLETED"}
	if got := describeAll(evs); !slices.Equal(got, want) {
		t.Errorf("events = %v\nwant %v", got, want)
	}
	task, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: evs[0].Response.GetTask().GetId()})
	var got []string
	for _, a := range task.GetArtifacts() {
		got = append(got, a.ArtifactId+"="+a2a.JoinText(a.Parts))
	}
	if want := []string{"a=1\n2\n3", "b=started by an append", "c=new", "d=deprecated"}; !slices.Equal(got, want) {
		t.Errorf("stored artifacts = %q, want %q", got, want)
	}
}

// The conformance agent's "stream N" starts, appends to and finishes one
// artifact (a single chunk is a whole artifact).
func TestConformanceStreamChunks(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Agent: agents.Conformance()})
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"stream 1", []string{"artifact:stream:chunk 0:append=false:last=true"}},
		{"stream 3", []string{"artifact:stream:chunk 0:append=false:last=false", "artifact:stream:chunk 1:append=true:last=false",
			"artifact:stream:chunk 2:append=true:last=true"}},
	} {
		evs, err := testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq(tc.text)))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range describeAll(evs) {
			if strings.HasPrefix(d, "artifact:") {
				got = append(got, d)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: artifact events = %q, want %q", tc.text, got, tc.want)
		}
	}
}

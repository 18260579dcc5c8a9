package cli_test

import (
	"fmt"
	"testing"
)

// TestSendIfGeneration: `send --task ID --if-generation N` is a 1.1
// conditional send on every binding: refused (exit 1, with what to do
// next) when the task is at another generation, taken when it is at N;
// task get in 1.1 shows the generation; the flag without --task, with a
// version that has no generations, or not a number, is a usage error.
func TestSendIfGeneration(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--protocol-versions", "1.1,1.0,0.3")
	url := "http://" + p.addr
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		out, _ = mustRun(t, 0, "task", "get", url, id, "--a2a-version", "1.1", "--json", "--binding", b)
		gen := fmt.Sprint(field(jsonOf(t, out), "generation"))
		out, _ = mustRun(t, 0, "task", "get", url, id, "--a2a-version", "1.1", "--binding", b)
		contains(t, "task get in 1.1", out, "Generation: "+gen+"\n")

		_, errs := mustRun(t, 1, "send", url, "--task", id, "--if-generation", "1", "--binding", b, "too late")
		contains(t, "stale send --binding "+b, errs, "TaskGenerationMismatchError", "expected 1 but current generation is "+gen,
			"hint: task "+id+" changed (it is at generation "+gen+" now)", "--if-generation "+gen)
		out, _ = mustRun(t, 0, "send", url, "--task", id, "--if-generation", gen, "--binding", b, "the missing piece")
		contains(t, "matching send --binding "+b, out, "COMPLETED")
	}
	out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	_, errs := mustRun(t, 1, "send", url, "--task", id, "--if-generation", "99", "--stream", "too late")
	contains(t, "stale send --stream", errs, "TaskGenerationMismatchError", "hint:")
	for _, args := range [][]string{
		{"send", url, "hi", "--if-generation", "3"},
		{"send", url, "hi", "--task", id, "--if-generation", "3", "--a2a-version", "1.0"},
		{"send", url, "hi", "--task", id, "--if-generation", "three"},
	} {
		mustRun(t, 2, args...)
	}
}

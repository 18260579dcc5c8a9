package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// bindingRun runs the checks of one interface.
type bindingRun struct {
	s       *session
	t       *target
	hook    *webhook
	results []Result
	// probes records outcomes of requests every binding makes, for the
	// functional equivalence check (§5.1).
	probes map[string]string

	unknownErr *result // GetTask of an unknown task
	listRes    *result // ListTasks with pageSize 1
}

// run runs every check of one interface, family by family.
func (b *bindingRun) run(ctx context.Context) {
	if !b.authChecks(ctx) {
		return
	}
	runSteps(ctx, b, b, unknownTaskSteps)
	runSteps(ctx, b, b, versionSteps)
	runSteps(ctx, b, b, extensionSteps)
	runSteps(ctx, b, b, capabilitySteps)
	b.mediaTypeChecks(ctx)
	switch b.t.binding {
	case a2a.BindingJSONRPC:
		runSteps(ctx, b, b, envelopeSteps)
	case a2a.BindingGRPC:
		runSteps(ctx, b, b, grpcSteps)
	default:
		runSteps(ctx, b, b, restSteps)
	}
	b.extendedCardChecks(ctx)
	if b.s.rep.Conformance {
		b.agentChecks(ctx)
	} else {
		for _, c := range agentCatalogue {
			b.check(c).skip("needs an agent speaking a behaviour contract (Parley's conformance agent, or ACTS's tck-* prefixes): %s", b.s.rep.Detected)
		}
	}
	b.listChecks(ctx) // after the agent checks, so that there are tasks to list
}

// check starts a result of this binding.
func (b *bindingRun) check(c Result) *rec {
	c.Binding = b.t.binding
	return &rec{Result: c, done: func(r *Result) {
		b.results = append(b.results, *r)
		b.s.progress(r)
	}}
}

// A step is one row of a family's table: the check it reports and the
// small function that runs it. The function gets the family's shared state
// (what earlier steps found) and the started result, and ends the result
// itself; a result it leaves unfinished is not reported.
type step[S any] struct {
	desc Result
	run  func(s S, ctx context.Context, r *rec)
}

// agentStep is the step of a check described in agentCatalogue.
func agentStep[S any](id string, run func(S, context.Context, *rec)) step[S] {
	return step[S]{desc: agentDesc(id), run: run}
}

// runSteps runs a family's steps in order on its state.
func runSteps[S any](ctx context.Context, b *bindingRun, state S, steps []step[S]) {
	for _, st := range steps {
		st.run(state, ctx, b.check(st.desc))
	}
}

// endAll ends every check of a family with the same verdict and reason,
// for a family that cannot run (a capability not declared, a missing
// option).
func endAll[S any](b *bindingRun, steps []step[S], v Verdict, reason string) {
	for _, st := range steps {
		b.check(st.desc).finish(v, "%s", reason)
	}
}

// unknownID returns an id no server has.
func unknownID(what string) string { return "parley-check-no-such-" + what + "-" + nonce() }

// nonce is eight random hex digits that tell one check's names from
// another's: the tail of a new id, which is random (its head is the time,
// the same for every check of a run, and two checks naming the same
// unknown task at once met a server's per-task locks instead of its
// answer to an unknown task).
func nonce() string {
	id := a2a.NewID()
	return id[len(id)-8:]
}

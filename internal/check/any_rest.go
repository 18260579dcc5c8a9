package check

import (
	"context"
	"net/http"
	"time"

	"parley.dev/parley/a2a"
)

// restSteps grade HTTP+JSON specifics that work against any agent.
var restSteps = []step[*bindingRun]{
	{Result{ID: "B1.subscribe-verbs", Row: "B1", Operation: a2a.MethodSubscribeToTask, Title: "the subscribe route answers POST and GET",
		Level: "MUST", Section: "§11.3.2, §5.3, D1",
		Requires: "SubscribeToTask is POST /tasks/{id}:subscribe in the prose and GET in the proto (an unresolved conflict): a server MUST serve the operation; accepting both verbs is the tolerant reading"},
		(*bindingRun).subscribeVerbs},
}

// subscribeVerbs subscribes to an unknown task with POST and with GET: a
// verb that reaches the operation gets its error, not a routing one.
func (b *bindingRun) subscribeVerbs(ctx context.Context, r *rec) {
	id := unknownID("task")
	served := func(res *result) bool {
		if res.failed() {
			return false
		}
		res.firstEventError()
		return res.err.is(a2a.CodeTaskNotFound) || res.err.is(a2a.CodeUnsupportedOperation)
	}
	post := b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{}, streamCtl{max: 5 * time.Second})
	get := b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{verb: http.MethodGet}, streamCtl{max: 5 * time.Second})
	r.sawBoth(post, get)
	if post.failed() || get.failed() {
		r.skip("could not complete the requests")
		return
	}
	p, g := served(post), served(get)
	switch {
	case p && g:
		r.same().pass("both verbs reach the operation (%s)", describeError(post.err))
	case p:
		r.differs("Parley serves both verbs").pass("POST served; GET answered %s (the proto's verb; D1)", get.outcome())
	case g:
		r.differs("Parley serves both verbs").pass("GET served; POST answered %s (the prose's verb; D1)", post.outcome())
	default:
		r.fail("neither verb reaches the operation: POST %s, GET %s", post.outcome(), get.outcome())
	}
}

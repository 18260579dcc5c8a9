package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// storeChecks are the tests that need every role at once: concurrent use
// that mixes them.
var storeChecks = []check[taskstore.Store]{
	{"Concurrent", testConcurrent},
	{"ConcurrentSameID", testConcurrentSameID},
}

// testConcurrent has workers in two scopes create, update, configure,
// read and clean up tasks at the same time, then checks nothing was lost.
func testConcurrent(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*8)
	for w := range workers {
		sc := scopeA
		if w%2 == 1 {
			sc = scopeB
		}
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%03d", w, i)
				if !concurrentTask(ctx, s, sc, id, i, errs) {
					continue
				}
				if i%10 == 0 {
					concurrentCleanup(ctx, s, errs)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, sc := range []taskstore.Scope{scopeA, scopeB} {
		want := workers / 2 * each
		got := walk(t, s, sc, taskstore.ListQuery{Limit: 7}, want)
		if len(got) != want {
			t.Errorf("scope %+v: walk returned %d tasks, want %d", sc, len(got), want)
		}
		if res := mustList(t, s, sc, taskstore.ListQuery{State: completed}); res.Total != want {
			t.Errorf("scope %+v: %d completed tasks, want %d", sc, res.Total, want)
		}
	}
	if active, err := s.ListActive(ctx); err != nil || len(active) != 0 {
		t.Errorf("ListActive after the run: %d tasks, %v; want none", len(active), err)
	}
	n, err := s.DeleteFinished(ctx, at(1000))
	if err != nil || n != workers*each {
		t.Errorf("DeleteFinished = %d, %v; want %d", n, err, workers*each)
	}
}

// concurrentTask is one worker step of testConcurrent: it takes task id
// from creation to completion, with a push configuration and a message
// record, reading as it goes. Errors go to errs; it reports false when the
// task could not be created.
func concurrentTask(ctx context.Context, s taskstore.Store, sc taskstore.Scope, id string, i int, errs chan<- error) bool {
	tk := task(id, fmt.Sprintf("ctx%d", i%3), submitted, at(i))
	if err := s.CreateTask(ctx, sc, tk, taskstore.Event{}); err != nil {
		errs <- fmt.Errorf("CreateTask %s: %w", id, err)
		return false
	}
	if err := s.Append(ctx, sc, id, taskstore.Event{Message: message("m-"+id, id, tk.ContextId, "hi")}); err != nil {
		errs <- fmt.Errorf("Append message %s: %w", id, err)
	}
	if err := s.Append(ctx, sc, id, statusAt(id, 1, working, at(i+1))); err != nil {
		errs <- fmt.Errorf("Append working %s: %w", id, err)
	}
	if err := s.PutPushConfig(ctx, sc, v10(&a2a.TaskPushNotificationConfig{Id: "p", TaskId: id, Url: "https://h.example"}), taskstore.Event{}); err != nil {
		errs <- fmt.Errorf("PutPushConfig %s: %w", id, err)
	}
	if _, err := s.PutMessage(ctx, sc, &taskstore.MessageRecord{MessageID: "m-" + id, Digest: "d", TaskID: id, Created: at(i)}); err != nil {
		errs <- fmt.Errorf("PutMessage %s: %w", id, err)
	}
	if _, err := s.GetTask(ctx, sc, id); err != nil {
		errs <- fmt.Errorf("GetTask %s: %w", id, err)
	}
	if _, err := s.ListTasks(ctx, sc, taskstore.ListQuery{Limit: 5, ContextID: "ctx1"}); err != nil {
		errs <- fmt.Errorf("ListTasks: %w", err)
	}
	if _, err := s.ListPushConfigs(ctx, sc, id); err != nil {
		errs <- fmt.Errorf("ListPushConfigs %s: %w", id, err)
	}
	if err := s.Append(ctx, sc, id, statusAt(id, 2, completed, at(i+2))); err != nil {
		errs <- fmt.Errorf("Append completed %s: %w", id, err)
	}
	return true
}

// concurrentCleanup runs the cross-scope reads and cleanups of
// testConcurrent, with cuts that remove nothing. Errors go to errs.
func concurrentCleanup(ctx context.Context, s taskstore.Store, errs chan<- error) {
	if _, err := s.ListActive(ctx); err != nil {
		errs <- fmt.Errorf("ListActive: %w", err)
	}
	if _, err := s.DeleteFinished(ctx, at(-1)); err != nil {
		errs <- fmt.Errorf("DeleteFinished: %w", err)
	}
	if _, err := s.DeleteMessagesBefore(ctx, at(-1)); err != nil {
		errs <- fmt.Errorf("DeleteMessagesBefore: %w", err)
	}
}

// testConcurrentSameID: of many concurrent CreateTask calls with one id,
// from different scopes, exactly one succeeds; likewise exactly one of
// many concurrent PutMessage calls with one id records it.
func testConcurrentSameID(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, exists, fresh, seen := 0, 0, 0, 0
	var other []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := others[i%len(others)]
			err := s.CreateTask(ctx, sc, task("same", "c", working, at(i)), taskstore.Event{})
			old, perr := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "same", Digest: fmt.Sprint(i), Created: at(i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, taskstore.ErrExists):
				exists++
			default:
				other = append(other, err)
			}
			switch {
			case perr != nil:
				other = append(other, perr)
			case old == nil:
				fresh++
			default:
				seen++
			}
		}()
	}
	wg.Wait()
	for _, err := range other {
		t.Error(err)
	}
	if created != 1 || exists != n-1 {
		t.Errorf("concurrent CreateTask of one id: %d created, %d ErrExists; want 1 and %d", created, exists, n-1)
	}
	if fresh != 1 || seen != n-1 {
		t.Errorf("concurrent PutMessage of one id: %d new, %d existing; want 1 and %d", fresh, seen, n-1)
	}
}

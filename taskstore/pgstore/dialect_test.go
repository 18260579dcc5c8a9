package pgstore

import "testing"

// TestDialectFindsTasksAsTaskByID checks that the statements rendered by
// the shared dialect find a task as this package's own statements do
// (taskByID), so that both kinds keep the planner on the primary key.
func TestDialectFindsTasksAsTaskByID(t *testing.T) {
	if got := dialect.TaskByID("", 1); got != taskByID {
		t.Errorf("dialect.TaskByID = %q, want %q", got, taskByID)
	}
	if got := dialect.TaskByID("t", 1); got != taskByIDAs {
		t.Errorf("dialect.TaskByID(t) = %q, want %q", got, taskByIDAs)
	}
}

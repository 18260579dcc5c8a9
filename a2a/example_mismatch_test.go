package a2a_test

import (
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
)

// A conditional send (the A2A 1.1 preview's ifGenerationMatch) refused
// because the task moved on: the error names both generations.
func ExampleMismatchedGenerations() {
	// What a client's SendMessage expecting generation 3 of a task now at
	// 5 returns, on any binding.
	var err error = fmt.Errorf("send: %w", a2a.GenerationMismatch("task-abc", 3, 5))
	if errors.Is(err, a2a.ErrTaskGenerationMismatch) {
		expected, current, _ := a2a.MismatchedGenerations(err)
		fmt.Printf("expected %d, the task is at %d: read it again before sending\n", expected, current)
	}
	// Output: expected 3, the task is at 5: read it again before sending
}

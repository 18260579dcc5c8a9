package a2a

import (
	"errors"
	"strconv"
)

// The ErrorInfo metadata keys of a TaskGenerationMismatchError (spec
// dev-1.1 §11.6): the task, the generation the send expected
// (configuration.ifGenerationMatch) and the one the task has, both as
// decimal strings.
const (
	MetaTaskID             = "taskId"
	MetaExpectedGeneration = "expectedGeneration"
	MetaCurrentGeneration  = "currentGeneration"
)

// GenerationMismatch returns the TaskGenerationMismatchError of a send
// that expected task taskID at generation expected while it is at
// current (the A2A 1.1 preview's conditional send, spec dev-1.1 §3.2.2).
func GenerationMismatch(taskID string, expected, current int64) *Error {
	return &Error{Code: CodeTaskGenerationMismatch,
		Message: "task generation mismatch: expected " + strconv.FormatInt(expected, 10) +
			" but current generation is " + strconv.FormatInt(current, 10),
		Metadata: map[string]string{
			MetaTaskID:             taskID,
			MetaExpectedGeneration: strconv.FormatInt(expected, 10),
			MetaCurrentGeneration:  strconv.FormatInt(current, 10),
		}}
}

// MismatchedGenerations reports, for an error whose chain holds a
// TaskGenerationMismatchError (errors.Is(err, ErrTaskGenerationMismatch)),
// the generation the refused send expected and the one the task had, as
// its metadata says. ok is false for any other error; a generation the
// metadata lacks or does not spell as a decimal integer is -1. A client
// that gets it reads the task again (GetTask) before it decides whether
// to send again with the current generation.
func MismatchedGenerations(err error) (expected, current int64, ok bool) {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTaskGenerationMismatch {
		return 0, 0, false
	}
	return metaInt(e.Metadata, MetaExpectedGeneration), metaInt(e.Metadata, MetaCurrentGeneration), true
}

// metaInt is the decimal integer of metadata key k, or -1.
func metaInt(m map[string]string, k string) int64 {
	n, err := strconv.ParseInt(m[k], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

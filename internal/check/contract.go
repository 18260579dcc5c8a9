package check

import (
	"strings"

	"parley.dev/parley/a2a"
)

// The behaviour checks (agent_*.go) need an agent that does what they ask:
// finish a task, park it in INPUT_REQUIRED, reply with a message, stream
// chunks, work until canceled… Two contracts say how to ask: the words of
// Parley's conformance agent, and the tck-* message prefixes of ACTS (the
// A2A Conformance Test Specification, §11.2), which other SDKs' test
// agents speak. The checks are written in the conformance agent's words;
// say translates them for an ACTS agent.

// The contracts (Options.Contract, Report.Contract).
const (
	ContractConformance = "conformance"
	ContractACTS        = "acts"
	ContractNone        = "none"
)

// actsWords are the conformance agent's words the checks send, in ACTS's
// terms. A word ACTS has no behaviour for maps to "" (the check that needs
// it is skipped); a word not listed is sent as it is (a follow-up whose
// text does not matter).
var actsWords = map[string]string{
	"hello":          "tck-artifact-text", // a task completed with a text artifact
	"message":        "tck-message-response",
	"input-required": "tck-multi-turn", // INPUT_REQUIRED until a follow-up says done
	"follow-up":      "done",
	"more":           "done",
	"auth-required":  "tck-auth-required", // used by ACTS's suite, beyond the §11.2 table
	"reject":         "tck-reject-task",
	"fail":           "tck-task-failure",
	"slow 300":       "tck-long-running",
	"slow 700":       "tck-long-running",
	"slow 900":       "tck-long-running",
	"slow 3000":      "tck-cancel", // works until canceled
	"stream 3":       "tck-stream-chunked",
	"append-unknown": "",
}

// say returns the text that asks the target's agent for what the
// conformance agent's word asks, and whether its contract has it.
func (s *session) say(word string) (string, bool) {
	if s.rep.Contract != ContractACTS {
		return word, true
	}
	t, listed := actsWords[word]
	if !listed {
		return word, true
	}
	return t, t != ""
}

// msg is a user message saying word in the target's contract (see say);
// a word the contract lacks is sent as it is.
func (b *bindingRun) msg(word string) *a2a.Message {
	t, _ := b.s.say(word)
	return a2a.UserMessage(t)
}

// acts reports whether the target is driven through ACTS's prefixes.
func (b *bindingRun) acts() bool { return b.s.rep.Contract == ContractACTS }

// parseContract checks an Options.Contract value.
func parseContract(c string) (string, bool) {
	switch c = strings.ToLower(strings.TrimSpace(c)); c {
	case "", ContractConformance, ContractACTS, ContractNone:
		return c, true
	}
	return c, false
}

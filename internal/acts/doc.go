// Package acts runs ACTS files, the A2A Conformance Test Specification
// (draft 0.1.0): declarative tests of an A2A server in YAML (or JSON).
//
// The package reads the documents (Load), evaluates the assertion
// grammar (ACTS §5), interpolates variables and captures (§8), and runs
// each test's steps (§4, §6, §7, §9, §10) through a Driver, which speaks
// one binding on the wire; package internal/check provides the drivers,
// over its own raw wire layer. Run returns one Report per binding in the
// JSON form of ACTS §13.
//
// Where the draft contradicts the A2A v1.0.1 specification (its error
// table, its HTTP+JSON push routes, its error names), the runner follows
// the specification and says so in the step's notes; docs/acts.md lists
// these places.
package acts

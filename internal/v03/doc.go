// Package v03 is Parley's codec for A2A protocol v0.3: the v0.3 wire shapes
// as Go structs and their translation to and from the v1.0 types of package
// a2a. Nothing else in Parley knows v0.3: the core and the store work on
// v1.0 types only, and the v0.3 bindings (package v03/v03http) decode with
// this package, call the same a2a.Invoker as the v1.0 bindings, and encode
// the answers back.
//
// v0.3 had two shapes. Its JSON-RPC binding carries the v0.3 JSON schema
// (Message, Task and the other unprefixed types: "kind" discriminators,
// lowercase task states, "final" on status updates, file and data parts),
// its HTTP+JSON binding the v0.3 proto (package a2a.v1) as ProtoJSON
// (PMessage, PTask and the other P types: "ROLE_USER", "TASK_STATE_*",
// "content" instead of "parts", resource names such as
// "tasks/{id}/pushNotificationConfigs/{configId}").
//
// Where the two versions cannot be mapped losslessly the choice is written
// in the doc of the function that makes it (the …ToV1 and …FromV1
// functions, WithMembers, Final).
package v03

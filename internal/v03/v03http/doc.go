// Package v03http serves A2A v0.3 beside v1.0 on Parley's HTTP port: the
// v0.3 JSON-RPC methods (message/send, tasks/get, …) at the JSON-RPC URL
// and the v0.3 HTTP+JSON routes under /v1/. Requests are decoded with
// package v03 into v1.0 requests and handed to the same a2a.Invoker as the
// v1.0 bindings, so tasks, messages and push configurations are shared
// between the versions; only the wire shapes differ.
//
// Version routing (decision B7): a v0.3 route is served as v0.3
// when A2A-Version is absent (which means 0.3, spec §3.6.2), 0.3 or 1.0 (a
// v1.0 operation of that name does not exist); any other version gets
// VersionNotSupportedError in v0.3's shape. With v0.3 turned off the v0.3
// JSON-RPC methods get VersionNotSupportedError too.
package v03http

// Package interop holds no code, only tests: Parley against the official
// A2A JavaScript SDK (@a2a-js/sdk, installed by `npm ci --prefix
// internal/interop/js`), in both directions and on every binding the SDK speaks —
// Parley's client against the SDK's server, the SDK's client against
// Parley's server — plus `parley check` grading the SDK's server. In CI the
// tests are required; elsewhere they skip when Node.js or the packages are
// missing, saying so (and the command that installs them) on the terminal.
// The official Go SDK's tests are a module of their own, internal/interop/gosdk.
package interop

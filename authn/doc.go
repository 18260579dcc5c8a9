// Package authn holds the authenticators of a production deployment: JWT
// bearer tokens checked against an OpenID Connect issuer's keys (JWT),
// API keys stored as hashes (APIKeys), and TLS client certificates
// (ClientCert). Each has the method Authenticate(*http.Request) (string,
// error) of a2ahttp.Authenticator: "" when the request carries no
// credentials of its kind (the next authenticator is asked), an error when
// it carries some that are refused (the request ends with 401), or the
// principal's name, which scopes the caller's tasks.
//
// Principals of every method share one name space: a JWT whose subject is
// "alice" and an API key named "alice" are the same caller.
//
// Each is also an a2ahttp.RightsAuthenticator: a credential may carry
// rights (a2a.Rights; spec §3.3.2), which narrow the operations its caller
// may call — a JWT by a claim (JWTOptions.RightsClaim), an API key by a
// third field of its line, a client certificate by its principal
// (ClientCert.Rights). A credential that declares no rights has every
// right, as before rights existed.
package authn

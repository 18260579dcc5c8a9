package server

// The checks every operation starts with: authentication, the protocol
// version, required extensions and the capability gates.

import (
	"context"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// call is what every operation learns about its caller.
type call struct {
	info  *a2a.CallInfo
	scope taskstore.Scope
}

// begin runs the checks common to every operation op (an a2a.Method
// constant), in this order: authentication, the caller's right to call op
// (its a2a.Method.Right; spec §3.3.2), protocol version (decision B7),
// required extensions, the length of the tenant (Limits.MaxIDBytes). It
// returns the caller's scope for the tenant. Nothing is read from the
// store before it returns.
func (s *Server) begin(ctx context.Context, op, tenant string) (call, error) {
	ci := a2a.CallInfoFrom(ctx)
	if s.opts.RequireAuth && (ci == nil || ci.Principal == "") {
		return call{}, a2a.NewError(a2a.CodeUnauthenticated, "authentication required: send a bearer token in the Authorization header")
	}
	if err := a2a.Authorize(ci, a2a.MethodByName(op).Right); err != nil {
		return call{}, err
	}
	v, err := s.callVersion(ci)
	if err != nil {
		return call{}, err
	}
	if ci == nil {
		ci = &a2a.CallInfo{}
	}
	ci.Served = v
	if err := s.activateExtensions(ci); err != nil {
		return call{}, err
	}
	if v := s.limits.id(nil, "", "tenant", tenant); len(v) > 0 {
		return call{}, a2a.InvalidParams(v...)
	}
	return call{info: ci, scope: taskstore.Scope{Tenant: tenant, Owner: ci.Principal}}, nil
}

// beginPush is begin plus the push capability gate (spec §3.3.4).
func (s *Server) beginPush(ctx context.Context, op, tenant string) (call, error) {
	c, err := s.begin(ctx, op, tenant)
	if err == nil && !s.pushEnabled() {
		err = a2a.NewError(a2a.CodePushNotificationNotSupported, "this agent does not support push notifications")
	}
	return c, err
}

// DefaultProtocolVersions are the protocol versions served when
// Options.ProtocolVersions is empty, newest first: v1.0, and v0.3 through
// its own bindings' translation (the defaults of the version table; the
// 1.1 preview is not one).
func DefaultProtocolVersions() []string { return version.Defaults() }

// callVersion decides the version of a call (decision B7, spec §3.6.2)
// once, from the A2A-Version the caller sent and the version its
// operation's wire form implies (a2a.CallInfo.Wire). A call that came
// through no binding, with no CallInfo on its context (the Go API used in
// process), is served in the newest version.
func (s *Server) callVersion(ci *a2a.CallInfo) (string, error) {
	if ci == nil {
		return s.opts.ProtocolVersions[0], nil
	}
	return version.Choose(ci.Version, ci.Wire, s.opts.ProtocolVersions)
}

// activateExtensions checks required extensions and records which requested
// extensions the agent declares (they are echoed back in A2A-Extensions, as
// the A2A extensions guide recommends).
func (s *Server) activateExtensions(ci *a2a.CallInfo) error {
	declared := s.card.GetCapabilities().GetExtensions()
	var missing []string
	for _, ext := range declared {
		if ext.GetRequired() && !slices.Contains(ci.Extensions, ext.GetUri()) {
			missing = append(missing, ext.GetUri())
		}
	}
	if len(missing) > 0 {
		e := a2a.NewError(a2a.CodeExtensionSupportRequired,
			"the agent requires these extensions; activate them with the A2A-Extensions header: %s", strings.Join(missing, ", "))
		return e.WithMeta("extensions", strings.Join(missing, ","))
	}
	ci.Activated = ci.Activated[:0]
	for _, uri := range ci.Extensions {
		isDeclared := slices.ContainsFunc(declared, func(ext *a2a.AgentExtension) bool { return ext.GetUri() == uri })
		if isDeclared && !slices.Contains(ci.Activated, uri) {
			ci.Activated = append(ci.Activated, uri)
		}
	}
	return nil
}

// streaming reports whether the card declares streaming.
func (s *Server) streaming() bool { return s.card.GetCapabilities().GetStreaming() }

// pushEnabled reports whether the card declares push notifications.
func (s *Server) pushEnabled() bool { return s.card.GetCapabilities().GetPushNotifications() }

// ProtocolVersions returns the A2A versions the server serves, newest
// first (Options.ProtocolVersions).
func (s *Server) ProtocolVersions() []string { return slices.Clone(s.opts.ProtocolVersions) }

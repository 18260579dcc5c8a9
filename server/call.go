package server

// The checks every operation starts with: authentication, the protocol
// version, required extensions and the capability gates.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// call is what every operation learns about its caller.
type call struct {
	info  *a2a.CallInfo
	scope taskstore.Scope
}

// begin runs the checks common to every operation, in this order:
// authentication, protocol version (docs/decisions.md#b7), required
// extensions, the length of the tenant (Limits.MaxIDBytes). It returns the
// caller's scope for the tenant.
func (s *Server) begin(ctx context.Context, tenant string) (call, error) {
	ci := a2a.CallInfoFrom(ctx)
	if ci == nil {
		ci = &a2a.CallInfo{}
	}
	if s.opts.RequireAuth && ci.Principal == "" {
		return call{}, a2a.NewError(a2a.CodeUnauthenticated, "authentication required: send a bearer token in the Authorization header")
	}
	if err := checkVersion(ci.Version); err != nil {
		return call{}, err
	}
	if err := s.activateExtensions(ci); err != nil {
		return call{}, err
	}
	if v := s.limits.id(nil, "", "tenant", tenant); len(v) > 0 {
		return call{}, a2a.InvalidParams(v...)
	}
	return call{info: ci, scope: taskstore.Scope{Tenant: tenant, Owner: ci.Principal}}, nil
}

// beginPush is begin plus the push capability gate (spec §3.3.4).
func (s *Server) beginPush(ctx context.Context, tenant string) (call, error) {
	c, err := s.begin(ctx, tenant)
	if err == nil && !s.pushEnabled() {
		err = a2a.NewError(a2a.CodePushNotificationNotSupported, "this agent does not support push notifications")
	}
	return c, err
}

// SupportedVersions are the protocol versions this server serves.
var SupportedVersions = []string{a2a.ProtocolVersion}

// checkVersion applies decision B7 (docs/decisions.md#b7): compare
// Major.Minor, ignore a patch, and treat a missing or empty version as 0.3
// (spec §3.6.2), which is not served.
func checkVersion(v string) error {
	asked, mm := a2a.RequestedVersion(v)
	if slices.Contains(SupportedVersions, mm) {
		return nil
	}
	msg := fmt.Sprintf("A2A protocol version %q is not supported; supported versions: %s", asked, strings.Join(SupportedVersions, ", "))
	if strings.TrimSpace(v) == "" {
		msg = fmt.Sprintf("no A2A-Version given, which means 0.3; this server supports only %s: send the A2A-Version service parameter %s (an HTTP header, or gRPC metadata a2a-version)",
			strings.Join(SupportedVersions, ", "), a2a.ProtocolVersion)
	}
	e := a2a.NewError(a2a.CodeVersionNotSupported, "%s", msg)
	return e.WithMeta("supportedVersions", strings.Join(SupportedVersions, ",")).WithMeta("requestedVersion", asked)
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

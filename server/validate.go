package server

// Request validation shared by the operations, and the errors they answer
// with for a missing task.

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// validateSend checks a SendMessageRequest before anything runs (spec
// §3.3.2): the push capability when the request carries a push
// configuration, then the sizes (Limits) alone, so that an oversized
// request costs no more than counting, then the REQUIRED fields, the role,
// the history length, the inline push URL and the media types.
func (s *Server) validateSend(req *a2a.SendMessageRequest) error {
	cfg := req.GetConfiguration()
	push := cfg.GetTaskPushNotificationConfig()
	if push != nil && !s.pushEnabled() {
		return a2a.NewError(a2a.CodePushNotificationNotSupported, "this agent does not support push notifications")
	}
	l := &s.limits
	v := l.message(nil, "message", req.GetMessage())
	v = l.metadata(v, "", "metadata", req.GetMetadata())
	v = l.list(v, "configuration", "acceptedOutputModes", cfg.GetAcceptedOutputModes())
	if push != nil {
		v = l.pushConfig(v, "configuration.taskPushNotificationConfig", push)
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	v = a2a.CheckRequired(req)
	if m := req.GetMessage(); m != nil {
		v = append(v, clientRole(m.Role)...)
	}
	v = append(v, historyCheck("configuration.historyLength", historyOf(cfg))...)
	v = append(v, historyCheck("configuration.timelineLength", timelineOf(cfg))...)
	if push != nil {
		v = append(v, validatePushURL("configuration.taskPushNotificationConfig.url", push.GetUrl())...)
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	return s.checkMediaTypes(req.GetMessage().GetParts())
}

// clientRole checks the role of a client message: ROLE_USER (a missing
// role is CheckRequired's to report). A number the Role enum does not
// define is refused too, rather than stored and echoed: every decoder
// keeps such a number (proto3 enums are open; a2a.Unmarshal refuses only
// undefined names), so the core's check is the one all bindings share.
func clientRole(r a2a.Role) []a2a.FieldViolation {
	switch r {
	case a2a.Role_ROLE_USER, a2a.Role_ROLE_UNSPECIFIED:
		return nil
	case a2a.Role_ROLE_AGENT:
		return []a2a.FieldViolation{{Field: "message.role", Description: "a client message must have role ROLE_USER"}}
	}
	return []a2a.FieldViolation{{Field: "message.role",
		Description: fmt.Sprintf("%d is not a Role value; a client message must have role ROLE_USER", int32(r))}}
}

// checkMediaTypes refuses the first part whose media type (given, or
// implied by a text or data part) the card's defaultInputModes do not
// accept.
func (s *Server) checkMediaTypes(parts []*a2a.Part) error {
	for i, p := range parts {
		mt := p.GetMediaType()
		if mt == "" {
			switch p.GetContent().(type) {
			case *a2a.Part_Text:
				mt = "text/plain"
			case *a2a.Part_Data:
				mt = "application/json"
			}
		}
		if mt != "" && !acceptsMedia(s.card.GetDefaultInputModes(), mt) {
			return a2a.NewError(a2a.CodeContentTypeNotSupported,
				"message.parts[%d]: media type %q is not accepted; the agent accepts %s", i, mt, strings.Join(s.card.GetDefaultInputModes(), ", ")).
				WithMeta("mediaType", mt)
		}
	}
	return nil
}

// acceptsMedia reports whether a media type matches one of the modes
// (exact, "type/*" or "*/*"; parameters ignored).
func acceptsMedia(modes []string, mt string) bool {
	base := mediaBase(mt)
	for _, m := range modes {
		mb := mediaBase(m)
		if mb == "*/*" || mb == base || (strings.HasSuffix(mb, "/*") && strings.HasPrefix(base, strings.TrimSuffix(mb, "*"))) {
			return true
		}
	}
	return false
}

// mediaBase is a media type without its parameters, in lower case; a type
// without parameters (the common case) is not parsed.
func mediaBase(mt string) string {
	if !strings.Contains(mt, ";") {
		return strings.ToLower(strings.TrimSpace(mt))
	}
	if base, _, err := mime.ParseMediaType(mt); err == nil {
		return base
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// validatePushURL checks a webhook URL is an absolute http(s) URL with a
// host (TaskPushNotificationConfig.url, spec §13.2).
// An empty URL is left to the REQUIRED check (a2a.CheckRequired), which
// reports it once.
func validatePushURL(field, raw string) []a2a.FieldViolation {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []a2a.FieldViolation{{Field: field, Description: "must be an absolute http or https URL"}}
	}
	return nil
}

// validate checks REQUIRED fields plus extra violations.
func validate(m proto.Message, extra ...[]a2a.FieldViolation) error {
	v := a2a.CheckRequired(m)
	for _, e := range extra {
		v = append(v, e...)
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	return nil
}

// historyCheck rejects a negative historyLength (decision B4), and a
// negative timelineLength (1.1 preview, spec §3.2.4: the same rule).
func historyCheck(field string, n *int32) []a2a.FieldViolation {
	if n != nil && *n < 0 {
		return []a2a.FieldViolation{{Field: field, Description: "must be zero or positive"}}
	}
	return nil
}

// storeErr maps a store error for a task id.
func storeErr(err error, id string) error {
	if errors.Is(err, taskstore.ErrNotFound) {
		return taskNotFound(id)
	}
	return a2a.Internal(err)
}

// taskNotFound is the TaskNotFoundError for a task id. The id is clipped:
// with Limits.MaxIDBytes off, it may be long.
func taskNotFound(id string) error {
	id = clip(id)
	return a2a.NewError(a2a.CodeTaskNotFound, "task %q not found", id).WithMeta("taskId", id)
}

package a2a

// The REQUIRED rules of the A2A v1.0 schema: which fields must be present,
// and CheckRequired, which reports every one that is missing. Marshal uses
// the same table to decide which zero values it still writes.

import (
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// requiredFields lists every field annotated REQUIRED in the A2A v1.0 proto
// (lf.a2a.v1's REQUIRED field_behavior annotations, spec §5.7), by full field
// name.
var requiredFields = map[protoreflect.FullName]bool{
	"lf.a2a.v1.Task.id":     true,
	"lf.a2a.v1.Task.status": true,

	"lf.a2a.v1.TaskStatus.state": true,

	"lf.a2a.v1.Message.message_id": true,
	"lf.a2a.v1.Message.role":       true,
	"lf.a2a.v1.Message.parts":      true,

	"lf.a2a.v1.Artifact.artifact_id": true,
	"lf.a2a.v1.Artifact.parts":       true,

	"lf.a2a.v1.TaskStatusUpdateEvent.task_id":    true,
	"lf.a2a.v1.TaskStatusUpdateEvent.context_id": true,
	"lf.a2a.v1.TaskStatusUpdateEvent.status":     true,

	"lf.a2a.v1.TaskArtifactUpdateEvent.task_id":    true,
	"lf.a2a.v1.TaskArtifactUpdateEvent.context_id": true,
	"lf.a2a.v1.TaskArtifactUpdateEvent.artifact":   true,

	"lf.a2a.v1.AuthenticationInfo.scheme": true,

	"lf.a2a.v1.AgentInterface.url":              true,
	"lf.a2a.v1.AgentInterface.protocol_binding": true,
	"lf.a2a.v1.AgentInterface.protocol_version": true,

	"lf.a2a.v1.AgentCard.name":                 true,
	"lf.a2a.v1.AgentCard.description":          true,
	"lf.a2a.v1.AgentCard.supported_interfaces": true,
	"lf.a2a.v1.AgentCard.version":              true,
	"lf.a2a.v1.AgentCard.capabilities":         true,
	"lf.a2a.v1.AgentCard.default_input_modes":  true,
	"lf.a2a.v1.AgentCard.default_output_modes": true,
	"lf.a2a.v1.AgentCard.skills":               true,

	"lf.a2a.v1.AgentProvider.url":          true,
	"lf.a2a.v1.AgentProvider.organization": true,

	"lf.a2a.v1.AgentSkill.id":          true,
	"lf.a2a.v1.AgentSkill.name":        true,
	"lf.a2a.v1.AgentSkill.description": true,
	"lf.a2a.v1.AgentSkill.tags":        true,

	"lf.a2a.v1.AgentCardSignature.protected": true,
	"lf.a2a.v1.AgentCardSignature.signature": true,

	"lf.a2a.v1.TaskPushNotificationConfig.url": true,

	"lf.a2a.v1.APIKeySecurityScheme.location": true,
	"lf.a2a.v1.APIKeySecurityScheme.name":     true,

	"lf.a2a.v1.HTTPAuthSecurityScheme.scheme": true,

	"lf.a2a.v1.OAuth2SecurityScheme.flows": true,

	"lf.a2a.v1.OpenIdConnectSecurityScheme.open_id_connect_url": true,

	"lf.a2a.v1.AuthorizationCodeOAuthFlow.authorization_url": true,
	"lf.a2a.v1.AuthorizationCodeOAuthFlow.token_url":         true,
	"lf.a2a.v1.AuthorizationCodeOAuthFlow.scopes":            true,

	"lf.a2a.v1.ClientCredentialsOAuthFlow.token_url": true,
	"lf.a2a.v1.ClientCredentialsOAuthFlow.scopes":    true,

	"lf.a2a.v1.DeviceCodeOAuthFlow.device_authorization_url": true,
	"lf.a2a.v1.DeviceCodeOAuthFlow.token_url":                true,
	"lf.a2a.v1.DeviceCodeOAuthFlow.scopes":                   true,

	"lf.a2a.v1.SendMessageRequest.message": true,

	"lf.a2a.v1.GetTaskRequest.id": true,

	"lf.a2a.v1.ListTasksResponse.tasks":           true,
	"lf.a2a.v1.ListTasksResponse.next_page_token": true,
	"lf.a2a.v1.ListTasksResponse.page_size":       true,
	"lf.a2a.v1.ListTasksResponse.total_size":      true,

	"lf.a2a.v1.CancelTaskRequest.id": true,

	"lf.a2a.v1.SubscribeToTaskRequest.id": true,

	"lf.a2a.v1.GetTaskPushNotificationConfigRequest.task_id": true,
	"lf.a2a.v1.GetTaskPushNotificationConfigRequest.id":      true,

	"lf.a2a.v1.DeleteTaskPushNotificationConfigRequest.task_id": true,
	"lf.a2a.v1.DeleteTaskPushNotificationConfigRequest.id":      true,

	"lf.a2a.v1.ListTaskPushNotificationConfigsRequest.task_id": true,
}

// zeroAllowed holds REQUIRED fields for which CheckRequired accepts the zero
// value: they must always be present on the wire, but an empty value is
// meaningful (an empty result page, the last page, zero matches).
var zeroAllowed = map[protoreflect.FullName]bool{
	"lf.a2a.v1.ListTasksResponse.tasks":           true,
	"lf.a2a.v1.ListTasksResponse.next_page_token": true,
	"lf.a2a.v1.ListTasksResponse.page_size":       true,
	"lf.a2a.v1.ListTasksResponse.total_size":      true,
}

// IsRequired reports whether fd is annotated REQUIRED in the A2A proto.
// Such fields are always written by Marshal and checked by CheckRequired.
func IsRequired(fd protoreflect.FieldDescriptor) bool {
	return fd != nil && requiredFields[fd.FullName()]
}

// FieldViolation describes one REQUIRED-field problem found by CheckRequired.
type FieldViolation struct {
	// Field is the path of the field in JSON naming, e.g.
	// "message.parts[0]" or "message.messageId". Map entries are written as
	// name["key"]. The empty string denotes the checked message itself.
	Field string
	// Description says what is wrong, in words suitable for a client.
	Description string
}

// Violation descriptions.
const (
	descMissing   = "required field is missing"
	descEmptyList = "required field must contain at least one element"
	descPartEmpty = "part must set one of text, raw, url or data"
)

// CheckRequired walks m and returns a violation for every REQUIRED field that
// is unset or holds its default value (for repeated and map fields: is
// empty) and for every Part without a content member. The four
// ListTasksResponse fields are exempt from the zero-value check: an empty
// page, an empty nextPageToken (last page) and zero sizes are valid answers.
// Fields inside an unset message are not examined. The result is nil when
// nothing is wrong; its order is deterministic (field-number order, list
// order, sorted map keys).
func CheckRequired(m proto.Message) []FieldViolation {
	if m == nil {
		return nil
	}
	var c checker
	c.message(m.ProtoReflect(), make([]byte, 0, 64))
	return c.out
}

// checker collects the violations of one CheckRequired call.
type checker struct {
	out []FieldViolation
	all bool // walk every field, even those that cannot break a rule (tests)
}

// add records a violation at path.
func (c *checker) add(path []byte, desc string) {
	c.out = append(c.out, FieldViolation{Field: string(path), Description: desc})
}

// appendPathName appends a member name to a field path.
func appendPathName(path []byte, name string) []byte {
	if len(path) > 0 {
		path = append(path, '.')
	}
	return append(path, name...)
}

// appendPathIndex appends a list index to a field path.
func appendPathIndex(path []byte, i int) []byte {
	path = append(path, '[')
	path = strconv.AppendInt(path, int64(i), 10)
	return append(path, ']')
}

// message checks every field of m, and the content of m when it is a Part;
// the types of checker.typed by their Go fields. Well-known types have no
// REQUIRED fields and are not examined.
func (c *checker) message(m protoreflect.Message, path []byte) {
	if !c.all && c.typed(m.Interface(), path) {
		return
	}
	md := m.Descriptor()
	info := infoFor(md)
	if info.wkt != wktNone {
		return
	}
	if info.isPart {
		if od := md.Oneofs().ByName("content"); od != nil && m.WhichOneof(od) == nil {
			c.add(path, descPartEmpty)
		}
	}
	for i := range info.fields {
		if f := &info.fields[i]; f.check || c.all {
			c.field(m, f, appendPathName(path, f.jsonName))
		}
	}
}

// field checks one field of m, at path p, and the messages it holds.
func (c *checker) field(m protoreflect.Message, f *fieldInfo, p []byte) {
	fd := f.fd
	switch {
	case fd.IsList():
		l := m.Get(fd).List()
		if f.required && l.Len() == 0 && !zeroAllowed[fd.FullName()] {
			c.add(p, descEmptyList)
		}
		if fd.Message() != nil {
			for j := range l.Len() {
				c.message(l.Get(j).Message(), appendPathIndex(p, j))
			}
		}
	case fd.IsMap():
		mp := m.Get(fd).Map()
		if f.required && mp.Len() == 0 {
			c.add(p, descEmptyList)
		}
		if fd.MapValue().Message() != nil && mp.Len() > 0 {
			c.mapValues(mp, fd, p)
		}
	default:
		has := m.Has(fd)
		if f.required && !has && !zeroAllowed[fd.FullName()] {
			c.add(p, descMissing)
		}
		if has && fd.Message() != nil {
			c.message(m.Get(fd).Message(), p)
		}
	}
}

// mapValues checks the message values of a map field in the order of their
// keys' text, naming each as path["key"] (path[key] for non-string keys).
func (c *checker) mapValues(mp protoreflect.Map, fd protoreflect.FieldDescriptor, path []byte) {
	keys := make([]protoreflect.MapKey, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, func(a, b protoreflect.MapKey) int {
		return strings.Compare(a.String(), b.String())
	})
	for _, k := range keys {
		p := append(path, '[')
		if fd.MapKey().Kind() == protoreflect.StringKind {
			p = strconv.AppendQuote(p, k.String())
		} else {
			p = append(p, k.String()...)
		}
		p = append(p, ']')
		c.message(mp.Get(k).Message(), p)
	}
}

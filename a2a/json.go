package a2a

// ProtoJSON codec for the A2A wire format.
//
// Reading is delegated to protojson (tolerant: unknown members are ignored,
// both lowerCamelCase and snake_case member names are accepted), with one
// extra rule: an enum given by a name the schema does not define (such as the
// v0.3 spellings "completed" or "user") is an error instead of being silently
// dropped.
//
// Writing uses the encoder in this file, which walks protoreflect directly
// and appends to a byte slice. It follows the ProtoJSON mapping with these
// A2A-specific choices:
//
//   - Fields listed in requiredFields are always written, even when they hold
//     their zero value ("tasks":[], "nextPageToken":"", "pageSize":0). The
//     exception is a REQUIRED singular message field that is unset: it has no
//     zero value to write (writing {} would read back as a set field), so it
//     is omitted, and CheckRequired reports it. REQUIRED oneof members do not
//     exist in the schema and would only be written when set.
//   - Other fields are written only when populated (protoreflect Has).
//   - Fields are written in field-number order and map keys in sorted order,
//     so the output is deterministic.
//   - google.protobuf.Timestamp is written as UTC RFC 3339 with exactly three
//     fractional digits ("2026-01-02T03:04:05.000Z"); finer precision is
//     truncated, not rounded.
//   - Invalid UTF-8 in strings and map keys is replaced by U+FFFD, so the
//     output is always valid JSON and Marshal never fails because of string
//     content.
//   - Enum numbers without a name in the schema are written as JSON numbers
//     (the ProtoJSON rule), which Unmarshal accepts again.
//   - A google.protobuf.Value with no kind set, or holding NaN or an
//     infinity, is an error. Of package google.protobuf only Timestamp,
//     Struct, Value, ListValue and Empty are supported; any other message
//     from that package (Any, Duration, FieldMask, wrappers, descriptors) is
//     not used by A2A and is rejected with an *EncodeError.

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// ---------------------------------------------------------------------------
// REQUIRED fields

// requiredFields lists every field annotated REQUIRED in the A2A v1.0 proto
// (brief §2 "presence" column), by full field name.
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

// ---------------------------------------------------------------------------
// Per-type metadata, computed once per message descriptor.

type wktKind uint8

const (
	wktNone wktKind = iota
	wktTimestamp
	wktStruct
	wktValue
	wktListValue
	wktEmpty
	wktUnsupported // any other google.protobuf message
)

type fieldInfo struct {
	fd       protoreflect.FieldDescriptor
	key      []byte // `"jsonName":`
	jsonName string
	required bool
	// always: write the field even when it is not populated (REQUIRED
	// scalars, enums, lists and maps outside oneofs).
	always bool
	// enumNames holds the defined value names when the field (or its map
	// value) is an enum; nil otherwise, and nil for google.protobuf.NullValue.
	enumNames map[string]bool
}

type msgInfo struct {
	fields  []fieldInfo           // sorted by field number
	byName  map[string]*fieldInfo // JSON names and proto names, as protojson accepts them
	wkt     wktKind
	hasEnum bool // an enum field is reachable through non-WKT messages
	isPart  bool
}

var msgInfos sync.Map // protoreflect.MessageDescriptor -> *msgInfo

const partFullName protoreflect.FullName = "lf.a2a.v1.Part"

func infoFor(md protoreflect.MessageDescriptor) *msgInfo {
	if v, ok := msgInfos.Load(md); ok {
		return v.(*msgInfo)
	}
	info := &msgInfo{wkt: wktOf(md), isPart: md.FullName() == partFullName}
	fds := md.Fields()
	info.fields = make([]fieldInfo, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		name := fd.JSONName()
		req := requiredFields[fd.FullName()]
		singularMsg := fd.Message() != nil && !fd.IsList() && !fd.IsMap()
		info.fields[i] = fieldInfo{
			fd:       fd,
			key:      []byte(`"` + name + `":`),
			jsonName: name,
			required: req,
			always:   req && fd.ContainingOneof() == nil && !singularMsg,
		}
	}
	slices.SortFunc(info.fields, func(a, b fieldInfo) int { return cmp.Compare(a.fd.Number(), b.fd.Number()) })
	info.byName = make(map[string]*fieldInfo, 2*len(info.fields))
	for i := range info.fields {
		f := &info.fields[i]
		f.enumNames = enumNameSet(f.fd)
		info.byName[string(f.fd.Name())] = f
	}
	for i := range info.fields { // JSON names win, as in protojson
		f := &info.fields[i]
		info.byName[f.jsonName] = f
	}
	info.hasEnum = reachesEnum(md, map[protoreflect.FullName]bool{})
	v, _ := msgInfos.LoadOrStore(md, info)
	return v.(*msgInfo)
}

func enumNameSet(fd protoreflect.FieldDescriptor) map[string]bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	ed := fd.Enum()
	if ed == nil || ed.FullName() == "google.protobuf.NullValue" {
		return nil
	}
	vals := ed.Values()
	names := make(map[string]bool, vals.Len())
	for i := range vals.Len() {
		names[string(vals.Get(i).Name())] = true
	}
	return names
}

func wktOf(md protoreflect.MessageDescriptor) wktKind {
	if md.ParentFile().Package() != "google.protobuf" {
		return wktNone
	}
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return wktTimestamp
	case "google.protobuf.Struct":
		return wktStruct
	case "google.protobuf.Value":
		return wktValue
	case "google.protobuf.ListValue":
		return wktListValue
	case "google.protobuf.Empty":
		return wktEmpty
	}
	return wktUnsupported
}

func reachesEnum(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if wktOf(md) != wktNone || seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		switch fd.Kind() {
		case protoreflect.EnumKind:
			return true
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if reachesEnum(fd.Message(), seen) {
				return true
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Decoding

// MaxDepth bounds the nesting of decoded JSON (messages, Struct and Value
// members): deeper input is refused with a DecodeError instead of costing
// stack and time.
const MaxDepth = 64

var unmarshalOptions = protojson.UnmarshalOptions{DiscardUnknown: true, RecursionLimit: MaxDepth}

// DecodeError reports wire input that could not be decoded into a protocol
// message. Its text names the expected message type and the problem, and is
// safe to return to a client.
type DecodeError struct {
	// Type is the full name of the message that was being decoded.
	Type protoreflect.FullName
	// Detail describes the problem (position information included when
	// known).
	Detail string
	// Syntax is true when the input is not well-formed JSON at all, as
	// opposed to well-formed JSON that does not fit the message schema.
	Syntax bool
}

// Error implements error.
func (e *DecodeError) Error() string {
	return "invalid JSON for " + string(e.Type) + ": " + e.Detail
}

// maxDetail bounds the length of DecodeError.Detail, which may quote input.
const maxDetail = 256

// Unmarshal decodes ProtoJSON b into m. It accepts lowerCamelCase and
// original proto member names, enum values by name or number, and ignores
// members it does not know. Enum names not defined by the schema are
// rejected. Errors are of type *DecodeError. On error m is reset.
func Unmarshal(b []byte, m proto.Message) error {
	md := m.ProtoReflect().Descriptor()
	if err := unmarshalOptions.Unmarshal(b, m); err != nil {
		proto.Reset(m)
		detail := cleanDetail(err.Error())
		if len(bytes.TrimSpace(b)) == 0 {
			detail = "empty input"
		}
		return &DecodeError{Type: md.FullName(), Detail: detail, Syntax: !json.Valid(b)}
	}
	if infoFor(md).hasEnum {
		s := enumScanner{b: b}
		if err := s.message(md); err != nil {
			proto.Reset(m)
			return &DecodeError{Type: md.FullName(), Detail: cleanDetail(err.Error())}
		}
	}
	return nil
}

// cleanDetail strips protobuf-go's "proto:" prefixes (which come with a
// deliberately unstable space character) and bounds the length.
func cleanDetail(s string) string {
	for _, p := range []string{"proto: ", "proto:\u00a0"} {
		s = strings.ReplaceAll(s, p, "")
	}
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = strings.TrimSpace(s)
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	if s == "" {
		s = "malformed input"
	}
	return s
}

// enumScanner walks JSON that protojson has already accepted, following the
// message schema, and reports enum members whose string value is not a name
// defined by the enum. (protojson with DiscardUnknown silently drops them.)
// Because the input is known to be valid JSON matching the schema, the
// scanner does not re-validate syntax.
type enumScanner struct {
	b []byte
	i int
}

func (s *enumScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *enumScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str consumes a string token and returns its raw body (without quotes) and
// whether it contains escapes.
func (s *enumScanner) str() (raw []byte, escaped bool) {
	s.ws()
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped
		}
		s.i++
	}
	return s.b[start:], escaped
}

func unescape(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	var out string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &out) != nil {
		return string(raw)
	}
	return out
}

// skip consumes one JSON value of any kind.
func (s *enumScanner) skip() {
	switch s.peek() {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return
				}
			}
			s.i++
		}
	default: // number, true, false, null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.i++
		}
	}
}

func (s *enumScanner) message(md protoreflect.MessageDescriptor) *enumError {
	info := infoFor(md)
	if s.peek() != '{' || !info.hasEnum {
		s.skip()
		return nil
	}
	s.i++
	for {
		switch s.peek() {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			continue
		}
		raw, esc := s.str()
		var f *fieldInfo
		if esc {
			f = info.byName[unescape(raw, esc)]
		} else {
			f = info.byName[string(raw)] // no allocation for a map lookup
		}
		s.peek()
		s.i++ // ':'
		if f == nil {
			s.skip()
			continue
		}
		if err := s.field(f); err != nil {
			err.prepend(f.jsonName)
			return err
		}
	}
}

func (s *enumScanner) field(f *fieldInfo) *enumError {
	fd := f.fd
	switch {
	case fd.IsMap():
		if s.peek() != '{' {
			s.skip()
			return nil
		}
		s.i++
		for {
			switch s.peek() {
			case '}':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			raw, esc := s.str()
			s.peek()
			s.i++ // ':'
			if err := s.single(fd.MapValue(), f.enumNames); err != nil {
				err.prepend("[" + strconv.Quote(unescape(raw, esc)) + "]")
				return err
			}
		}
	case fd.IsList():
		if s.peek() != '[' {
			s.skip()
			return nil
		}
		s.i++
		for n := 0; ; {
			switch s.peek() {
			case ']':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			if err := s.single(fd, f.enumNames); err != nil {
				err.prepend("[" + strconv.Itoa(n) + "]")
				return err
			}
			n++
		}
	default:
		return s.single(fd, f.enumNames)
	}
}

// single checks one value of kind fd.Kind(); names is the set of valid enum
// names when fd is an enum.
func (s *enumScanner) single(fd protoreflect.FieldDescriptor, names map[string]bool) *enumError {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if s.peek() != '"' || names == nil {
			s.skip()
			return nil
		}
		raw, esc := s.str()
		if esc {
			if name := unescape(raw, esc); !names[name] {
				return &enumError{value: name}
			}
		} else if !names[string(raw)] {
			return &enumError{value: string(raw)}
		}
		return nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return s.message(fd.Message())
	}
	s.skip()
	return nil
}

// enumError reports an undefined enum name. The path is collected while the
// scanner unwinds, so nothing is allocated for valid input.
type enumError struct {
	value string
	segs  []string // path segments, innermost first
}

func (e *enumError) prepend(seg string) { e.segs = append(e.segs, seg) }

func (e *enumError) Error() string {
	var b strings.Builder
	b.WriteString("invalid value for enum field ")
	for i := len(e.segs) - 1; i >= 0; i-- {
		seg := e.segs[i]
		if i < len(e.segs)-1 && seg[0] != '[' {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	b.WriteString(": ")
	b.WriteString(strconv.Quote(e.value))
	return b.String()
}

// ---------------------------------------------------------------------------
// Encoding

// maxEncodeDepth guards against unbounded recursion in hand-built messages
// (for example a google.protobuf.Value nested a million levels deep). It is
// well above protojson's default decode recursion limit, so anything
// Unmarshal accepts can be written back.
const maxEncodeDepth = 1 << 16

type encoder struct {
	depth   int
	strKeys [][]string
	mapKeys [][]protoreflect.MapKey
}

var encoderPool = sync.Pool{New: func() any { return new(encoder) }}

// Marshal returns the ProtoJSON encoding of m under the A2A presence rules
// (see AppendJSON).
func Marshal(m proto.Message) ([]byte, error) {
	return AppendJSON(nil, m)
}

// AppendJSON appends the ProtoJSON encoding of m to dst and returns the
// extended slice. Members use lowerCamelCase names and appear in field-number
// order; populated fields and all REQUIRED fields are written; enums are
// written by name, 64-bit integers as strings, bytes as padded standard
// base64 and timestamps as UTC RFC 3339 with millisecond precision. A nil m
// is written as {}. On error dst is returned with its original length.
func AppendJSON(dst []byte, m proto.Message) ([]byte, error) {
	if m == nil {
		return append(dst, "{}"...), nil
	}
	e := encoderPool.Get().(*encoder)
	out, err := e.message(dst, m.ProtoReflect())
	e.depth = 0
	encoderPool.Put(e)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// EncodeError reports a message that cannot be represented in ProtoJSON.
type EncodeError struct {
	// Field is the full name of the offending field or message.
	Field protoreflect.FullName
	// Detail describes the problem.
	Detail string
}

// Error implements error.
func (e *EncodeError) Error() string {
	return "cannot encode " + string(e.Field) + " as JSON: " + e.Detail
}

var errTooDeep = errors.New("message nesting too deep")

func (e *encoder) enter(name protoreflect.FullName) error {
	e.depth++
	if e.depth > maxEncodeDepth {
		return &EncodeError{Field: name, Detail: errTooDeep.Error()}
	}
	return nil
}

func (e *encoder) message(b []byte, m protoreflect.Message) ([]byte, error) {
	md := m.Descriptor()
	if err := e.enter(md.FullName()); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()

	info := infoFor(md)
	switch info.wkt {
	case wktTimestamp:
		return appendTimestamp(b, m)
	case wktStruct:
		s, err := concrete(m, (*structpb.Struct)(nil))
		if err != nil {
			return b, err
		}
		return e.structFields(b, s.GetFields())
	case wktValue:
		v, err := concrete(m, (*structpb.Value)(nil))
		if err != nil {
			return b, err
		}
		return e.value(b, v)
	case wktListValue:
		l, err := concrete(m, (*structpb.ListValue)(nil))
		if err != nil {
			return b, err
		}
		return e.listValue(b, l.GetValues())
	case wktUnsupported:
		return b, &EncodeError{Field: md.FullName(), Detail: "well-known type not supported by the A2A codec"}
	}

	b = append(b, '{')
	first := true
	for i := range info.fields {
		f := &info.fields[i]
		fd := f.fd
		if !f.always && !m.Has(fd) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		var err error
		switch {
		case fd.IsMap():
			b, err = e.mapField(b, fd, m.Get(fd).Map())
		case fd.IsList():
			b, err = e.listField(b, fd, m.Get(fd).List())
		default:
			b, err = e.single(b, fd, m.Get(fd))
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// concrete returns m as the generated Go type T, converting through the
// binary encoding when m is some other implementation (e.g. dynamicpb).
func concrete[T proto.Message](m protoreflect.Message, _ T) (T, error) {
	if v, ok := m.Interface().(T); ok {
		return v, nil
	}
	var zero T
	out := zero.ProtoReflect().New().Interface().(T)
	raw, err := proto.Marshal(m.Interface())
	if err == nil {
		err = proto.Unmarshal(raw, out)
	}
	if err != nil {
		return zero, &EncodeError{Field: m.Descriptor().FullName(), Detail: "unreadable well-known type"}
	}
	return out, nil
}

func (e *encoder) listField(b []byte, fd protoreflect.FieldDescriptor, l protoreflect.List) ([]byte, error) {
	b = append(b, '[')
	for i := range l.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.single(b, fd, l.Get(i)); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func (e *encoder) mapField(b []byte, fd protoreflect.FieldDescriptor, mp protoreflect.Map) ([]byte, error) {
	keys := e.takeMapKeys()
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	kk := fd.MapKey().Kind()
	slices.SortFunc(keys, func(a, c protoreflect.MapKey) int {
		switch kk {
		case protoreflect.StringKind:
			return strings.Compare(a.String(), c.String())
		case protoreflect.BoolKind:
			return cmp.Compare(boolInt(a.Bool()), boolInt(c.Bool()))
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return cmp.Compare(a.Uint(), c.Uint())
		default:
			return cmp.Compare(a.Int(), c.Int())
		}
	})
	vfd := fd.MapValue()
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		switch kk {
		case protoreflect.StringKind:
			b = appendString(b, k.String())
		case protoreflect.BoolKind:
			b = append(b, '"')
			b = strconv.AppendBool(b, k.Bool())
			b = append(b, '"')
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			b = append(b, '"')
			b = strconv.AppendUint(b, k.Uint(), 10)
			b = append(b, '"')
		default:
			b = append(b, '"')
			b = strconv.AppendInt(b, k.Int(), 10)
			b = append(b, '"')
		}
		b = append(b, ':')
		if b, err = e.single(b, vfd, mp.Get(k)); err != nil {
			break
		}
	}
	e.giveMapKeys(keys)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

func (e *encoder) takeMapKeys() []protoreflect.MapKey {
	if n := len(e.mapKeys); n > 0 {
		k := e.mapKeys[n-1]
		e.mapKeys = e.mapKeys[:n-1]
		return k[:0]
	}
	return nil
}

func (e *encoder) giveMapKeys(k []protoreflect.MapKey) {
	clear(k)
	e.mapKeys = append(e.mapKeys, k[:0])
}

func (e *encoder) takeStrKeys() []string {
	if n := len(e.strKeys); n > 0 {
		k := e.strKeys[n-1]
		e.strKeys = e.strKeys[:n-1]
		return k[:0]
	}
	return nil
}

func (e *encoder) giveStrKeys(k []string) {
	clear(k)
	e.strKeys = append(e.strKeys, k[:0])
}

// single writes one non-repeated value (also used for list elements and map
// values).
func (e *encoder) single(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int(), 10)
		return append(b, '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		b = strconv.AppendUint(b, v.Uint(), 10)
		return append(b, '"'), nil
	case protoreflect.FloatKind:
		return appendProtoFloat(b, v.Float(), 32), nil
	case protoreflect.DoubleKind:
		return appendProtoFloat(b, v.Float(), 64), nil
	case protoreflect.StringKind:
		return appendString(b, v.String()), nil
	case protoreflect.BytesKind:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes())
		return append(b, '"'), nil
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			return append(b, "null"...), nil
		}
		if ev := ed.Values().ByNumber(v.Enum()); ev != nil {
			b = append(b, '"')
			b = append(b, ev.Name()...)
			return append(b, '"'), nil
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(b, v.Message())
	}
	return b, &EncodeError{Field: fd.FullName(), Detail: "unsupported field kind " + fd.Kind().String()}
}

// appendProtoFloat writes a float or double field: finite values as JSON
// numbers, NaN and infinities as the ProtoJSON strings.
func appendProtoFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return appendFloat(b, f, bits)
}

// appendFloat writes a finite number in the shortest form that reads back
// exactly: plain decimal notation for magnitudes in [1e-6, 1e21), exponent
// notation otherwise (as JavaScript does).
func appendFloat(b []byte, f float64, bits int) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		if bits == 32 {
			a = float64(float32(a))
		}
		if a < 1e-6 || a >= 1e21 {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Shorten a two-digit negative exponent such as "e-07" to "e-7".
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Quotes, backslashes and control
// characters are escaped; invalid UTF-8 bytes become U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Valid range of google.protobuf.Timestamp: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

func appendTimestamp(b []byte, m protoreflect.Message) ([]byte, error) {
	fds := m.Descriptor().Fields()
	secs := m.Get(fds.ByNumber(1)).Int()
	nanos := m.Get(fds.ByNumber(2)).Int()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999_999_999 {
		return b, &EncodeError{Field: m.Descriptor().FullName(), Detail: "timestamp out of range"}
	}
	b = append(b, '"')
	b = time.Unix(secs, nanos).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"'), nil
}

func (e *encoder) structFields(b []byte, fields map[string]*structpb.Value) ([]byte, error) {
	if err := e.enter("google.protobuf.Struct"); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()
	keys := e.takeStrKeys()
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, err = e.value(b, fields[k]); err != nil {
			break
		}
	}
	e.giveStrKeys(keys)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func (e *encoder) listValue(b []byte, vals []*structpb.Value) ([]byte, error) {
	if err := e.enter("google.protobuf.ListValue"); err != nil {
		return b, err
	}
	defer func() { e.depth-- }()
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.value(b, v); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func (e *encoder) value(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return append(b, "null"...), nil
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			return b, &EncodeError{Field: "google.protobuf.Value", Detail: "NaN and infinite numbers have no JSON representation"}
		}
		return appendFloat(b, k.NumberValue, 64), nil
	case *structpb.Value_StringValue:
		return appendString(b, k.StringValue), nil
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	case *structpb.Value_StructValue:
		return e.structFields(b, k.StructValue.GetFields())
	case *structpb.Value_ListValue:
		return e.listValue(b, k.ListValue.GetValues())
	}
	return b, &EncodeError{Field: "google.protobuf.Value", Detail: "no kind set"}
}

// ---------------------------------------------------------------------------
// REQUIRED checking

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

type checker struct {
	out []FieldViolation
}

func (c *checker) add(path []byte, desc string) {
	c.out = append(c.out, FieldViolation{Field: string(path), Description: desc})
}

func appendPathName(path []byte, name string) []byte {
	if len(path) > 0 {
		path = append(path, '.')
	}
	return append(path, name...)
}

func appendPathIndex(path []byte, i int) []byte {
	path = append(path, '[')
	path = strconv.AppendInt(path, int64(i), 10)
	return append(path, ']')
}

func (c *checker) message(m protoreflect.Message, path []byte) {
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
		f := &info.fields[i]
		fd := f.fd
		p := appendPathName(path, f.jsonName)
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
}

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

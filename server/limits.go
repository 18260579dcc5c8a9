package server

// Bounds on what one request may carry (Limits): sizes of lists, of
// identifiers, of metadata and of push configurations, checked before
// anything is stored or looked up. The per-caller quotas on tasks are
// type quotas.

import (
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// Limits bound what one request, and one caller, can make the server hold
// (spec §13.4: "Agents SHOULD implement appropriate limits on message
// sizes, file sizes, and request complexity"). The core enforces them, so
// every binding refuses the same requests in the same way.
//
// Every field follows one rule: zero means the default named in its
// comment, and a negative value means no limit. The size limits are
// refused with InvalidParamsError (JSON-RPC -32602, HTTP 400, gRPC
// INVALID_ARGUMENT) whose message and google.rpc.BadRequest field
// violation name the field and the limit; an over-long identifier is never
// echoed back. The quotas (MaxOpenTasks, TaskRate) are refused with
// UnsupportedOperationError; see MaxOpenTasks for why.
//
// The body of a request is bounded by the binding (a2ahttp.Options.MaxBody)
// and its nesting by a2a.MaxDepth; these limits bound what a body within
// those sizes may still pile up.
type Limits struct {
	// MaxParts bounds the parts of one message (default 1,000). It also
	// bounds the other lists a client message carries, counted
	// separately: message.referenceTaskIds, message.extensions and
	// configuration.acceptedOutputModes. Agent output is held to it too:
	// a reply, a status message or an artifact chunk with more parts is
	// refused with an error from the Emitter (an artifact may still grow
	// past it by appended chunks).
	MaxParts int
	// MaxIDBytes bounds the length in bytes of every identifier a request
	// carries (default 256): tenant, task id, context id, message id, push
	// configuration id, and each entry of referenceTaskIds; it also bounds
	// each extension URI, each accepted output mode and each part's
	// mediaType. Agent output is held to it for message and artifact ids.
	// Identifiers are checked before any store lookup.
	//
	// Whatever this limit, every string it bounds must be UTF-8 text
	// without control characters (Unicode category Cc: U+0000–U+001F,
	// U+007F and U+0080–U+009F), format characters (category Cf: U+200B
	// zero width space, U+202E right-to-left override, U+FEFF, …) or the
	// line and paragraph separators U+2028 and U+2029: an id is echoed in
	// logs, terminals, HTTP headers, URLs, lists and the inspector, where a
	// NUL or an escape sequence does harm and an invisible or reordering
	// character makes one id look like another, and JSON text is UTF-8
	// (spec §14.1.1) as is a proto string. "Agents MUST validate all input
	// parameters before processing" (spec §3.3.2, §13.4): such a value is
	// refused with InvalidParamsError naming the field and the offending
	// character's code and position, never the value. (Category Cf also
	// holds the zero width joiner of emoji sequences: an id is a name, not
	// text to display.)
	MaxIDBytes int
	// MaxMetadataBytes bounds each google.protobuf.Struct a request or an
	// agent event carries (default 64 KiB): the request's metadata, a
	// message's, each part's and each artifact's. The size is that of the
	// Struct's protobuf binary encoding, which for JSON input is close to,
	// and usually below, the size of its JSON text.
	MaxMetadataBytes int
	// MaxPushConfigs bounds the push notification configurations one task
	// may have (default 50). Creating one more (by
	// CreateTaskPushNotificationConfig or inline in a follow-up
	// SendMessage) is refused; replacing a configuration by its id is not
	// counted as one more.
	MaxPushConfigs int
	// MaxPushURLBytes bounds the length of a push configuration's url
	// (default 2,048 bytes).
	MaxPushURLBytes int
	// MaxPushSecretBytes bounds the length of a push configuration's token
	// and of its authentication credentials, each (default 4 KiB). Control
	// characters are refused in both, and the authentication scheme must
	// be an HTTP token (RFC 9110 §5.6.2), whatever the limits: they are
	// sent in HTTP headers, where a CR or LF would make every delivery
	// fail.
	MaxPushSecretBytes int
	// MaxOpenTasks bounds the tasks one caller may have open, that is not
	// in a terminal state (default 10,000). A caller is the authenticated
	// principal, across tenants; with authentication off all callers are
	// one caller. (The tenant is chosen by the client, so counting per
	// tenant would let one caller open a quota's worth of tasks under
	// every tenant name it invents.)
	//
	// The count is kept in memory by this process: a task counts from the
	// moment its message is accepted until it becomes terminal, or until
	// its execution ends without creating it (a direct reply). Tasks
	// removed by Retention are terminal already. At start-up the store's
	// active tasks (SUBMITTED, WORKING) are failed by recovery, so nothing
	// is carried over; tasks an earlier process left INPUT_REQUIRED or
	// AUTH_REQUIRED are not counted. With several replicas on one store
	// each counts what it started.
	//
	// A new task over the quota is refused with UnsupportedOperationError
	// (JSON-RPC -32004, HTTP 400, gRPC FAILED_PRECONDITION) whose
	// google.rpc.ErrorInfo metadata says quota "maxOpenTasks" and the
	// limit. The spec defines no quota error (spec §3.3.2); this is the
	// A2A error for "an aspect of the operation is not supported now",
	// it carries ErrorInfo on every binding (so the quota is machine
	// readable), and unlike InvalidParams it does not blame the request,
	// and unlike InternalError it does not invite a retry. Follow-ups on
	// existing tasks and resends of an accepted message are never refused
	// by the quota.
	MaxOpenTasks int
	// TaskRate is how many new tasks per second one caller (as for
	// MaxOpenTasks) may start, as a token bucket of TaskBurst tasks
	// refilled at this rate. Zero (the default) and negative values turn
	// it off. Over the rate a new task is refused like MaxOpenTasks, with
	// quota "taskRate" and "retryAfterMs" in the ErrorInfo metadata.
	TaskRate float64
	// TaskBurst is the size of TaskRate's bucket; zero or negative means
	// TaskRate rounded up (at least 1).
	TaskBurst int
}

// Defaults of Limits.
const (
	DefaultMaxParts           = 1000
	DefaultMaxIDBytes         = 256
	DefaultMaxMetadataBytes   = 64 << 10
	DefaultMaxPushConfigs     = 50
	DefaultMaxPushURLBytes    = 2048
	DefaultMaxPushSecretBytes = 4 << 10
	DefaultMaxOpenTasks       = 10000
)

// noLimit is a resolved limit that nothing reaches.
const noLimit = math.MaxInt

// limits are Limits resolved: every bound is positive (noLimit when off).
type limits struct {
	parts, idBytes, metadataBytes, pushConfigs, urlBytes, secretBytes int
}

// resolve returns the bound for a Limits field.
func resolve(v, def int) int {
	switch {
	case v > 0:
		return v
	case v == 0:
		return def
	}
	return noLimit
}

// resolved returns the request limits of l.
func (l Limits) resolved() limits {
	return limits{
		parts:         resolve(l.MaxParts, DefaultMaxParts),
		idBytes:       resolve(l.MaxIDBytes, DefaultMaxIDBytes),
		metadataBytes: resolve(l.MaxMetadataBytes, DefaultMaxMetadataBytes),
		pushConfigs:   resolve(l.MaxPushConfigs, DefaultMaxPushConfigs),
		urlBytes:      resolve(l.MaxPushURLBytes, DefaultMaxPushURLBytes),
		secretBytes:   resolve(l.MaxPushSecretBytes, DefaultMaxPushSecretBytes),
	}
}

// tooLong is the violation of a string over max bytes. It names the
// length and the limit, never the value.
func tooLong(field string, n, max int, name string) a2a.FieldViolation {
	return a2a.FieldViolation{Field: field,
		Description: fmt.Sprintf("is %d bytes long; at most %d bytes are allowed (limit %s)", n, max, name)}
}

// path joins a field path and a member name ("" prefix: the name alone).
// Violations build their paths only when they are found, so that a valid
// request allocates nothing here.
func path(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// id appends a violation when the identifier at prefix.name is longer than
// the limit, or else when it holds a control character or is not UTF-8.
func (l *limits) id(v []a2a.FieldViolation, prefix, name, id string) []a2a.FieldViolation {
	if len(id) > l.idBytes {
		return append(v, tooLong(path(prefix, name), len(id), l.idBytes, "maxIdBytes"))
	}
	if f := textFault(id); f != "" {
		v = append(v, a2a.FieldViolation{Field: path(prefix, name), Description: f})
	}
	return v
}

// textFault describes the first thing in s that an identifier may not
// hold: a control character (Unicode category Cc: C0, DEL or C1), a
// format character (category Cf), a line or paragraph separator (U+2028,
// U+2029) or a byte that does not belong to a UTF-8 sequence. It returns
// "" when there is none. The value itself is not quoted, only the
// position and the character's code. Every identifier check of every
// operation comes here (Limits.MaxIDBytes).
func textFault(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return fmt.Sprintf("contains a control character (byte %d is %s)", i, byteName(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("is not valid UTF-8 (byte %d is 0x%02x)", i, c)
		case r <= 0x9f:
			return fmt.Sprintf("contains a control character (U+%04X at byte %d)", r, i)
		case r == '\u2028' || r == '\u2029':
			return fmt.Sprintf("contains a line or paragraph separator (U+%04X at byte %d)", r, i)
		case unicode.Is(unicode.Cf, r):
			return fmt.Sprintf("contains a format character (U+%04X at byte %d)", r, i)
		}
		i += n
	}
	return ""
}

// list appends violations for the list of identifiers at prefix.name: more
// than the parts limit of entries, or an entry longer than the identifier
// limit or holding what textFault refuses (the first one only: one is
// enough to say what is wrong).
func (l *limits) list(v []a2a.FieldViolation, prefix, name string, ids []string) []a2a.FieldViolation {
	if len(ids) > l.parts {
		return append(v, tooMany(path(prefix, name), len(ids), l.parts, "entries", "maxParts"))
	}
	for i, id := range ids {
		if len(id) > l.idBytes {
			return append(v, tooLong(path(prefix, name)+"["+strconv.Itoa(i)+"]", len(id), l.idBytes, "maxIdBytes"))
		}
		if f := textFault(id); f != "" {
			return append(v, a2a.FieldViolation{Field: path(prefix, name) + "[" + strconv.Itoa(i) + "]", Description: f})
		}
	}
	return v
}

// tooMany is the violation of a list over max entries.
func tooMany(field string, n, max int, what, name string) a2a.FieldViolation {
	return a2a.FieldViolation{Field: field,
		Description: fmt.Sprintf("has %d %s; at most %d are allowed (limit %s)", n, what, max, name)}
}

// metadata appends a violation when the Struct at prefix.name is over
// the size limit.
func (l *limits) metadata(v []a2a.FieldViolation, prefix, name string, md *structpb.Struct) []a2a.FieldViolation {
	if n := l.overMetadata(md); n > 0 {
		v = append(v, bigMetadata(path(prefix, name), n, l.metadataBytes))
	}
	return v
}

// overMetadata returns the encoded size of md when it is over the limit,
// and 0 otherwise.
func (l *limits) overMetadata(md *structpb.Struct) int {
	if md == nil || l.metadataBytes == noLimit {
		return 0
	}
	if n := proto.Size(md); n > l.metadataBytes {
		return n
	}
	return 0
}

// bigMetadata is the violation of a Struct of n bytes over max.
func bigMetadata(field string, n, max int) a2a.FieldViolation {
	return a2a.FieldViolation{Field: field,
		Description: fmt.Sprintf("is %d bytes encoded; at most %d bytes are allowed (limit maxMetadataBytes)", n, max)}
}

// message appends the violations of a message's sizes: its ids, lists,
// metadata and parts. prefix is the message's field path ("message").
// It looks at nothing else, so it is cheap to run before the rest of the
// validation.
func (l *limits) message(v []a2a.FieldViolation, prefix string, m *a2a.Message) []a2a.FieldViolation {
	if m == nil {
		return v
	}
	v = l.id(v, prefix, "messageId", m.MessageId)
	v = l.id(v, prefix, "contextId", m.ContextId)
	v = l.id(v, prefix, "taskId", m.TaskId)
	v = l.list(v, prefix, "referenceTaskIds", m.ReferenceTaskIds)
	v = l.list(v, prefix, "extensions", m.Extensions)
	v = l.metadata(v, prefix, "metadata", m.Metadata)
	return l.partList(v, prefix, m.Parts)
}

// partList appends the violations of the parts at prefix.parts: too many of
// them, or the first part whose mediaType or metadata is too large.
func (l *limits) partList(v []a2a.FieldViolation, prefix string, parts []*a2a.Part) []a2a.FieldViolation {
	if len(parts) > l.parts {
		return append(v, tooMany(path(prefix, "parts"), len(parts), l.parts, "parts", "maxParts"))
	}
	for i, p := range parts {
		if p == nil {
			continue
		}
		if len(p.MediaType) > l.idBytes {
			return append(v, tooLong(partField(prefix, i, "mediaType"), len(p.MediaType), l.idBytes, "maxIdBytes"))
		}
		if f := textFault(p.MediaType); f != "" {
			return append(v, a2a.FieldViolation{Field: partField(prefix, i, "mediaType"), Description: f})
		}
		if n := l.overMetadata(p.Metadata); n > 0 {
			return append(v, bigMetadata(partField(prefix, i, "metadata"), n, l.metadataBytes))
		}
	}
	return v
}

// partField is the path of a member of part i: prefix.parts[i].name.
func partField(prefix string, i int, name string) string {
	return path(prefix, "parts") + "[" + strconv.Itoa(i) + "]." + name
}

// artifact appends the violations of an artifact chunk's sizes.
func (l *limits) artifact(v []a2a.FieldViolation, prefix string, a *a2a.Artifact) []a2a.FieldViolation {
	v = l.id(v, prefix, "artifactId", a.ArtifactId)
	v = l.list(v, prefix, "extensions", a.Extensions)
	v = l.metadata(v, prefix, "metadata", a.Metadata)
	return l.partList(v, prefix, a.Parts)
}

// pushConfig appends the violations of the push configuration at prefix:
// the lengths of its ids, url, token and credentials, and the characters
// of the three values that become HTTP header values. It runs before the
// url is parsed.
func (l *limits) pushConfig(v []a2a.FieldViolation, prefix string, c *a2a.TaskPushNotificationConfig) []a2a.FieldViolation {
	v = l.id(v, prefix, "id", c.Id)
	v = l.id(v, prefix, "taskId", c.TaskId)
	v = l.id(v, prefix, "tenant", c.Tenant)
	if len(c.Url) > l.urlBytes {
		v = append(v, tooLong(path(prefix, "url"), len(c.Url), l.urlBytes, "maxPushUrlBytes"))
	}
	v = l.secret(v, prefix, "token", c.Token)
	if a := c.Authentication; a != nil {
		if i := notToken(a.Scheme); i >= 0 {
			v = append(v, a2a.FieldViolation{Field: path(prefix, "authentication.scheme"),
				Description: fmt.Sprintf("must be an HTTP authentication scheme name (letters, digits and !#$%%&'*+-.^_`|~); byte %d is %s", i, byteName(a.Scheme[i]))})
		}
		v = l.secret(v, prefix, "authentication.credentials", a.Credentials)
	}
	return v
}

// secret appends the violations of the token or credentials at
// prefix.name: too long, or holding a control character.
func (l *limits) secret(v []a2a.FieldViolation, prefix, name, s string) []a2a.FieldViolation {
	if len(s) > l.secretBytes {
		return append(v, tooLong(path(prefix, name), len(s), l.secretBytes, "maxPushSecretBytes"))
	}
	if i := controlAt(s); i >= 0 {
		v = append(v, a2a.FieldViolation{Field: path(prefix, name),
			Description: fmt.Sprintf("must not contain control characters: it is sent in an HTTP header; byte %d is %s", i, byteName(s[i]))})
	}
	return v
}

// controlAt returns the index of the first ASCII control character (C0 or
// DEL; tab included) in s, or -1.
func controlAt(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return i
		}
	}
	return -1
}

// notToken returns the index of the first byte of s that an HTTP token
// (RFC 9110 §5.6.2: 1*tchar) may not hold, or -1 when s is a token or
// empty.
func notToken(s string) int {
	if s == "" {
		return -1 // a missing scheme is CheckRequired's to report
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return i
		}
	}
	return -1
}

// isTchar reports whether c is an RFC 9110 tchar.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// byteName names a byte for an error message without echoing text:
// "CR (0x0d)", "LF (0x0a)", or its hex value.
func byteName(c byte) string {
	switch c {
	case '\r':
		return "CR (0x0d)"
	case '\n':
		return "LF (0x0a)"
	case '\t':
		return "TAB (0x09)"
	case ' ':
		return "a space (0x20)"
	}
	return fmt.Sprintf("0x%02x", c)
}

// maxEcho bounds an identifier quoted in an error message.
const maxEcho = 64

// clip returns id for an error message: as is when short, otherwise its
// first maxEcho bytes (cut at a character boundary) followed by "...".
func clip(id string) string {
	if len(id) <= maxEcho {
		return id
	}
	cut := maxEcho
	for cut > 0 && id[cut]&0xc0 == 0x80 {
		cut--
	}
	return id[:cut] + "..."
}

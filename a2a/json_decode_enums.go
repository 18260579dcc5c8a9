package a2a

// The enum check of Unmarshal: protojson with DiscardUnknown drops an enum
// member whose name the schema does not define, so a second pass over the
// (already accepted) input finds such members and refuses them.

import (
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// enumScanner walks JSON that protojson has already accepted, following the
// message schema, and reports enum members whose string value is not a name
// defined by the enum. (protojson with DiscardUnknown silently drops them.)
// Because the input is known to be valid JSON matching the schema, the
// scanner does not re-validate syntax.
type enumScanner struct {
	b []byte
	i int
}

// ws skips white space.
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

// peek skips white space and returns the next byte without consuming it
// (0 at the end of the input).
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

// unescape returns the text of a string token body returned by str.
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

// message checks one value expected to be a message of type md, skipping
// it whole when no enum can be reached from md.
func (s *enumScanner) message(md protoreflect.MessageDescriptor) *enumError {
	info := infoFor(md)
	if !s.enter('{', info.hasEnum) {
		return nil
	}
	for raw, esc, ok := s.member(); ok; raw, esc, ok = s.member() {
		var f *fieldInfo
		if esc {
			f = info.byName[unescape(raw, esc)]
		} else {
			f = info.byName[string(raw)] // no allocation for a map lookup
		}
		if f == nil {
			s.skip()
			continue
		}
		if err := s.field(f); err != nil {
			err.prepend(f.jsonName)
			return err
		}
	}
	return nil
}

// enter consumes the opening byte of the next value when want is true and
// the value is an object or array opening with open; otherwise it skips
// the value whole and reports false.
func (s *enumScanner) enter(open byte, want bool) bool {
	if !want || s.peek() != open {
		s.skip()
		return false
	}
	s.i++
	return true
}

// member reads the name of the next member of the object being walked and
// the colon after it, returning the name's raw body and whether it has
// escapes; ok is false when the closing brace comes instead (consumed).
func (s *enumScanner) member() (raw []byte, esc, ok bool) {
	for {
		switch s.peek() {
		case '}':
			s.i++
			return nil, false, false
		case ',':
			s.i++
			continue
		}
		raw, esc = s.str()
		s.peek()
		s.i++ // ':'
		return raw, esc, true
	}
}

// field checks the value of one member of a message.
func (s *enumScanner) field(f *fieldInfo) *enumError {
	switch {
	case f.fd.IsMap():
		return s.mapEntries(f)
	case f.fd.IsList():
		return s.listElements(f)
	}
	return s.single(f.fd, f.enumNames)
}

// mapEntries checks the values of a map member.
func (s *enumScanner) mapEntries(f *fieldInfo) *enumError {
	if !s.enter('{', true) {
		return nil
	}
	for raw, esc, ok := s.member(); ok; raw, esc, ok = s.member() {
		if err := s.single(f.fd.MapValue(), f.enumNames); err != nil {
			err.prepend("[" + strconv.Quote(unescape(raw, esc)) + "]")
			return err
		}
	}
	return nil
}

// listElements checks the elements of a repeated member.
func (s *enumScanner) listElements(f *fieldInfo) *enumError {
	if !s.enter('[', true) {
		return nil
	}
	for n := 0; ; {
		switch s.peek() {
		case ']':
			s.i++
			return nil
		case ',':
			s.i++
			continue
		}
		if err := s.single(f.fd, f.enumNames); err != nil {
			err.prepend("[" + strconv.Itoa(n) + "]")
			return err
		}
		n++
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

// prepend adds the next outer path segment.
func (e *enumError) prepend(seg string) { e.segs = append(e.segs, seg) }

// Error renders the path in JSON naming, e.g.
// "invalid value for enum field message.role: \"user\"".
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

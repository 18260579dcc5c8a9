package jsonrpc

// A faster json.Valid for request bodies. encoding/json's checker steps a
// state machine through a function call per byte, which made it the
// largest part of reading a request's envelope; this one reads the same
// grammar with plain loops. It answers exactly as json.Valid does
// (FuzzValidJSON compares the two): the JSON grammar of RFC 8259 (one
// value, white space being space, tab, line feed and carriage return;
// strings with no control characters, escapes \" \\ \/ \b \f \n \r \t
// and \u with four hexadecimal digits; numbers
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), bytes that are not
// UTF-8 accepted inside strings as encoding/json accepts them, and
// nesting deeper than encoding/json's limit of 10000 refused.

// maxJSONNesting is encoding/json's limit on nested arrays and objects.
const maxJSONNesting = 10000

// validJSON reports whether b is one valid JSON value, as json.Valid.
func validJSON(b []byte) bool {
	v := jsonChecker{b: b}
	v.ws()
	if !v.value(0) {
		return false
	}
	v.ws()
	return v.i == len(v.b)
}

// jsonChecker walks one input.
type jsonChecker struct {
	b []byte
	i int
}

// ws skips white space.
func (v *jsonChecker) ws() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

// value checks one value; depth is the nesting of the arrays and objects
// around it.
func (v *jsonChecker) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; c {
	case '"':
		return v.str()
	case '{', '[':
		if depth >= maxJSONNesting {
			return false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		v.i++
		v.ws()
		if v.i < len(v.b) && v.b[v.i] == closing {
			v.i++
			return true
		}
		for {
			if c == '{' {
				if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
					return false
				}
				v.ws()
				if v.i >= len(v.b) || v.b[v.i] != ':' {
					return false
				}
				v.i++
				v.ws()
			}
			if !v.value(depth + 1) {
				return false
			}
			v.ws()
			if v.i >= len(v.b) {
				return false
			}
			switch v.b[v.i] {
			case ',':
				v.i++
				v.ws()
			case closing:
				v.i++
				return true
			default:
				return false
			}
		}
	case 't':
		return v.literal("true")
	case 'f':
		return v.literal("false")
	case 'n':
		return v.literal("null")
	}
	return v.number()
}

// literal checks the literal lit.
func (v *jsonChecker) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

// str checks a string, from its opening quote.
func (v *jsonChecker) str() bool {
	for i := v.i + 1; i < len(v.b); i++ {
		switch c := v.b[i]; {
		case c == '"':
			v.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(v.b) {
				return false
			}
			switch v.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(v.b) {
					return false
				}
				for _, h := range v.b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number checks a number.
func (v *jsonChecker) number() bool {
	b, i := v.b, v.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	v.i = i
	return true
}

package a2a

// The fast reader's JSON tokens (see unmarshalFast): white space,
// punctuation, strings, numbers, and skipping a value.

import "unicode/utf8"

// ws skips JSON white space.
func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte (0 at the end).
func (d *fastDecoder) next() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes the literal lit (null, true or false) when it comes
// next.
func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// colon consumes the ':' after a member name.
func (d *fastDecoder) colon() bool {
	if d.next() != ':' {
		return false
	}
	d.i++
	d.ws()
	return true
}

// more consumes the ',' or the closing byte after a member or element,
// and reports whether another one follows; ok is false for anything else.
func (d *fastDecoder) more(closing byte) (more, ok bool) {
	switch d.next() {
	case ',':
		d.i++
		d.ws()
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

// enter consumes the opening byte of an object or array and reports
// whether a member or element follows: more is false for an empty one
// (its closing byte then consumed too), ok is false when the value does
// not open with opening. A loop over the members or elements reads each
// and then calls more.
func (d *fastDecoder) enter(opening, closing byte) (more, ok bool) {
	if d.i >= len(d.b) || d.b[d.i] != opening {
		return false, false
	}
	d.i++
	if d.next() == closing {
		d.i++
		return false, true
	}
	return true, true
}

// strNeeds marks the bytes that end a run of plain ASCII string text.
var strNeeds = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// str reads a string token and returns its text: a slice of the input
// when it has no escapes, else of d.buf (valid until the next str).
func (d *fastDecoder) str() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if !strNeeds[c] {
			continue
		}
		switch {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			d.i = j + 1
			return s, true
		case c == '\\':
			return d.strEscaped(start, j)
		case c < 0x20:
			return nil, false
		}
		ascii = false
	}
	return nil, false
}

// strEscaped reads the rest of a string token from its first escape at j,
// the text starting at start; the text goes to d.buf.
func (d *fastDecoder) strEscaped(start, j int) ([]byte, bool) {
	out := d.buf[:0]
	run := start // the start of the raw run being copied
	for j < len(d.b) {
		c := d.b[j]
		if c != '"' && c != '\\' {
			if c < 0x20 {
				return nil, false
			}
			j++
			continue
		}
		if !utf8.Valid(d.b[run:j]) {
			return nil, false
		}
		out = append(out, d.b[run:j]...)
		if c == '"' {
			d.i = j + 1
			d.buf = out
			return out, true
		}
		if j+1 >= len(d.b) {
			return nil, false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.b, j+2)
			if !ok {
				return nil, false
			}
			switch {
			case 0xDC00 <= r && r < 0xE000: // a low surrogate alone
				return nil, false
			case 0xD800 <= r && r < 0xDC00: // must be followed by its low half
				if j+12 > len(d.b) || d.b[j+6] != '\\' || d.b[j+7] != 'u' {
					return nil, false
				}
				lo, ok := hex4(d.b, j+8)
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					return nil, false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				j += 6
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return nil, false
		}
		j += 2
		run = j
	}
	return nil, false
}

// hex4 reads the four hexadecimal digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a JSON number token (RFC 8259 §6) and returns its text and
// whether it is an integer literal (no fraction, no exponent).
func (d *fastDecoder) number() (raw []byte, isInt, ok bool) {
	n, isInt := numberLen(d.b[d.i:])
	if n == 0 {
		return nil, false, false
	}
	raw = d.b[d.i : d.i+n]
	d.i += n
	return raw, isInt, true
}

// numberLen returns the length of the JSON number at the start of b (0
// when there is none) and whether it is an integer literal.
func numberLen(b []byte) (n int, isInt bool) {
	i := 0
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
		return 0, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
		isInt = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
		isInt = false
	}
	return i, isInt
}

// skip reads and discards one JSON value, whose objects and arrays may
// nest levels deep at most (protojson's limit on skipped values).
func (d *fastDecoder) skip(levels int) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; c {
	case '"':
		_, ok := d.str()
		return ok
	case 'n':
		return d.literal("null")
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case '{', '[':
		if levels < 1 {
			return false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		more, ok := d.enter(c, closing)
		for ; more; more, ok = d.more(closing) {
			if c == '{' {
				if _, ok := d.str(); !ok || !d.colon() {
					return false
				}
			}
			if !d.skip(levels - 1) {
				return false
			}
		}
		return ok
	}
	_, _, ok := d.number()
	return ok
}

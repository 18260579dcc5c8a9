package execagent

import (
	"errors"
	"strings"
)

// SplitWords splits a command line into words the way a POSIX shell splits
// a simple command, without running a shell: words are separated by
// blanks (space, tab, newline); single quotes keep everything up to the
// next single quote; double quotes keep everything up to the next
// unescaped double quote, where a backslash escapes only \, ", $ and `
// (and a backslash-newline disappears); outside quotes a backslash keeps
// the next character as it is. Nothing else is interpreted: no variables,
// globs, pipes or redirections (write sh -c '…' for those).
//
// SplitWords fails on an unterminated quote or a trailing backslash.
func SplitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("the command ends with a backslash")
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i])
				inWord = true
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("the command has an unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			n, err := doubleQuoted(&cur, s[i+1:])
			if err != nil {
				return nil, err
			}
			i += n
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// doubleQuoted copies the inside of a double-quoted string that starts
// at s (just after the opening quote) to b, and returns how many bytes
// of s it used, the closing quote included.
func doubleQuoted(b *strings.Builder, s string) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return 0, errors.New("the command has an unterminated double quote")
}

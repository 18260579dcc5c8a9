package execagent

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// readBuf is the size of one read of a program's standard output.
const readBuf = 32 << 10

// readText streams the program's standard output as the chunks of the
// OutputArtifactID artifact until the output ends, then finishes the
// artifact (a last, empty chunk marks it complete: the end of the output is
// only known once the pipe closes).
func (a *Agent) readText(p *proc, em *server.Emitter) result {
	out := &textArtifact{em: em}
	buf := make([]byte, readBuf)
	var pending []byte // bytes not yet sent: a partial line, or a cut character
	var total int64
	res := result{}
	for {
		n, rerr := p.stdout.Read(buf)
		if total+int64(n) > a.o.MaxOutput {
			n = int(a.o.MaxOutput - total)
			res.failure = fmt.Sprintf("the program wrote more than %d bytes to standard output and was stopped (the artifact holds the first %d)", a.o.MaxOutput, a.o.MaxOutput)
			rerr = errOutputBound
		}
		total += int64(n)
		pending = append(pending, buf[:n]...)
		cut := a.cut(pending, rerr != nil)
		if cut > 0 {
			if err := out.add(pending[:cut]); err != nil {
				return result{stopped: true}
			}
			pending = append(pending[:0], pending[cut:]...)
		}
		if rerr != nil {
			break
		}
	}
	if len(pending) > 0 { // only an incomplete character can be left
		if err := out.add(pending); err != nil {
			return result{stopped: true}
		}
	}
	if err := out.finish(); err != nil {
		return result{stopped: true}
	}
	return res
}

// errOutputBound stops reading at Options.MaxOutput.
var errOutputBound = fmt.Errorf("execagent: output bound reached")

// cut returns how many bytes of pending make the next chunk: up to the last
// line end (Lines), or up to the last complete UTF-8 character (Bytes);
// everything at the end of the output.
func (a *Agent) cut(pending []byte, end bool) int {
	if end {
		return len(pending)
	}
	if a.o.Chunk == Lines {
		return bytes.LastIndexByte(pending, '\n') + 1
	}
	// Keep back the start of a character the read cut in two.
	for i := len(pending) - 1; i >= 0 && i >= len(pending)-utf8.UTFMax; i-- {
		if utf8.RuneStart(pending[i]) {
			if !utf8.FullRune(pending[i:]) {
				return i
			}
			break
		}
	}
	return len(pending)
}

// textArtifact emits the chunks of the output artifact.
type textArtifact struct {
	em      *server.Emitter
	started bool
}

// add emits one chunk (the caller stops on any error: a closed task, or
// an event the core refused and logged); bytes that are not UTF-8 become U+FFFD (a text part
// is a string: binary output belongs in JSONLines file parts).
func (t *textArtifact) add(b []byte) error {
	chunk := a2a.TextArtifact(OutputArtifactID, strings.ToValidUTF8(string(b), "\uFFFD"))
	if !t.started {
		t.started = true
		chunk.Name = "standard output"
		return t.em.StartArtifact(chunk)
	}
	return t.em.AppendArtifact(chunk)
}

// finish marks the artifact complete with an empty last chunk, when any
// output was sent.
func (t *textArtifact) finish() error {
	if !t.started {
		return nil
	}
	return t.em.FinishArtifact(a2a.TextArtifact(OutputArtifactID, ""))
}

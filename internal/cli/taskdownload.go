package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// saved is one part `task download` wrote, or the reference it reports.
type saved struct {
	path, url string
	size      int
}

// taskDownload runs `task download`: it reads the task and writes each
// part of its artifacts to a file of dir (A2A CLI SPEC §7.1): a text part
// as it is, bytes as they are, a data part as JSON. A part that refers to a
// URL is reported, not fetched: the URL is the agent's to serve, and the
// command fetches nothing it was not asked for by name. Every file is new:
// an existing one is an error, before anything is written.
func (e *env) taskDownload(ctx context.Context, cl *client.Client, url, id, dir string) error {
	t, err := cl.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
	if err != nil {
		return err
	}
	type file struct {
		path string
		body []byte
	}
	var files []file
	var refs []saved
	taken := map[string]bool{}
	for _, a := range t.GetArtifacts() {
		for i, p := range a.GetParts() {
			name, body, ref := partFile(a, i, p)
			if ref != "" {
				refs = append(refs, saved{url: ref})
				continue
			}
			path := filepath.Join(dir, uniqueName(name, taken))
			if _, err := os.Lstat(path); err == nil {
				return fmt.Errorf("task download: %s exists: remove it, or give another --dir", path)
			}
			files = append(files, file{path, body})
		}
	}
	var done []saved
	for _, f := range files {
		if err := writeNew(f.path, f.body); err != nil {
			return err
		}
		done = append(done, saved{path: f.path, size: len(f.body)})
	}
	if e.c.json {
		return e.out.jsonLine(t)
	}
	for _, s := range done {
		e.out.printf("File: %s (%s)\n", s.path, byteSize(s.size))
	}
	for _, r := range refs {
		e.out.printf("Reference: %s (not fetched)\n", r.url)
	}
	e.out.printIDs(t.GetId(), t.GetContextId(), t.GetStatus().GetState())
	return nil
}

// partFile is the file name and content of part i of a, or the URL it
// refers to.
func partFile(a *a2a.Artifact, i int, p *a2a.Part) (name string, body []byte, ref string) {
	base := safeName(a.GetName())
	if base == "" {
		base = safeName(a.GetArtifactId())
	}
	if base == "" {
		base = "artifact"
	}
	if len(a.GetParts()) > 1 {
		base = fmt.Sprintf("%s-%d", base, i+1)
	}
	ext := func(def string) string {
		if exts, _ := mime.ExtensionsByType(p.GetMediaType()); len(exts) > 0 {
			return exts[0]
		}
		return def
	}
	switch c := p.GetContent().(type) {
	case *a2a.Part_Text:
		return base + ext(".txt"), []byte(c.Text), ""
	case *a2a.Part_Raw:
		if n := safeName(p.GetFilename()); n != "" {
			return n, c.Raw, ""
		}
		return base + ext(".bin"), c.Raw, ""
	case *a2a.Part_Url:
		return "", nil, c.Url
	case *a2a.Part_Data:
		var out bytes.Buffer
		b, err := protojson.Marshal(c.Data)
		if err != nil || json.Indent(&out, b, "", "  ") != nil { // protojson's own spacing varies
			out.Reset()
			out.WriteString("null")
		}
		out.WriteByte('\n')
		return base + ".json", out.Bytes(), ""
	}
	return base + ".bin", nil, ""
}

// safeName is s as a file name of the download directory: its last path
// element, without what could name another directory ("", "." and "..").
func safeName(s string) string {
	s = filepath.Base(strings.ReplaceAll(strings.TrimSpace(s), "\\", "/"))
	if s == "." || s == ".." || s == "/" || strings.ContainsRune(s, 0) {
		return ""
	}
	return s
}

// uniqueName is name, or name with a number before its extension when an
// earlier part took it.
func uniqueName(name string, taken map[string]bool) string {
	n, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d%s", n, i, ext)
	}
	taken[name] = true
	return name
}

// writeNew writes body to a file that must not exist yet.
func writeNew(path string, body []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("task download: %w", err)
	}
	_, err = f.Write(body)
	return errors.Join(err, f.Close())
}

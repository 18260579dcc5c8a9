package equivalence_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
)

// Expectations and normalization: what a scenario wants, and the text
// form of an outcome that compares equal across bindings and servers.

// want is a scenario's expected outcome, the same for every binding.
type want struct {
	// code is the expected error; 0 means success.
	code a2a.Code
	// meta lists ErrorInfo metadata entries the error must carry.
	meta map[string]string
	// fields are the expected BadRequest field violations (nil: not
	// checked).
	fields []string
	// check runs further checks on a successful outcome.
	check func(t *testing.T, o outcome)
	// anyMessage exempts the error message from the comparison between
	// bindings (it is written by the transport, not by the core).
	anyMessage bool
}

func (w want) verify(t *testing.T, o outcome) {
	t.Helper()
	if w.code == 0 {
		if o.err != nil {
			t.Fatalf("got %s, want success", o.err)
		}
		if w.check != nil {
			w.check(t, o)
		}
		return
	}
	if o.err == nil {
		t.Fatalf("got success (%v, %d events), want %s", o.value, len(o.events), w.code.Name())
	}
	if o.err.code != w.code {
		t.Fatalf("got %s, want %s", o.err, w.code.Name())
	}
	if w.code.IsA2A() && (o.err.reason != w.code.Reason() || o.err.domain != a2a.DomainA2A) {
		t.Errorf("ErrorInfo reason %q domain %q, want %q %q", o.err.reason, o.err.domain, w.code.Reason(), a2a.DomainA2A)
	}
	for k, v := range w.meta {
		if o.err.meta[k] != v {
			t.Errorf("ErrorInfo metadata %s = %q, want %q (all: %v)", k, o.err.meta[k], v, o.err.meta)
		}
	}
	if w.fields != nil && !slices.Equal(o.err.fields, w.fields) {
		t.Errorf("field violations %v, want %v", o.err.fields, w.fields)
	}
	if w.check != nil {
		w.check(t, o)
	}
}

// normalizer replaces server- and client-generated identifiers with
// placeholders numbered in order of appearance, so that outcomes of the
// same scenario on different servers compare equal.
type normalizer struct {
	ids  map[string]string
	host string // the server's host:port, which appears in agent cards
}

func (z *normalizer) id(s string) string {
	if s == "" {
		return ""
	}
	if p, ok := z.ids[s]; ok {
		return p
	}
	p := fmt.Sprintf("<id%d>", len(z.ids)+1)
	z.ids[s] = p
	return p
}

// see registers the identifiers in an outcome.
func (z *normalizer) see(o outcome) {
	if o.value != nil {
		z.message(proto.Clone(o.value).ProtoReflect())
	}
	for _, ev := range o.events {
		z.message(proto.Clone(ev).ProtoReflect())
	}
}

// message rewrites m in place: identifiers become placeholders and
// timestamps are cleared. Fields are visited in declaration order, so the
// numbering is deterministic.
func (z *normalizer) message(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		switch {
		case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Timestamp":
			m.Clear(fd)
		case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Struct":
		case fd.IsList() && fd.Message() != nil:
			l := m.Get(fd).List()
			for j := range l.Len() {
				z.message(l.Get(j).Message())
			}
		case fd.IsList() && fd.Kind() == protoreflect.StringKind && idFields[fd.Name()]:
			l := m.Mutable(fd).List()
			for j := range l.Len() {
				l.Set(j, protoreflect.ValueOfString(z.id(l.Get(j).String())))
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				continue
			}
			mp := m.Get(fd).Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool { keys = append(keys, k); return true })
			sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
			for _, k := range keys {
				z.message(mp.Get(k).Message())
			}
		case fd.Message() != nil:
			z.message(m.Get(fd).Message())
		case fd.Kind() == protoreflect.StringKind && idFields[fd.Name()]:
			m.Set(fd, protoreflect.ValueOfString(z.id(m.Get(fd).String())))
		}
	}
}

// text replaces every known identifier in s.
func (z *normalizer) text(s string) string {
	for raw, p := range z.ids {
		if len(raw) >= 6 {
			s = strings.ReplaceAll(s, raw, p)
		}
	}
	return s
}

// normalize renders an outcome as text with identifiers, timestamps and
// (when asked) the error message neutralized.
func (z *normalizer) normalize(o outcome, anyMessage bool) string {
	var b strings.Builder
	opts := prototext.MarshalOptions{Multiline: true}
	if o.value != nil {
		m := proto.Clone(o.value)
		z.message(m.ProtoReflect())
		fmt.Fprintf(&b, "value %T:\n%s", o.value, opts.Format(m))
	}
	for i, ev := range o.events {
		m := proto.Clone(ev)
		z.message(m.ProtoReflect())
		fmt.Fprintf(&b, "event %d:\n%s", i, opts.Format(m))
	}
	if o.err != nil {
		msg := z.text(o.err.message)
		if anyMessage {
			msg = "*"
		}
		keys := make([]string, 0, len(o.err.meta))
		for k := range o.err.meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "error %s reason=%q domain=%q message=%q\n", o.err.code.Name(), o.err.reason, o.err.domain, msg)
		for _, k := range keys {
			v := o.err.meta[k]
			if strings.HasSuffix(strings.ToLower(k), "id") {
				v = z.id(v)
			}
			fmt.Fprintf(&b, "  meta %s=%q\n", k, z.text(v))
		}
		fmt.Fprintf(&b, "  fields %q\n", o.err.fields)
	}
	fmt.Fprintf(&b, "extensions %q challenge %q\n", o.extensions, o.challenge)
	if z.host == "" {
		return b.String()
	}
	return strings.ReplaceAll(b.String(), z.host, "<host>")
}

func newNormalizer() *normalizer { return &normalizer{ids: map[string]string{}} }

// idFields are the string fields that hold generated identifiers or
// opaque tokens.
var idFields = map[protoreflect.Name]bool{
	"id": true, "task_id": true, "context_id": true, "message_id": true,
	"reference_task_ids": true, "next_page_token": true,
}

package a2a

// One tolerated deviation in what Unmarshal reads: a StringList map value
// written as a bare JSON array. The proto (and so ProtoJSON) shape of a
// SecurityRequirement's scopes (spec §4.5, Security Objects; proto
// message SecurityRequirement, map<string, StringList> schemes) is
// {"schemes":{"bearer":{"list":["read"]}}}; some peers (the official Go
// SDK among them) write {"schemes":{"bearer":["read"]}}. Unmarshal first
// decodes the input as it is; only when that fails, and only for a message
// type through which such a map can be reached, does it wrap every bare
// array found as a value of such a map into {"list": [...]} and decode
// again. Nothing else is rewritten, and Marshal always writes the proto
// shape (tolerant reader, strict writer).

import (
	"bytes"
	"encoding/json"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// stringListFullName is the message whose bare-array form is tolerated as
// a map value.
const stringListFullName protoreflect.FullName = "lf.a2a.v1.StringList"

// isStringListMap reports whether fd is a map whose values are StringList.
func isStringListMap(fd protoreflect.FieldDescriptor) bool {
	return fd.IsMap() && fd.MapValue().Message() != nil && fd.MapValue().Message().FullName() == stringListFullName
}

// wrapBareLists returns b with every bare array that stands for a
// StringList map value of md wrapped as {"list": [...]}, and whether it
// changed anything. Input it cannot read as JSON is returned unchanged
// (the decoder reports it). Objects on the path to such a map are
// re-encoded, which orders their members.
func wrapBareLists(b []byte, md protoreflect.MessageDescriptor) ([]byte, bool) {
	info := infoFor(md)
	if !info.hasStringList {
		return b, false
	}
	obj, ok := jsonObject(b)
	if !ok {
		return b, false
	}
	changed := false
	for k, v := range obj {
		f := info.byName[k]
		if f == nil {
			continue
		}
		fd := f.fd
		var nv []byte
		var c bool
		switch {
		case isStringListMap(fd):
			nv, c = wrapMapValues(v, func(e []byte) ([]byte, bool) {
				if t := bytes.TrimSpace(e); len(t) > 0 && t[0] == '[' {
					return append(append([]byte(`{"list":`), t...), '}'), true
				}
				return e, false
			})
		case fd.IsMap() && fd.MapValue().Message() != nil:
			nv, c = wrapMapValues(v, func(e []byte) ([]byte, bool) { return wrapBareLists(e, fd.MapValue().Message()) })
		case fd.IsList() && fd.Message() != nil:
			nv, c = wrapElements(v, fd.Message())
		case fd.Message() != nil:
			nv, c = wrapBareLists(v, fd.Message())
		}
		if c {
			obj[k], changed = nv, true
		}
	}
	if !changed {
		return b, false
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return b, false
	}
	return out, true
}

// wrapMapValues applies wrap to each value of the JSON object b.
func wrapMapValues(b []byte, wrap func([]byte) ([]byte, bool)) ([]byte, bool) {
	obj, ok := jsonObject(b)
	if !ok {
		return b, false
	}
	changed := false
	for k, v := range obj {
		if nv, c := wrap(v); c {
			obj[k], changed = nv, true
		}
	}
	if !changed {
		return b, false
	}
	out, err := json.Marshal(obj)
	return out, err == nil
}

// wrapElements applies wrapBareLists to each element of the JSON array b.
func wrapElements(b []byte, md protoreflect.MessageDescriptor) ([]byte, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '[' {
		return b, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(t, &elems) != nil {
		return b, false
	}
	changed := false
	for i, e := range elems {
		if ne, c := wrapBareLists(e, md); c {
			elems[i], changed = ne, true
		}
	}
	if !changed {
		return b, false
	}
	out, err := json.Marshal(elems)
	return out, err == nil
}

// jsonObject reads b as a JSON object of raw members.
func jsonObject(b []byte) (map[string]json.RawMessage, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t, &obj) != nil {
		return nil, false
	}
	return obj, true
}

package a2a

// Naming the field whose string is not UTF-8. The protobuf decoders refuse
// such input (JSON text is UTF-8, spec §14.1.1, and so is a proto string)
// but do not say where; these functions find the first such string again,
// so that the refusal can name the field as the core's validation does
// (server.Limits: "message.messageId: is not valid UTF-8").

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// JSONUTF8Field returns the path (lowerCamelCase member names, [i] for
// list entries, map and Struct keys as given) of the first string in the
// JSON text b, read as a message md, that holds bytes that are not UTF-8;
// "" when b holds none. A member name with such bytes is reported as its
// object's path.
func JSONUTF8Field(b []byte, md protoreflect.MessageDescriptor) string {
	if utf8.Valid(b) {
		return ""
	}
	return jsonBadUTF8(b, jsonShape{md: md}, "")
}

// jsonShape is what a JSON value is read as: a message (md), a map whose
// values are messages or scalars (mapOf), or a value of no known shape.
type jsonShape struct {
	md    protoreflect.MessageDescriptor
	mapOf *jsonShape
}

// jsonBadUTF8 finds the path of the first non-UTF-8 string in raw, which
// is at path and holds bytes that are not UTF-8.
func jsonBadUTF8(raw []byte, sh jsonShape, path string) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return path
	}
	switch raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return path
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if v := m[k]; !utf8.Valid(v) {
				name, sub := jsonMember(sh, k)
				return jsonBadUTF8(v, sub, joinPath(path, name))
			}
		}
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return path
		}
		for i, v := range a {
			if !utf8.Valid(v) {
				return jsonBadUTF8(v, sh, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	return path
}

// jsonMember returns the name to report for the member k of an object read as
// sh, and the shape of its value. A list's entries have the list's shape
// (jsonBadUTF8 keeps it across the array).
func jsonMember(sh jsonShape, k string) (string, jsonShape) {
	if sh.mapOf != nil {
		return k, *sh.mapOf
	}
	if sh.md == nil {
		return k, jsonShape{}
	}
	fs := sh.md.Fields()
	fd := fs.ByJSONName(k)
	if fd == nil {
		fd = fs.ByName(protoreflect.Name(k))
	}
	if fd == nil {
		return k, jsonShape{}
	}
	if fd.IsMap() {
		return fd.JSONName(), jsonShape{mapOf: &jsonShape{md: fd.MapValue().Message()}}
	}
	return fd.JSONName(), jsonShape{md: fd.Message()}
}

// joinPath joins a path and a member name.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// BinaryUTF8Field is JSONUTF8Field for the protobuf binary encoding b of a
// message md: the path of the first string field whose bytes are not
// UTF-8, or "".
func BinaryUTF8Field(b []byte, md protoreflect.MessageDescriptor) string {
	if utf8.Valid(b) {
		return ""
	}
	return binaryBadUTF8(b, md, "", 0)
}

// binaryBadUTF8 walks the fields of b, a message md at path; depth bounds
// the recursion as decoding does.
func binaryBadUTF8(b []byte, md protoreflect.MessageDescriptor, path string, depth int) string {
	if md == nil || depth > MaxDepth {
		return ""
	}
	counts := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		val := b[:n]
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			continue
		}
		v, _ := protowire.ConsumeBytes(val)
		name := joinPath(path, fd.JSONName())
		if fd.IsList() {
			name += "[" + strconv.Itoa(counts[num]) + "]"
			counts[num]++
		}
		switch {
		case fd.Kind() == protoreflect.StringKind && !utf8.Valid(v):
			return name
		case fd.IsMap():
			// A map entry is a message of key (1) and value (2).
			entry := fd.Message()
			if p := binaryBadUTF8(v, entry, joinPath(path, fd.JSONName()), depth+1); p != "" {
				return p
			}
		case fd.Message() != nil:
			if p := binaryBadUTF8(v, fd.Message(), name, depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}

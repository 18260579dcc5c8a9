package a2a

// Per-type metadata for the codec and the REQUIRED checker, computed once
// per message descriptor and cached for the life of the process.

import (
	"cmp"
	"slices"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// wktKind says which google.protobuf well-known type a message is, if any;
// those have their own JSON forms.
type wktKind uint8

// The well-known type kinds; wktNone is an ordinary message.
const (
	wktNone wktKind = iota
	wktTimestamp
	wktStruct
	wktValue
	wktListValue
	wktEmpty
	wktUnsupported // any other google.protobuf message
)

// fieldInfo is what the codec needs to know about one field.
type fieldInfo struct {
	fd       protoreflect.FieldDescriptor
	key      []byte // `"jsonName":`
	jsonName string
	required bool
	// check: CheckRequired looks at the field, because it is REQUIRED or
	// holds messages in which a rule can be broken; the others it skips.
	check bool
	// always: write the field even when it is not populated (REQUIRED
	// scalars, enums, lists and maps outside oneofs).
	always bool
	// enumNames holds the defined value names when the field (or its map
	// value) is an enum; nil otherwise, and nil for google.protobuf.NullValue.
	enumNames map[string]bool
}

// msgInfo is what the codec needs to know about one message type.
type msgInfo struct {
	fields  []fieldInfo           // sorted by field number
	byName  map[string]*fieldInfo // JSON names and proto names, as protojson accepts them
	wkt     wktKind
	hasEnum bool // an enum field is reachable through non-WKT messages
	// hasStringList: a map of StringList values is reachable through
	// non-WKT messages (see wrapBareLists).
	hasStringList bool
	isPart        bool
}

// msgInfos caches infoFor's results.
var msgInfos sync.Map // protoreflect.MessageDescriptor -> *msgInfo

// partFullName is the message whose content oneof CheckRequired checks.
const partFullName protoreflect.FullName = "lf.a2a.v1.Part"

// infoFor returns the metadata of a message type, computing it on first
// use. It is safe for concurrent use.
func infoFor(md protoreflect.MessageDescriptor) *msgInfo {
	if v, ok := msgInfos.Load(md); ok {
		return v.(*msgInfo)
	}
	info := &msgInfo{wkt: wktOf(md), isPart: md.FullName() == partFullName}
	fds := md.Fields()
	info.fields = make([]fieldInfo, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		name := fd.JSONName()
		req := requiredFields[fd.FullName()]
		singularMsg := fd.Message() != nil && !fd.IsList() && !fd.IsMap()
		info.fields[i] = fieldInfo{
			fd:       fd,
			key:      []byte(`"` + name + `":`),
			jsonName: name,
			required: req,
			check:    req || holdsCheckable(fd),
			always:   req && fd.ContainingOneof() == nil && !singularMsg,
		}
	}
	slices.SortFunc(info.fields, func(a, b fieldInfo) int { return cmp.Compare(a.fd.Number(), b.fd.Number()) })
	info.byName = make(map[string]*fieldInfo, 2*len(info.fields))
	for i := range info.fields {
		f := &info.fields[i]
		f.enumNames = enumNameSet(f.fd)
		info.byName[string(f.fd.Name())] = f
	}
	for i := range info.fields { // JSON names win, as in protojson
		f := &info.fields[i]
		info.byName[f.jsonName] = f
	}
	info.hasEnum = reachesEnum(md, map[protoreflect.FullName]bool{})
	info.hasStringList = reachesStringListMap(md, map[protoreflect.FullName]bool{})
	v, _ := msgInfos.LoadOrStore(md, info)
	return v.(*msgInfo)
}

// enumNameSet returns the names an enum field (or the enum value of a map
// field) may take, or nil when the field is no enum or is NullValue.
func enumNameSet(fd protoreflect.FieldDescriptor) map[string]bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	ed := fd.Enum()
	if ed == nil || ed.FullName() == "google.protobuf.NullValue" {
		return nil
	}
	vals := ed.Values()
	names := make(map[string]bool, vals.Len())
	for i := range vals.Len() {
		names[string(vals.Get(i).Name())] = true
	}
	return names
}

// wktOf classifies a message type by well-known type.
func wktOf(md protoreflect.MessageDescriptor) wktKind {
	if md.ParentFile().Package() != "google.protobuf" {
		return wktNone
	}
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return wktTimestamp
	case "google.protobuf.Struct":
		return wktStruct
	case "google.protobuf.Value":
		return wktValue
	case "google.protobuf.ListValue":
		return wktListValue
	case "google.protobuf.Empty":
		return wktEmpty
	}
	return wktUnsupported
}

// holdsCheckable reports whether a field holds messages (alone, in a list
// or as map values) in which CheckRequired can find a broken rule.
func holdsCheckable(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	return fd.Message() != nil && canBreakRule(fd.Message(), map[protoreflect.FullName]bool{})
}

// canBreakRule reports whether a message of type md can break a rule
// CheckRequired checks: it is a Part (whose content must be set), has a
// REQUIRED field, or holds, through messages other than well-known types,
// a message that can. Types already in seen count as no: their first
// visit answers for them.
func canBreakRule(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if wktOf(md) != wktNone || seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.FullName() == partFullName {
		return true
	}
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if requiredFields[fd.FullName()] {
			return true
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Message() != nil && canBreakRule(fd.Message(), seen) {
			return true
		}
	}
	return false
}

// reachesEnum reports whether an enum field can be reached from md through
// fields, lists and maps of ordinary (non-well-known) messages; seen stops
// the walk at recursive types.
func reachesEnum(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if wktOf(md) != wktNone || seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		switch fd.Kind() {
		case protoreflect.EnumKind:
			return true
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if reachesEnum(fd.Message(), seen) {
				return true
			}
		}
	}
	return false
}

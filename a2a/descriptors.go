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
	info.hasEnum = reaches(md, map[protoreflect.FullName]bool{}, isEnum)
	info.hasStringList = reaches(md, map[protoreflect.FullName]bool{}, isStringListMap)
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
// or as map values) in which CheckRequired can find a broken rule: Parts
// (whose content must be set), or messages that reach, through messages
// other than well-known types, a REQUIRED field or a Part.
func holdsCheckable(fd protoreflect.FieldDescriptor) bool {
	md := valueOf(fd).Message()
	return md != nil && (md.FullName() == partFullName || reaches(md, map[protoreflect.FullName]bool{}, canBreakRule))
}

// canBreakRule reports whether fd is a field in which CheckRequired can
// find a broken rule by itself: a REQUIRED field, or one that holds Parts.
func canBreakRule(fd protoreflect.FieldDescriptor) bool {
	if requiredFields[fd.FullName()] {
		return true
	}
	md := valueOf(fd).Message()
	return md != nil && md.FullName() == partFullName
}

// valueOf returns the descriptor of a field's values: fd itself, or a
// map's value field.
func valueOf(fd protoreflect.FieldDescriptor) protoreflect.FieldDescriptor {
	if fd.IsMap() {
		return fd.MapValue()
	}
	return fd
}

// reaches reports whether a field for which hit is true can be reached from
// md through fields, lists and maps of ordinary (non-well-known) messages;
// hit sees each field as declared (a map as the map). Types already in
// seen count as no: their first visit answers for them, and seen stops the
// walk at recursive types.
func reaches(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool, hit func(protoreflect.FieldDescriptor) bool) bool {
	if wktOf(md) != wktNone || seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if hit(fd) {
			return true
		}
		if vd := valueOf(fd); vd.Message() != nil && reaches(vd.Message(), seen, hit) {
			return true
		}
	}
	return false
}

// isEnum reports whether fd holds enum values (alone, in a list or as
// map values).
func isEnum(fd protoreflect.FieldDescriptor) bool {
	return valueOf(fd).Kind() == protoreflect.EnumKind
}

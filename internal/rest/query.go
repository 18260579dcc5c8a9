package rest

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// The query string of GET and DELETE requests (spec §11.5): scalar
// members by their JSON names, in both directions.

// decodeQuery sets scalar fields of req from query parameters named by their
// JSON (camelCase) or proto (snake_case) names; unknown names are ignored
// (the A2A-Version parameter among them). Nested messages are not supported
// in queries (spec §11.5), except google.protobuf.Timestamp.
func decodeQuery(q url.Values, req proto.Message) error {
	if len(q) == 0 {
		return nil
	}
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	var bad []a2a.FieldViolation
	for key, vals := range q {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(key))
		}
		if fd == nil || len(vals) == 0 {
			continue
		}
		raw := vals[len(vals)-1]
		v, ok := scalar(fd, raw)
		if !ok {
			bad = append(bad, a2a.FieldViolation{Field: fd.JSONName(), Description: "invalid value " + strconv.Quote(raw)})
			continue
		}
		m.Set(fd, v)
	}
	if len(bad) > 0 {
		return a2a.InvalidParams(bad...)
	}
	return nil
}

// scalar parses one query value for a field.
func scalar(fd protoreflect.FieldDescriptor, raw string) (protoreflect.Value, bool) {
	if fd.IsList() || fd.IsMap() {
		return protoreflect.Value{}, false
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(raw), true
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(raw)
		return protoreflect.ValueOfBool(b), err == nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(raw, 10, 32)
		return protoreflect.ValueOfInt32(int32(n)), err == nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// GetTaskRequest.currentGeneration (A2A 1.1, spec §11.5)
		n, err := strconv.ParseInt(raw, 10, 64)
		return protoreflect.ValueOfInt64(n), err == nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(raw)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), true
		}
		return protoreflect.Value{}, false
	case protoreflect.MessageKind:
		if fd.Message().FullName() == "google.protobuf.Timestamp" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return protoreflect.Value{}, false
			}
			return protoreflect.ValueOfMessage(timestamppb.New(t).ProtoReflect()), true
		}
	}
	return protoreflect.Value{}, false
}

// queryOf renders the populated fields of a GET or DELETE request as query
// parameters named by their JSON names (spec §11.5): strings as they are,
// booleans true/false, enums by name, timestamps in RFC 3339.
func encodeQuery(msg protoreflect.Message, bound map[string]bool) (string, error) {
	q := url.Values{}
	var err error
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := fd.JSONName()
		if bound[name] {
			return true
		}
		if fd.IsList() || fd.IsMap() {
			err = fmt.Errorf("field %s cannot travel in a query string", name)
			return false
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			q.Set(name, v.String())
		case protoreflect.BoolKind:
			q.Set(name, strconv.FormatBool(v.Bool()))
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
			protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			q.Set(name, strconv.FormatInt(v.Int(), 10))
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			q.Set(name, strconv.FormatUint(v.Uint(), 10))
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				q.Set(name, string(ev.Name()))
			} else {
				q.Set(name, strconv.Itoa(int(v.Enum())))
			}
		case protoreflect.MessageKind:
			ts, ok := v.Message().Interface().(*timestamppb.Timestamp)
			if !ok {
				err = fmt.Errorf("field %s cannot travel in a query string", name)
				return false
			}
			q.Set(name, ts.AsTime().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
		default:
			err = fmt.Errorf("field %s cannot travel in a query string", name)
			return false
		}
		return true
	})
	if err != nil {
		return "", err
	}
	return q.Encode(), nil
}

package a2a

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// CloneArtifact copies every field of Artifact and Part: the copy equals
// the original and shares nothing with it; and the test fails when either
// message gains a field, so that CloneArtifact learns it.
func TestCloneArtifact(t *testing.T) {
	// The fields CloneArtifact copies; the proto must have no others.
	copied := map[string]int{"Artifact": 6, "Part": 7}
	for _, m := range []proto.Message{&Artifact{}, &Part{}} {
		md := m.ProtoReflect().Descriptor()
		if n := md.Fields().Len(); n != copied[string(md.Name())] {
			t.Errorf("%s has %d fields, CloneArtifact copies %d: teach it the new ones", md.Name(), n, copied[string(md.Name())])
		}
	}
	meta, err := structpb.NewStruct(map[string]any{"k": "v", "n": 1.5, "l": []any{true, nil}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "future")
	cases := []*Artifact{
		nil,
		{},
		{ArtifactId: "a", Parts: []*Part{}},
		{
			ArtifactId: "a1", Name: "n", Description: "d", Metadata: meta, Extensions: []string{"x", "y"},
			Parts: []*Part{
				{Content: &Part_Text{Text: "t"}, Metadata: meta, Filename: "f.txt", MediaType: "text/plain"},
				{Content: &Part_Raw{Raw: []byte{0, 1, 2}}},
				{Content: &Part_Url{Url: "https://example.com/f"}},
				{Content: &Part_Data{Data: structpb.NewStructValue(meta)}},
				{Content: &Part_Data{}},
				{},
				nil,
			},
		},
	}
	withUnknown := &Artifact{ArtifactId: "u", Parts: []*Part{{Content: &Part_Text{Text: "t"}}}}
	withUnknown.ProtoReflect().SetUnknown(unknown)
	withUnknown.Parts[0].ProtoReflect().SetUnknown(unknown)
	cases = append(cases, withUnknown)
	for i, a := range cases {
		c := CloneArtifact(a)
		if !proto.Equal(c, a) || (a == nil) != (c == nil) {
			t.Errorf("case %d: clone %v, want %v", i, c, a)
			continue
		}
		if a == nil || len(a.Parts) == 0 {
			continue
		}
		// Nothing shared: changing the original leaves the copy as it was.
		want := proto.Clone(c)
		if a.Parts[0] != nil {
			a.Parts[0].Filename = "changed"
		}
		for _, p := range a.Parts {
			if r, ok := p.GetContent().(*Part_Raw); ok {
				r.Raw[0] = 9
			}
		}
		if a.Metadata != nil {
			a.Metadata.Fields["k"] = structpb.NewStringValue("changed")
		}
		if len(a.Extensions) > 0 {
			a.Extensions[0] = "changed"
		}
		if !proto.Equal(c, want) {
			t.Errorf("case %d: the copy changed with the original", i)
		}
	}
}

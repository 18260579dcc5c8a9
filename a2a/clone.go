package a2a

import (
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// CloneArtifact returns a deep copy of a, as proto.Clone does (unknown
// fields included), written out for the server's hottest copy: every
// artifact chunk an agent emits is copied before it is stored, and
// proto.Clone, which walks the message by reflection, was 7 % of the CPU
// of a 20-chunk stream on the memory store. The metadata and data values
// (google.protobuf.Struct and Value) are copied with proto.Clone. A test
// fails when Artifact or Part gains a field this does not copy.
func CloneArtifact(a *Artifact) *Artifact {
	if a == nil {
		return nil
	}
	c := &Artifact{
		ArtifactId:  a.ArtifactId,
		Name:        a.Name,
		Description: a.Description,
		Metadata:    cloneStruct(a.Metadata),
		Extensions:  slices.Clone(a.Extensions),
	}
	if a.Parts != nil {
		c.Parts = make([]*Part, len(a.Parts))
		for i, p := range a.Parts {
			c.Parts[i] = clonePart(p)
		}
	}
	copyUnknown(c, a)
	return c
}

// clonePart is CloneArtifact for one part.
func clonePart(p *Part) *Part {
	if p == nil {
		return nil
	}
	c := &Part{Metadata: cloneStruct(p.Metadata), Filename: p.Filename, MediaType: p.MediaType}
	switch v := p.Content.(type) {
	case *Part_Text:
		c.Content = &Part_Text{Text: v.Text}
	case *Part_Raw:
		c.Content = &Part_Raw{Raw: slices.Clone(v.Raw)}
	case *Part_Url:
		c.Content = &Part_Url{Url: v.Url}
	case *Part_Data:
		var d *structpb.Value
		if v.Data != nil {
			d = proto.Clone(v.Data).(*structpb.Value)
		}
		c.Content = &Part_Data{Data: d}
	}
	copyUnknown(c, p)
	return c
}

// cloneStruct copies a Struct, nil staying nil.
func cloneStruct(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return nil
	}
	return proto.Clone(s).(*structpb.Struct)
}

// copyUnknown gives dst a copy of src's unknown fields, if it has any.
func copyUnknown(dst, src proto.Message) {
	if u := src.ProtoReflect().GetUnknown(); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(slices.Clone(u))
	}
}

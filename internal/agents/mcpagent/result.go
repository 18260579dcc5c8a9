package mcpagent

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// partsOf maps a tool's result to A2A parts, in order:
// text content as text parts; images and audio as file parts with their
// bytes and media type; an embedded resource as a file part (its bytes,
// or its text as bytes) named by its URI; a resource link as a file part
// with its URL; structuredContent last, as one data part. Content of a
// type this SDK does not know is kept as a data part of its JSON.
func partsOf(res *mcp.CallToolResult) ([]*a2a.Part, error) {
	var parts []*a2a.Part
	for _, c := range res.Content {
		p, err := partOf(c)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if res.StructuredContent != nil {
		p, err := dataPart(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("structuredContent: %w", err)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// partOf maps one content block.
func partOf(c mcp.Content) (*a2a.Part, error) {
	switch x := c.(type) {
	case *mcp.TextContent:
		return a2a.TextPart(x.Text), nil
	case *mcp.ImageContent:
		return &a2a.Part{Content: &a2a.Part_Raw{Raw: x.Data}, MediaType: x.MIMEType}, nil
	case *mcp.AudioContent:
		return &a2a.Part{Content: &a2a.Part_Raw{Raw: x.Data}, MediaType: x.MIMEType}, nil
	case *mcp.ResourceLink:
		return &a2a.Part{Content: &a2a.Part_Url{Url: x.URI}, MediaType: x.MIMEType, Filename: x.Name}, nil
	case *mcp.EmbeddedResource:
		r := x.Resource
		if r == nil {
			return nil, fmt.Errorf("an embedded resource without contents")
		}
		raw := r.Blob
		if raw == nil {
			raw = []byte(r.Text)
		}
		return &a2a.Part{Content: &a2a.Part_Raw{Raw: raw}, MediaType: r.MIMEType, Filename: r.URI}, nil
	}
	return dataPart(c) // a content type newer than this mapping: its JSON
}

// dataPart is a data part holding v's JSON.
func dataPart(v any) (*a2a.Part, error) {
	pv, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	return &a2a.Part{Content: &a2a.Part_Data{Data: pv}}, nil
}

// jsonValue is v, any value that marshals to JSON, as a protobuf Value.
func jsonValue(v any) (*structpb.Value, error) {
	b, err := jsonMarshal(v)
	if err != nil {
		return nil, err
	}
	pv := &structpb.Value{}
	if err := pv.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return pv, nil
}

// errorText is the text of a result with isError: its text content,
// joined, or a sentence when it has none.
func errorText(tool string, res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) == 0 {
		return fmt.Sprintf("the tool %s failed (isError) without saying why", tool)
	}
	return strings.Join(texts, "\n")
}

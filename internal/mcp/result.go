package mcp

import (
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kinds of Part.
const (
	PartText         = "text"
	PartImage        = "image"
	PartAudio        = "audio"
	PartResourceLink = "resource_link"
	PartResource     = "resource" // an embedded resource: text or a blob
)

// CallResult is a tool call's result, independent of the SDK's types.
type CallResult struct {
	Content []Part
	// Structured is the result's structuredContent, if any.
	Structured json.RawMessage
	// IsError: the tool ran and failed; Content says why.
	IsError bool
}

// Part is one content item of a result. Data holds the bytes of an image,
// audio clip or blob resource.
type Part struct {
	Type string
	Text string
	MIME string
	Data []byte
	URI  string
	Name string
}

func convertResult(r *sdk.CallToolResult) *CallResult {
	out := &CallResult{IsError: r.IsError}
	for _, c := range r.Content {
		if p, ok := contentPart(c); ok {
			out.Content = append(out.Content, p)
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	return out
}

// contentPart converts one content item; kinds a client does not receive
// from a tool (tool use inside sampling) are skipped.
func contentPart(c sdk.Content) (Part, bool) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return Part{Type: PartText, Text: c.Text}, true
	case *sdk.ImageContent:
		return Part{Type: PartImage, MIME: c.MIMEType, Data: c.Data}, true
	case *sdk.AudioContent:
		return Part{Type: PartAudio, MIME: c.MIMEType, Data: c.Data}, true
	case *sdk.ResourceLink:
		return Part{Type: PartResourceLink, URI: c.URI, Name: c.Name, MIME: c.MIMEType, Text: c.Description}, true
	case *sdk.EmbeddedResource:
		if c.Resource != nil {
			return resourcePart(c.Resource), true
		}
	}
	return Part{}, false
}

func resourcePart(r *sdk.ResourceContents) Part {
	return Part{Type: PartResource, URI: r.URI, MIME: r.MIMEType, Text: r.Text, Data: r.Blob}
}

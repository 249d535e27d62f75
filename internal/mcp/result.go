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
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, Part{Type: PartText, Text: c.Text})
		case *sdk.ImageContent:
			out.Content = append(out.Content, Part{Type: PartImage, MIME: c.MIMEType, Data: c.Data})
		case *sdk.AudioContent:
			out.Content = append(out.Content, Part{Type: PartAudio, MIME: c.MIMEType, Data: c.Data})
		case *sdk.ResourceLink:
			out.Content = append(out.Content, Part{Type: PartResourceLink, URI: c.URI, Name: c.Name, MIME: c.MIMEType, Text: c.Description})
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				out.Content = append(out.Content, Part{Type: PartResource, URI: c.Resource.URI, MIME: c.Resource.MIMEType, Text: c.Resource.Text, Data: c.Resource.Blob})
			}
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	return out
}

package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceInfo describes a resource a server offers (a file, a record, a
// page) that a person may insert into a message.
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIME        string `json:"mime,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// PromptInfo describes a prompt template a server offers.
type PromptInfo struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Arguments   []PromptArg `json:"arguments,omitempty"`
}

// PromptArg is one argument of a prompt template.
type PromptArg struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of an expanded prompt: "user" or
// "assistant", and its content.
type PromptMessage struct {
	Role string
	Part Part
}

// capable reports whether the server announced a capability; a server
// that did not is answered with an empty list rather than asked.
func capable(sess *sdk.ClientSession, has func(*sdk.ServerCapabilities) bool) bool {
	r := sess.InitializeResult()
	return r == nil || r.Capabilities == nil || has(r.Capabilities)
}

// ListResources lists the resources of server, starting it if needed.
func (m *Manager) ListResources(ctx context.Context, server string) ([]ResourceInfo, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	var out []ResourceInfo
	err = s.do(ctx, "listing resources", func(ctx context.Context, sess *sdk.ClientSession) error {
		if !capable(sess, func(c *sdk.ServerCapabilities) bool { return c.Resources != nil }) {
			return nil
		}
		for r, err := range sess.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIME: r.MIMEType, Size: r.Size})
		}
		return nil
	})
	return out, err
}

// ReadResource reads one resource of server: its contents as parts of type
// PartResource (text, or a blob in Data).
func (m *Manager) ReadResource(ctx context.Context, server, uri string) ([]Part, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	var out []Part
	err = s.do(ctx, fmt.Sprintf("reading %q", uri), func(ctx context.Context, sess *sdk.ClientSession) error {
		res, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		for _, c := range res.Contents {
			if c != nil {
				out = append(out, resourcePart(c))
			}
		}
		return nil
	})
	return out, err
}

// ListPrompts lists the prompt templates of server, starting it if needed.
func (m *Manager) ListPrompts(ctx context.Context, server string) ([]PromptInfo, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	var out []PromptInfo
	err = s.do(ctx, "listing prompts", func(ctx context.Context, sess *sdk.ClientSession) error {
		if !capable(sess, func(c *sdk.ServerCapabilities) bool { return c.Prompts != nil }) {
			return nil
		}
		for p, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			info := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				if a != nil {
					info.Arguments = append(info.Arguments, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// GetPrompt expands prompt name of server with args.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]PromptMessage, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	var out []PromptMessage
	err = s.do(ctx, fmt.Sprintf("getting prompt %q", name), func(ctx context.Context, sess *sdk.ClientSession) error {
		res, err := sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		for _, msg := range res.Messages {
			if msg == nil {
				continue
			}
			if p, ok := contentPart(msg.Content); ok {
				out = append(out, PromptMessage{Role: string(msg.Role), Part: p})
			}
		}
		return nil
	})
	return out, err
}

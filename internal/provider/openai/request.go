package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"`
	// MaxTokens is the field every compatible server knows; OpenAI's
	// reasoning models refuse it and want MaxCompletionTokens, which
	// compat switches to when the server says so.
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, nil for an assistant message that only calls
	// tools (the API wants null there), or a []contentPart for a user
	// message with images.
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// contentPart is one part of a multi-part user message.
type contentPart struct {
	Type     string    `json:"type"` // "text" or "image_url"
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"` // a data: URL carrying the image itself
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name string `json:"name"`
	// Arguments is JSON text inside a JSON string, as the API defines it.
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// compat holds the request adjustments a particular server needs.
type compat struct {
	maxCompletionTokens bool // send max_completion_tokens instead of max_tokens
	noStreamOptions     bool // the server rejects stream_options (older Azure API versions)
}

// adjust derives the next request shape from a 400 message naming a
// parameter we can do without or rename. It reports false when the
// message asks for nothing we can change, so one 400 never loops.
func (c compat) adjust(msg string, req provider.Request) (compat, bool) {
	switch {
	case !c.maxCompletionTokens && req.MaxTokens > 0 && strings.Contains(msg, "max_completion_tokens"):
		c.maxCompletionTokens = true
		return c, true
	case !c.noStreamOptions && strings.Contains(msg, "stream_options"):
		c.noStreamOptions = true
		return c, true
	}
	return c, false
}

// emptySchema is sent for a tool without parameters: several compatible
// servers reject a function whose parameters are missing.
const emptySchema = `{"type":"object","properties":{}}`

// encodeRequest builds the JSON body for req.
func encodeRequest(req provider.Request, c compat) ([]byte, error) {
	msgs, err := convertMessages(req.System, req.Messages)
	if err != nil {
		return nil, err
	}
	body := chatRequest{
		Model:           req.Model,
		Messages:        msgs,
		ReasoningEffort: req.ReasoningEffort,
		Stream:          true,
	}
	if !c.noStreamOptions {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.MaxTokens > 0 {
		if c.maxCompletionTokens {
			body.MaxCompletionTokens = req.MaxTokens
		} else {
			body.MaxTokens = req.MaxTokens
		}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(emptySchema)
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("tool %q has a parameters schema that is not valid JSON", t.Name)
		}
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatToolSpec{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Prompts are full of <, > and &; escaping them is legal but makes
	// every recorded request harder to read.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// convertMessages maps the history to Chat Completions messages. What the
// API cannot carry is left out rather than faked: reasoning (there is no
// field for it), empty user and assistant messages (servers reject or
// choke on them).
func convertMessages(system string, msgs []provider.Message) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(msgs)+1)
	if strings.TrimSpace(system) != "" {
		out = append(out, chatMessage{Role: "system", Content: &system})
	}
	for i, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			if parts := userParts(m); parts != nil {
				out = append(out, chatMessage{Role: "user", Content: parts})
				continue
			}
			if strings.TrimSpace(m.Text) == "" {
				continue
			}
			out = append(out, chatMessage{Role: "user", Content: ptr(m.Text)})
		case provider.RoleAssistant:
			hasText := strings.TrimSpace(m.Text) != ""
			if !hasText && len(m.ToolCalls) == 0 {
				continue
			}
			cm := chatMessage{Role: "assistant"}
			if hasText {
				cm.Content = ptr(m.Text)
			}
			for _, tc := range m.ToolCalls {
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{
					ID: tc.ID, Type: "function",
					Function: chatFunction{Name: tc.Name, Arguments: argsText(tc.Args)},
				})
			}
			out = append(out, cm)
		case provider.RoleTool:
			for _, r := range m.ToolResults {
				out = append(out, chatMessage{Role: "tool", ToolCallID: r.ToolCallID, Content: ptr(resultText(r))})
			}
		default:
			return nil, fmt.Errorf("message %d has unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// userParts is a user message with loaded images as text and image_url
// parts (images as data: URLs, which every compatible server that takes
// images accepts); nil when it has none, so plain messages keep the plain
// string form every server knows.
func userParts(m provider.Message) []contentPart {
	var parts []contentPart
	if strings.TrimSpace(m.Text) != "" {
		parts = append(parts, contentPart{Type: "text", Text: m.Text})
	}
	images := 0
	for _, im := range m.Images {
		if im.Data == nil {
			continue
		}
		images++
		parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{
			URL: "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}})
	}
	if images == 0 {
		return nil
	}
	return parts
}

// argsText renders tool-call arguments as the compact JSON text the API
// expects; absent arguments are an empty object.
func argsText(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}

// resultText marks failed tool calls in the text, because Chat Completions
// has no is_error flag and the model should not mistake an error message
// for output.
func resultText(r provider.ToolResult) string {
	if r.IsError && !strings.HasPrefix(strings.ToLower(r.Content), "error") {
		return "Error: " + r.Content
	}
	return r.Content
}

func ptr(s string) *string { return &s }

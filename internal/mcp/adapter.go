package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Bounds of what a result keeps.
const (
	// MaxOutput bounds the text the model sees (head and tail kept).
	MaxOutput = 64 << 10
	// MaxInlineData bounds the bytes of one image kept in the result's Data
	// (base64) for the transcript; a larger one is described, not kept.
	MaxInlineData = 512 << 10
)

// ResultData is the Data of an MCP tool's Result: what the transcript
// shows (docs/ARCHITECTURE.md, "MCP client").
type ResultData struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// IsError: the tool ran and reported a failure.
	IsError bool       `json:"is_error,omitempty"`
	Content []DataPart `json:"content"`
	// Structured is the tool's structuredContent, as sent.
	Structured json.RawMessage `json:"structured,omitempty"`
}

// DataPart is one content item: text, an image (with its bytes in Data,
// base64, up to MaxInlineData), audio, a link to a resource or an embedded
// resource. Binary data is described by MIME, Size and SHA256; Omitted
// says the bytes were not kept.
type DataPart struct {
	Type    string `json:"type"`
	Text    string `json:"text,omitempty"`
	MIME    string `json:"mime,omitempty"`
	Size    int    `json:"size,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Data    string `json:"data,omitempty"`
	Omitted bool   `json:"omitted,omitempty"`
	URI     string `json:"uri,omitempty"`
	Name    string `json:"name,omitempty"`
}

// NewTools lists the tools of every configured server, starting the
// servers that are not running, and adapts them to tool.Tool (for a run's
// registry). A server that cannot be started or listed contributes no
// tools; its error is joined into the returned error and its state says
// why, so the caller can still offer the others.
func NewTools(ctx context.Context, m *Manager) ([]tool.Tool, error) {
	return NewServerTools(ctx, m, m.Servers(), nil)
}

// ToolRule is the verdict a person configured for a server's tool:
// "allow", "ask" or "deny" ("" = ask).
type ToolRule func(server, tool string) string

// NewServerTools is NewTools for the named servers only (an unknown name
// is an error like a server that cannot start). rule, when not nil, gives
// each tool's verdict: it travels in the call's intent (tool.Intent.Rule)
// to the approval policy, and a tool denied is not offered at all.
func NewServerTools(ctx context.Context, m *Manager, servers []string, rule ToolRule) ([]tool.Tool, error) {
	var out []tool.Tool
	var errs []error
	for _, server := range servers {
		infos, err := m.ListTools(ctx, server)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i, name := range uniqueNames(server, infos) {
			var verdict string
			if rule != nil {
				verdict = rule(server, infos[i].Name)
			}
			if verdict == "deny" {
				continue
			}
			out = append(out, &mcpTool{m: m, server: server, info: infos[i], name: name, rule: verdict})
		}
	}
	return out, errors.Join(errs...)
}

// mcpTool is one tool of an MCP server, as a Caduceus tool.
type mcpTool struct {
	m      *Manager
	server string
	info   ToolInfo
	name   string
	rule   string // the configured verdict, for the policy
}

func (t *mcpTool) Spec() provider.ToolSpec {
	desc := t.info.Description
	if desc == "" {
		desc = t.info.Title
	}
	return provider.ToolSpec{
		Name:        t.name,
		Description: fmt.Sprintf("[MCP server %s, tool %s] %s", t.server, t.info.Name, desc),
		Parameters:  objectSchema(t.info.InputSchema),
	}
}

// objectSchema makes sure the parameters are an object schema, which
// providers require of every tool.
func objectSchema(s json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(s, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
		if b, err := json.Marshal(m); err == nil {
			return b
		}
	}
	return s
}

func (t *mcpTool) Label(args json.RawMessage) string {
	return fmt.Sprintf("%s · %s %s", t.server, t.info.Name, clip(compact(args), 80))
}

func (t *mcpTool) Intent(args json.RawMessage) tool.Intent {
	var obj map[string]json.RawMessage
	invalid := len(bytes.TrimSpace(args)) > 0 && json.Unmarshal(args, &obj) != nil
	return tool.Intent{
		Effect: tool.EffectExternal,
		// What a person approves: the server, the tool and the exact
		// arguments.
		Action:  fmt.Sprintf("MCP %s · %s %s", t.server, t.info.Name, clip(compact(args), 2000)),
		Invalid: invalid,
		Rule:    t.rule,
	}
}

func (t *mcpTool) Run(ctx context.Context, _ tool.Env, args json.RawMessage) (tool.Result, error) {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 && json.Unmarshal(args, &obj) != nil {
		return tool.Result{Status: event.ToolError, Output: "arguments must be a JSON object"}, nil
	}
	res, err := t.m.Call(ctx, t.server, t.info.Name, args)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		case errors.Is(err, context.DeadlineExceeded):
			return tool.Result{Status: event.ToolTimeout, Output: err.Error()}, nil
		}
		return tool.Result{Status: event.ToolError, Output: err.Error()}, nil
	}
	return mapResult(t.server, t.info.Name, res), nil
}

// mapResult turns a call's result into what the model reads (text; binary
// parts described in brackets, since tool results reach providers as text)
// and what people see (ResultData).
func mapResult(server, toolName string, r *CallResult) tool.Result {
	data := ResultData{Server: server, Tool: toolName, IsError: r.IsError, Structured: r.Structured, Content: []DataPart{}}
	var text []string
	hasText := false
	for _, p := range r.Content {
		d := DataPart{Type: p.Type, MIME: p.MIME, URI: p.URI, Name: p.Name, Text: p.Text}
		if len(p.Data) > 0 {
			sum := sha256.Sum256(p.Data)
			d.Size, d.SHA256 = len(p.Data), hex.EncodeToString(sum[:])
			if p.Type == PartImage && len(p.Data) <= MaxInlineData {
				d.Data = base64.StdEncoding.EncodeToString(p.Data)
			} else {
				d.Omitted = true
			}
		}
		data.Content = append(data.Content, d)
		switch p.Type {
		case PartText:
			hasText = true
			text = append(text, p.Text)
		case PartImage, PartAudio:
			text = append(text, fmt.Sprintf("[%s %s, %d bytes: shown to the person, not to you]", p.Type, p.MIME, len(p.Data)))
		case PartResourceLink:
			text = append(text, fmt.Sprintf("[resource link %s %s]", p.URI, p.Name))
		case PartResource:
			if p.Text != "" {
				text = append(text, fmt.Sprintf("[resource %s]\n%s", p.URI, p.Text))
			} else {
				text = append(text, fmt.Sprintf("[resource %s %s, %d bytes]", p.URI, p.MIME, len(p.Data)))
			}
		}
	}
	if !hasText && len(r.Structured) > 0 {
		// The spec asks servers to send structured content as text too;
		// for one that does not, the model reads the JSON.
		text = append(text, string(r.Structured))
	}
	out := strings.Join(text, "\n")
	if out == "" {
		out = "(no content)"
	}
	status := event.ToolOK
	if r.IsError {
		status = event.ToolError
	}
	return tool.Result{Status: status, Output: capText(out, MaxOutput), Data: data}
}

func compact(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return string(args)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// capText keeps the head and the tail of a text longer than limit.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head, tail := limit*3/4, limit/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", s[:head], start-head, s[start:])
}

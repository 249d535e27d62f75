// Package provider is the boundary between the agent loop and language
// models. A Provider streams one model call as a sequence of Chunks; the
// shapes fit the OpenAI-compatible and Anthropic streaming APIs (tool-call
// arguments arrive as fragments keyed by index, reasoning may carry a
// signature, usage arrives at the end).
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
)

// Role of a message in the conversation.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // results of tool calls, in reply to an assistant message
)

// Message is one entry of the conversation sent to a model.
type Message struct {
	Role Role `json:"role"`
	// Text is the user text or the assistant's visible answer.
	Text string `json:"text,omitempty"`
	// Reasoning blocks the assistant produced before its answer; providers
	// that require them in history (Anthropic thinking) replay them.
	Reasoning []Reasoning `json:"reasoning,omitempty"`
	// ToolCalls the assistant made (RoleAssistant).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolResults answer the previous assistant message's ToolCalls (RoleTool).
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	// Images the person attached (RoleUser). Providers send those with
	// Data; the runner fills it in from the workspace when it builds the
	// request, so history rebuilt from the journal never carries bytes.
	Images []Image `json:"images,omitempty"`
}

// Image is an image input of a user message.
type Image struct {
	// Path is relative to the workspace; MIME is image/png, image/jpeg,
	// image/gif or image/webp (what every image-capable provider takes).
	Path string `json:"path"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
	// SHA256 (hex) is the content's digest when it was attached: a file
	// changed since is not sent as if it were the same image.
	SHA256 string `json:"sha256,omitempty"`
	Data   []byte `json:"-"`
}

// Reasoning is one reasoning/thinking block.
type Reasoning struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
	// Redacted is the opaque payload of a block the provider encrypted
	// (Anthropic redacted_thinking); it must be sent back unchanged.
	Redacted string `json:"redacted,omitempty"`
}

// ToolCall is a complete tool call.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolResult is the outcome of one tool call as the model sees it.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema object
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default for the model
	// ThinkingBudget enables extended thinking with this many tokens
	// (Anthropic); 0 leaves it off.
	ThinkingBudget int
	// ReasoningEffort is "low", "medium" or "high" for OpenAI reasoning
	// models; empty leaves the server's default.
	ReasoningEffort string
}

// ChunkKind says which field of a Chunk is set.
type ChunkKind int

const (
	ChunkText      ChunkKind = iota + 1 // Text holds a visible text fragment
	ChunkReasoning                      // Text holds a reasoning fragment; Signature may be set
	ChunkToolCall                       // ToolCall holds a fragment of a tool call
	ChunkUsage                          // Usage holds token counts (cumulative for the call)
	ChunkDone                           // StopReason says why the model stopped
)

// ToolCallDelta is a fragment of a tool call. The first fragment of an
// Index carries ID and Name; ArgsFragment pieces concatenate to JSON.
type ToolCallDelta struct {
	Index        int
	ID           string
	Name         string
	ArgsFragment string
}

// Usage counts tokens of one model call. InputTokens counts every input
// token, cached or not; CachedTokens is the part served from the
// provider's prompt cache. ReasoningTokens are part of OutputTokens.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	CachedTokens    int64
	ReasoningTokens int64
}

// Stop reasons, normalised across providers.
const (
	StopEnd       = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// Chunk is one item of a model stream.
type Chunk struct {
	Kind      ChunkKind
	Text      string
	Signature string
	// Redacted carries a whole redacted reasoning block (ChunkReasoning).
	Redacted   string
	ToolCall   ToolCallDelta
	Usage      Usage
	StopReason string
}

// Provider streams model calls. The iterator ends after a ChunkDone or with
// an error; cancelling ctx aborts the underlying request.
type Provider interface {
	// Name identifies the provider ("demo", "openai", ...).
	Name() string
	// Demo reports whether this is the offline demo model, so every surface
	// can say so plainly.
	Demo() bool
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// Error is a provider failure with a stable code, safe to show to people.
type Error struct {
	Provider string
	Code     string // e.g. "rate_limited", "bad_request", "auth", "stream_cut", "scripted"
	Message  string
	// Retryable errors may be retried before the first token.
	Retryable bool
}

func (e *Error) Error() string { return e.Provider + ": " + e.Code + ": " + e.Message }

// AsError unwraps err to a *Error when it is one.
func AsError(err error) (*Error, bool) {
	var pe *Error
	ok := errors.As(err, &pe)
	return pe, ok
}

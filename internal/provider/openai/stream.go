package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// chunkJSON is one chat.completion.chunk, or a whole chat.completion when
// a server ignored stream:true (choices then carry message, not delta).
// Only the fields we use are declared, so the extras servers add
// (obfuscation, timings, reasoning_details, provider) cost nothing.
type chunkJSON struct {
	Choices []choiceJSON    `json:"choices"`
	Usage   *usageJSON      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choiceJSON struct {
	Index        int        `json:"index"`
	Delta        deltaJSON  `json:"delta"`
	Message      *deltaJSON `json:"message"`
	FinishReason string     `json:"finish_reason"`
}

type deltaJSON struct {
	// Text fields are raw because servers disagree on their type: a
	// string, null, or (a few) an array of content parts.
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"` // DeepSeek, vLLM, llama.cpp
	Reasoning        json.RawMessage `json:"reasoning"`         // OpenRouter, Ollama, newer vLLM
	ToolCalls        []toolCallJSON  `json:"tool_calls"`
}

type toolCallJSON struct {
	Index    *int   `json:"index"` // absent on some servers
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string of JSON text; a few servers send
		// the object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usageJSON struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for cached input tokens.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

func (u *usageJSON) usage() provider.Usage {
	out := provider.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if out.CachedTokens == 0 {
		out.CachedTokens = u.PromptCacheHitTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// decoder turns the events of one response into provider chunks.
type decoder struct {
	name    string
	secrets []string

	// calls holds, by our dense index, the id and name already emitted,
	// so later fragments do not repeat them and a new id is recognised.
	calls []callState
	// byKey maps the server's notion of a call (its index, or the
	// position in the array when there is none) to the latest call that
	// used it.
	byKey map[int]int

	finish  string
	usage   *provider.Usage
	started bool // content went out: a later error can no longer be retried
}

type callState struct{ id, name string }

func newDecoder(name string, secrets []string) *decoder {
	return &decoder{name: name, secrets: secrets, byKey: map[int]int{}}
}

// stream reads SSE events until [DONE], an error, or the end of the body.
func (d *decoder) stream(ctx context.Context, r *wire.SSEReader, yield func(provider.Chunk, error) bool) {
	for {
		// Buffered events must not outlive a cancellation: the caller
		// asked to stop now, not after the buffer drains.
		if err := ctx.Err(); err != nil {
			yield(provider.Chunk{}, err)
			return
		}
		ev, err := r.Next()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				yield(provider.Chunk{}, ctx.Err())
			case d.finish != "":
				// Some servers close after the finish_reason chunk without
				// [DONE]; the answer itself is complete.
				d.end(yield)
			case errors.Is(err, io.EOF):
				yield(provider.Chunk{}, wire.StreamCut(d.name, nil, d.secrets...))
			default:
				yield(provider.Chunk{}, wire.StreamCut(d.name, err, d.secrets...))
			}
			return
		}
		chunks, done, err := d.event(ev)
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(provider.Chunk{}, err)
			return
		}
		if done {
			d.end(yield)
			return
		}
	}
}

// whole decodes a non-streamed chat.completion body.
func (d *decoder) whole(ctx context.Context, body io.Reader, yield func(provider.Chunk, error) bool) {
	data, err := io.ReadAll(io.LimitReader(body, 32<<20))
	if err != nil {
		if ctx.Err() != nil {
			yield(provider.Chunk{}, ctx.Err())
		} else {
			yield(provider.Chunk{}, wire.StreamCut(d.name, err, d.secrets...))
		}
		return
	}
	chunks, _, err := d.event(wire.Event{Data: data})
	for _, c := range chunks {
		if !yield(c, nil) {
			return
		}
	}
	if err != nil {
		yield(provider.Chunk{}, err)
		return
	}
	d.end(yield)
}

// end emits the usage, if any arrived, then the one ChunkDone.
func (d *decoder) end(yield func(provider.Chunk, error) bool) {
	if d.usage != nil && !yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: *d.usage}, nil) {
		return
	}
	yield(provider.Chunk{Kind: provider.ChunkDone, StopReason: d.stopReason()}, nil)
}

func (d *decoder) stopReason() string {
	switch d.finish {
	case "stop", "":
		// Ollama and others say "stop" after tool calls; what the model
		// asked for is what counts.
		if len(d.calls) > 0 {
			return provider.StopToolUse
		}
		return provider.StopEnd
	case "tool_calls", "function_call":
		return provider.StopToolUse
	case "length":
		return provider.StopMaxTokens
	default:
		return d.finish
	}
}

// event decodes one SSE event. done reports [DONE].
func (d *decoder) event(ev wire.Event) (chunks []provider.Chunk, done bool, err error) {
	data := bytes.TrimSpace(ev.Data)
	switch {
	case len(data) == 0:
		return nil, false, nil
	case string(data) == "[DONE]":
		return nil, true, nil
	}
	var c chunkJSON
	err = json.Unmarshal(data, &c)
	switch {
	case err == nil && present(c.Error):
		return nil, false, d.errorFrom(c.Error, "")
	case ev.Name == "error" && err == nil && data[0] == '{':
		// A named error event (vLLM, TGI) whose data is the error object.
		return nil, false, d.errorFrom(data, "")
	case ev.Name == "error":
		return nil, false, d.errorFrom(nil, string(data))
	case err != nil:
		return nil, false, &provider.Error{Provider: d.name, Code: "bad_response",
			Message: wire.Redact("cannot decode a stream event ("+err.Error()+"): "+clip(string(data), 200), d.secrets...)}
	}
	return d.apply(&c)
}

// apply turns one decoded chunk into provider chunks, in the order a
// reader expects: reasoning, then text, then tool calls.
func (d *decoder) apply(c *chunkJSON) ([]provider.Chunk, bool, error) {
	if c.Usage != nil {
		u := c.Usage.usage()
		d.usage = &u
	}
	ch, ok := firstChoice(c.Choices)
	if !ok {
		return nil, false, nil
	}
	delta := ch.Delta
	if ch.Message != nil {
		delta = *ch.Message
	}
	var out []provider.Chunk
	// Servers that send both fields send the same text twice, so the
	// first non-empty one wins.
	if r := textOf(delta.ReasoningContent); r != "" {
		out = append(out, provider.Chunk{Kind: provider.ChunkReasoning, Text: r})
	} else if r := textOf(delta.Reasoning); r != "" {
		out = append(out, provider.Chunk{Kind: provider.ChunkReasoning, Text: r})
	}
	if t := textOf(delta.Content); t != "" {
		out = append(out, provider.Chunk{Kind: provider.ChunkText, Text: t})
	}
	for pos, tc := range delta.ToolCalls {
		if c, ok := d.toolCall(pos, tc); ok {
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		d.started = true
	}
	if ch.FinishReason != "" {
		d.finish = ch.FinishReason
		if ch.FinishReason == "error" {
			// OpenRouter's way to say the upstream failed mid-answer
			// when it has no error object to send.
			return out, false, d.errorFrom(nil, "the model stopped with an error")
		}
	}
	return out, false, nil
}

// firstChoice returns choice 0: we never ask for more than one.
func firstChoice(cs []choiceJSON) (choiceJSON, bool) {
	for _, c := range cs {
		if c.Index == 0 {
			return c, true
		}
	}
	if len(cs) > 0 {
		return cs[0], true
	}
	return choiceJSON{}, false
}

// toolCall maps a server fragment to a ToolCallDelta with our dense
// index. A fragment belongs to the call last seen at its key unless it
// brings a different id or function name: servers without an index (and
// those that reuse index 0) start every new call that way.
func (d *decoder) toolCall(pos int, tc toolCallJSON) (provider.Chunk, bool) {
	key := pos
	if tc.Index != nil {
		key = *tc.Index
	}
	name := tc.Function.Name
	args := argsOf(tc.Function.Arguments)
	i, ok := d.byKey[key]
	if ok {
		cur := d.calls[i]
		if (tc.ID != "" && cur.id != "" && tc.ID != cur.id) || (name != "" && cur.name != "" && name != cur.name) {
			ok = false
		}
	}
	if !ok {
		i = len(d.calls)
		d.calls = append(d.calls, callState{})
		d.byKey[key] = i
	}
	cur := &d.calls[i]
	delta := provider.ToolCallDelta{Index: i, ArgsFragment: args}
	if tc.ID != "" && cur.id == "" {
		cur.id, delta.ID = tc.ID, tc.ID
	}
	if name != "" && cur.name == "" {
		cur.name, delta.Name = name, name
	}
	if delta.ID == "" && delta.Name == "" && args == "" {
		return provider.Chunk{}, false
	}
	return provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: delta}, true
}

// errorObject is the error servers put inside a stream or a body.
type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string at OpenAI, a number at OpenRouter
}

// errorFrom builds the provider error for an error object (raw) or, when
// there is none, a bare message. Before any content it is retryable when
// the server's failure is transient; after, retrying would repeat what the
// user already saw.
func (d *decoder) errorFrom(raw json.RawMessage, fallback string) *provider.Error {
	var eo errorObject
	if present(raw) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			eo.Message = s
		} else if json.Unmarshal(raw, &eo) != nil {
			eo.Message = string(raw)
		}
	}
	msg := eo.Message
	if msg == "" {
		msg = fallback
	}
	if msg == "" {
		msg = "the server reported an error in the stream"
	}
	code, transient := classify(eo.Type, codeText(eo.Code))
	return &provider.Error{Provider: d.name, Code: code, Retryable: transient && !d.started,
		Message: wire.Redact(clip(msg, 1000), d.secrets...)}
}

// classify maps an error type and code (OpenAI's strings, OpenRouter's
// HTTP-like numbers) to our codes.
func classify(typ, code string) (string, bool) {
	s := strings.ToLower(typ + " " + code)
	switch {
	case strings.Contains(s, "quota"):
		// Out of credit: waiting will not help, the account needs money.
		return "rate_limited", false
	case strings.Contains(s, "rate_limit") || code == "429":
		return "rate_limited", true
	case strings.Contains(s, "overloaded") || code == "529" || code == "503":
		return "overloaded", true
	case strings.Contains(s, "auth") || strings.Contains(s, "api_key") || code == "401" || code == "403":
		return "auth", false
	case strings.Contains(s, "invalid_request") || strings.Contains(s, "context_length") || code == "400":
		return "bad_request", false
	default:
		return "server_error", true
	}
}

func codeText(raw json.RawMessage) string {
	if !present(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return n.String()
	}
	return ""
}

// textOf reads a text field: a string, null, or an array of content
// parts whose text is concatenated.
func textOf(raw json.RawMessage) string {
	if !present(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// argsOf reads a tool call's arguments fragment: normally a string; an
// object from servers that skip the encoding is passed on as its JSON.
func argsOf(raw json.RawMessage) string {
	if !present(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return ""
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// clip shortens s to at most n bytes without splitting a rune.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// streamEvent is the data of any Messages stream event; each event type
// fills its own fields.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage usage `json:"usage"`
	} `json:"message"`
	ContentBlock *contentBlock `json:"content_block"`
	Delta        *delta        `json:"delta"`
	Usage        *usage        `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// contentBlock opens a block in content_block_start.
type contentBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	ID        string `json:"id"`
	Name      string `json:"name"`
}

// delta is the delta of content_block_delta and of message_delta.
type delta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// usage fields are pointers because message_delta sends only those that
// changed, and an absent field must not reset a count to zero.
type usage struct {
	InputTokens   *int64 `json:"input_tokens"`
	OutputTokens  *int64 `json:"output_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
}

// decoder is the state of one stream.
type decoder struct {
	// toolIndex maps the content block index of each tool_use block to its
	// ordinal among tool calls: the agent numbers calls 0, 1, ... while
	// text and thinking blocks also take content block indexes.
	toolIndex map[int]int
	tools     int
	input     int64
	cacheRead int64
	cacheNew  int64
	output    int64
	stop      string
	// started: content reached the caller, so a failure now is not
	// retryable (provider.Error.Retryable means "before the first token").
	started bool
}

// yieldUsage reports the tokens counted so far. A failed stream reports
// them too: the input was paid for even when the answer was cut.
func (d *decoder) yieldUsage(yield func(provider.Chunk, error) bool) bool {
	u := provider.Usage{
		InputTokens:  d.input + d.cacheRead + d.cacheNew,
		OutputTokens: d.output,
		CachedTokens: d.cacheRead,
	}
	if u == (provider.Usage{}) {
		return true
	}
	return yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: u}, nil)
}

func (d *decoder) addUsage(u usage) {
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&d.input, u.InputTokens)
	set(&d.output, u.OutputTokens)
	set(&d.cacheRead, u.CacheRead)
	set(&d.cacheNew, u.CacheCreation)
}

// decode turns the event stream in body into chunks until message_stop, an
// error event, a broken stream or the consumer stopping.
func (p *Provider) decode(ctx context.Context, body io.Reader, yield func(provider.Chunk, error) bool) {
	sse := wire.NewSSEReader(body)
	d := decoder{toolIndex: map[int]int{}}
	for {
		// Events already buffered must not outlive a cancel.
		if err := ctx.Err(); err != nil {
			yield(provider.Chunk{}, err)
			return
		}
		ev, err := sse.Next()
		if err != nil {
			if ctx.Err() != nil {
				yield(provider.Chunk{}, ctx.Err())
				return
			}
			if errors.Is(err, io.EOF) {
				err = nil // a clean end is still a cut without message_stop
			}
			if d.yieldUsage(yield) {
				yield(provider.Chunk{}, wire.StreamCut(p.name, err, p.secrets...))
			}
			return
		}
		var e streamEvent
		if len(ev.Data) > 0 {
			if err := json.Unmarshal(ev.Data, &e); err != nil {
				yield(provider.Chunk{}, &provider.Error{Provider: p.name, Code: "bad_response",
					Message: wire.Redact("malformed "+ev.Name+" event: "+err.Error(), p.secrets...)})
				return
			}
		}
		typ := ev.Name
		if typ == "" {
			typ = e.Type
		}
		switch typ {
		case "message_start":
			if e.Message != nil {
				d.addUsage(e.Message.Usage)
			}
		case "content_block_start":
			d.started = true
			if e.ContentBlock != nil && !d.start(e.Index, e.ContentBlock, yield) {
				return
			}
		case "content_block_delta":
			if e.Delta != nil && !d.delta(e.Index, e.Delta, yield) {
				return
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				d.stop = e.Delta.StopReason
			}
			if e.Usage != nil {
				d.addUsage(*e.Usage)
			}
		case "message_stop":
			if !d.yieldUsage(yield) {
				return
			}
			yield(provider.Chunk{Kind: provider.ChunkDone, StopReason: d.stopReason()}, nil)
			return
		case "error":
			var typ, msg string
			if e.Error != nil {
				typ, msg = e.Error.Type, e.Error.Message
			}
			if d.yieldUsage(yield) {
				pe := p.apiError(typ, msg)
				pe.Retryable = pe.Retryable && !d.started
				yield(provider.Chunk{}, pe)
			}
			return
		}
		// ping, content_block_stop and event types added later carry
		// nothing a chunk could hold.
	}
}

// start handles content_block_start. Blocks of types this provider does
// not know (server tools, citations) are ignored, deltas included.
func (d *decoder) start(index int, b *contentBlock, yield func(provider.Chunk, error) bool) bool {
	switch b.Type {
	case blockText:
		if b.Text != "" {
			return yield(provider.Chunk{Kind: provider.ChunkText, Text: b.Text}, nil)
		}
	case blockThinking:
		if b.Thinking != "" || b.Signature != "" {
			return yield(provider.Chunk{Kind: provider.ChunkReasoning, Text: b.Thinking, Signature: b.Signature}, nil)
		}
	case blockRedacted:
		return yield(provider.Chunk{Kind: provider.ChunkReasoning, Redacted: b.Data}, nil)
	case blockToolUse:
		n := d.tools
		d.tools++
		d.toolIndex[index] = n
		return yield(provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: n, ID: b.ID, Name: b.Name}}, nil)
	}
	return true
}

// delta handles content_block_delta.
func (d *decoder) delta(index int, dl *delta, yield func(provider.Chunk, error) bool) bool {
	switch dl.Type {
	case "text_delta":
		if dl.Text != "" {
			return yield(provider.Chunk{Kind: provider.ChunkText, Text: dl.Text}, nil)
		}
	case "thinking_delta":
		if dl.Thinking != "" {
			return yield(provider.Chunk{Kind: provider.ChunkReasoning, Text: dl.Thinking}, nil)
		}
	case "signature_delta":
		return yield(provider.Chunk{Kind: provider.ChunkReasoning, Signature: dl.Signature}, nil)
	case "input_json_delta":
		// Only tool_use blocks are tool calls: server tools stream their
		// input the same way but run on Anthropic's side.
		if n, ok := d.toolIndex[index]; ok && dl.PartialJSON != "" {
			return yield(provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: n, ArgsFragment: dl.PartialJSON}}, nil)
		}
	}
	return true
}

// stopReason normalises the API's stop_reason; ones without a provider
// constant (pause_turn, refusal, ...) pass through for the caller to show.
func (d *decoder) stopReason() string {
	switch d.stop {
	case "end_turn", "stop_sequence":
		return provider.StopEnd
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens":
		return provider.StopMaxTokens
	case "":
		if d.tools > 0 {
			return provider.StopToolUse
		}
		return provider.StopEnd
	}
	return d.stop
}

package anthropic

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic/anthropictest"
)

func text(s string) provider.Chunk { return provider.Chunk{Kind: provider.ChunkText, Text: s} }
func think(s string) provider.Chunk {
	return provider.Chunk{Kind: provider.ChunkReasoning, Text: s}
}
func sig(s string) provider.Chunk { return provider.Chunk{Kind: provider.ChunkReasoning, Signature: s} }
func call(i int, id, name string) provider.Chunk {
	return provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: i, ID: id, Name: name}}
}
func args(i int, frag string) provider.Chunk {
	return provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: i, ArgsFragment: frag}}
}
func use(in, out, cached int64) provider.Chunk {
	return provider.Chunk{Kind: provider.ChunkUsage, Usage: provider.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached}}
}
func done(stop string) provider.Chunk {
	return provider.Chunk{Kind: provider.ChunkDone, StopReason: stop}
}

// decodeAll runs the stream decoder over a raw body, as Stream does after
// the response began.
func decodeAll(t *testing.T, body []byte) ([]provider.Chunk, error) {
	t.Helper()
	p, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []provider.Chunk
	var streamErr error
	p.decode(context.Background(), bytes.NewReader(body), func(c provider.Chunk, err error) bool {
		if streamErr != nil {
			t.Fatalf("item after the error %v: %+v, %v", streamErr, c, err)
		}
		if err != nil {
			streamErr = err
			return true
		}
		chunks = append(chunks, c)
		return true
	})
	return chunks, streamErr
}

func TestDecodeFixtures(t *testing.T) {
	const (
		thinkSig = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds3kbvFW1cK5UaNmv4wJz7KvbFbBt6mZBxmNsAuNRVfkZiQBVCoSnORR7oVBDb9YaIjgD9jyGR6d7KE5sh1zsaEg2bs+WqdRSq8mdnUG0Ya0="
		toolSig  = "ErUBCkYIBRgCIkB7oVlUjdHbmc3CqHb6dL0zpE9sLr2m4Xf1WnY8JgQa5KpTcR7vU6iZ0eD3yBxN9hM2oS4wF1jA8lG5tP7qEhIMmZ8nQ2vR5xL1yT4kGgx3pW9dF6aH0sJ2cV8u"
	)
	tests := []struct {
		fixture  string
		want     []provider.Chunk
		wantCode string
	}{
		{"text", []provider.Chunk{
			text("Hello"), text("! How can I help"), text(" you today?"),
			use(25, 12, 0), done(provider.StopEnd),
		}, ""},
		{"thinking", []provider.Chunk{
			think("The user asks for 27 * 453. "), think("27 * 453 = 12231."), sig(thinkSig),
			text("27 * 453 = **12,231**."),
			use(41, 87, 0), done(provider.StopEnd),
		}, ""},
		{"redacted_thinking", []provider.Chunk{
			{Kind: provider.ChunkReasoning, Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj2pLmN3kJ4lSyZ"},
			text("Done."),
			use(33, 40, 0), done(provider.StopEnd),
		}, ""},
		{"tool_use", []provider.Chunk{
			text("Okay, let's check"), text(" the weather for San Francisco:"),
			call(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
			args(0, `{"location":`), args(0, ` "San Fra`), args(0, `ncisco, CA"`), args(0, `, "unit": "celsius"}`),
			use(472, 89, 0), done(provider.StopToolUse),
		}, ""},
		{"parallel_tools", []provider.Chunk{
			text("I'll read both files."),
			call(0, "toolu_01A09q90qw90lq917835lq9", "read_file"), args(0, `{"path": "go`), args(0, `.mod"}`),
			call(1, "toolu_01B8Nfe7jXq2Gc5QLhP3kv1R", "read_file"), args(1, `{"path": "READ`), args(1, `ME.md"}`),
			use(1204, 112, 0), done(provider.StopToolUse),
		}, ""},
		{"thinking_tool_use", []provider.Chunk{
			think("I need the contents of go.mod "), think("to answer; read it first."), sig(toolSig),
			call(0, "toolu_01QYkR6rV9cDh3Lm8NpTa2Xw", "read_file"), args(0, `{"path": `), args(0, `"go.mod"}`),
			use(618, 71, 0), done(provider.StopToolUse),
		}, ""},
		{"cache_usage", []provider.Chunk{
			text("Cached context read."),
			use(12+310+2048, 7, 2048), done(provider.StopEnd),
		}, ""},
		{"error_event", []provider.Chunk{text("Let me think about"), use(25, 1, 0)}, "overloaded"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.fixture] = true
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := decodeAll(t, anthropictest.Fixture(tt.fixture))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chunks:\n got %+v\nwant %+v", got, tt.want)
			}
			checkCode(t, err, tt.wantCode)
		})
	}
	for _, name := range anthropictest.Fixtures() {
		if !covered[name] {
			t.Errorf("fixture %s has no decoding test", name)
		}
	}
}

func TestDecodeErrorEvent(t *testing.T) {
	_, err := decodeAll(t, anthropictest.Fixture("error_event"))
	pe, ok := provider.AsError(err)
	if !ok {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	// The fixture streams text before the error: a retry would repeat what
	// the caller already has, so it is not retryable at this level.
	want := &provider.Error{Provider: "anthropic", Code: "overloaded", Message: "Overloaded", Retryable: false}
	if !reflect.DeepEqual(pe, want) {
		t.Errorf("err = %+v, want %+v", pe, want)
	}
}

// sse builds a stream from event name / data pairs.
func sse(pairs ...string) []byte {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			b.WriteString("event: " + pairs[i] + "\n")
		}
		b.WriteString("data: " + pairs[i+1] + "\n\n")
	}
	return []byte(b.String())
}

const (
	evStart = `{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}`
	evStop  = `{"type":"message_stop"}`
)

func TestDecodeEdges(t *testing.T) {
	tests := []struct {
		name     string
		body     []byte
		want     []provider.Chunk
		wantCode string
		wantMsg  string
	}{
		{
			name: "stop_sequence is an end",
			body: sse("message_start", evStart,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"stop_sequence"},"usage":{"output_tokens":3}}`,
				"message_stop", evStop),
			want: []provider.Chunk{use(10, 3, 0), done(provider.StopEnd)},
		},
		{
			name: "max_tokens",
			body: sse("message_start", evStart,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":8192}}`,
				"message_stop", evStop),
			want: []provider.Chunk{use(10, 8192, 0), done(provider.StopMaxTokens)},
		},
		{
			name: "unknown stop reason passes through",
			body: sse("message_start", evStart,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":5}}`,
				"message_stop", evStop),
			want: []provider.Chunk{use(10, 5, 0), done("pause_turn")},
		},
		{
			name: "message_delta usage updates input counts",
			body: sse("message_start", evStart,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"cache_read_input_tokens":100,"output_tokens":4}}`,
				"message_stop", evStop),
			want: []provider.Chunk{use(112, 4, 100), done(provider.StopEnd)},
		},
		{
			name: "events without names use the data type",
			body: sse("", evStart,
				"", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
				"", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
				"", evStop),
			want: []provider.Chunk{text("hi"), use(10, 1, 0), done(provider.StopEnd)},
		},
		{
			name: "server tool input and unknown events are not tool calls",
			body: sse("message_start", evStart,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":0}`,
				"some_future_event", `{"type":"some_future_event"}`,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_02","name":"read_file","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
				"message_stop", evStop),
			want: []provider.Chunk{call(0, "toolu_02", "read_file"), args(0, "{}"), use(10, 9, 0), done(provider.StopToolUse)},
		},
		{
			name: "missing stop reason after a tool call",
			body: sse("message_start", evStart,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_03","name":"ls","input":{}}}`,
				"message_stop", evStop),
			want: []provider.Chunk{call(0, "toolu_03", "ls"), use(10, 1, 0), done(provider.StopToolUse)},
		},
		{
			name: "missing stop reason",
			body: sse("message_start", evStart, "message_stop", evStop),
			want: []provider.Chunk{use(10, 1, 0), done(provider.StopEnd)},
		},
		{
			name: "text and thinking carried in block starts",
			body: sse("message_start", evStart,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"hmm","signature":"sg"}}`,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Hi"}}`,
				"message_stop", evStop),
			want: []provider.Chunk{{Kind: provider.ChunkReasoning, Text: "hmm", Signature: "sg"}, text("Hi"), use(10, 1, 0), done(provider.StopEnd)},
		},
		{
			name:     "clean end without message_stop is a cut",
			body:     sse("message_start", evStart, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}`),
			want:     []provider.Chunk{text("par"), use(10, 1, 0)}, // the input was paid for
			wantCode: "stream_cut",
		},
		{
			name:     "end inside an event is a cut",
			body:     append(sse("message_start", evStart), "event: content_block_delta\ndata: {\"type\":\"conte"...),
			want:     []provider.Chunk{use(10, 1, 0)},
			wantCode: "stream_cut",
		},
		{
			name:     "empty body is a cut",
			body:     nil,
			wantCode: "stream_cut",
		},
		{
			name:     "malformed event",
			body:     sse("message_start", `{"type":"message_start",`),
			wantCode: "bad_response",
		},
		{
			name:     "error event maps its type",
			body:     sse("message_start", evStart, "error", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down, key sk-ant-api03-abcdefghijklmnop"}}`),
			want:     []provider.Chunk{use(10, 1, 0)},
			wantCode: "rate_limited",
			wantMsg:  "slow down, key [redacted]",
		},
		{
			name:     "error event of an unknown type",
			body:     sse("error", `{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}`),
			wantCode: "billing",
			wantMsg:  "credit balance too low",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAll(t, tt.body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chunks:\n got %+v\nwant %+v", got, tt.want)
			}
			checkCode(t, err, tt.wantCode)
			if tt.wantMsg != "" {
				if pe, _ := provider.AsError(err); pe == nil || pe.Message != tt.wantMsg {
					t.Errorf("err = %v, want message %q", err, tt.wantMsg)
				}
			}
		})
	}
}

func TestDecodeConsumerStops(t *testing.T) {
	p, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	p.decode(context.Background(), bytes.NewReader(anthropictest.Fixture("parallel_tools")), func(provider.Chunk, error) bool {
		n++
		return n < 3
	})
	if n != 3 {
		t.Errorf("yield called %d times after returning false at 3", n)
	}
}

// checkCode fails unless err is a provider error with code want, or nil
// when want is empty.
func checkCode(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("unexpected error %v", err)
		}
		return
	}
	pe, ok := provider.AsError(err)
	if !ok {
		t.Errorf("err = %v, want provider error with code %q", err, want)
		return
	}
	if pe.Code != want {
		t.Errorf("code = %q (%v), want %q", pe.Code, pe, want)
	}
}

package openai

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// Chunk builders for expected sequences.

func text(ss ...string) []provider.Chunk {
	var out []provider.Chunk
	for _, s := range ss {
		out = append(out, provider.Chunk{Kind: provider.ChunkText, Text: s})
	}
	return out
}

func reasoning(ss ...string) []provider.Chunk {
	var out []provider.Chunk
	for _, s := range ss {
		out = append(out, provider.Chunk{Kind: provider.ChunkReasoning, Text: s})
	}
	return out
}

func call(i int, id, name, args string) []provider.Chunk {
	return []provider.Chunk{{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: i, ID: id, Name: name, ArgsFragment: args}}}
}

func frags(i int, args ...string) []provider.Chunk {
	var out []provider.Chunk
	for _, a := range args {
		out = append(out, provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: i, ArgsFragment: a}})
	}
	return out
}

func usage(in, out, cached, reasoning int64) []provider.Chunk {
	return []provider.Chunk{{Kind: provider.ChunkUsage, Usage: provider.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached, ReasoningTokens: reasoning}}}
}

func done(stop string) []provider.Chunk {
	return []provider.Chunk{{Kind: provider.ChunkDone, StopReason: stop}}
}

func seq(parts ...[]provider.Chunk) []provider.Chunk { return slices.Concat(parts...) }

// result is a whole stream: its chunks and the error that ended it.
type result struct {
	Chunks []provider.Chunk
	Err    error
}

// drain consumes a stream, checking the contract every consumer relies
// on: nothing after ChunkDone or an error, one ChunkDone, usage before it,
// and the first fragment of each tool call carrying its id and name.
func drain(t *testing.T, s iter.Seq2[provider.Chunk, error]) result {
	t.Helper()
	var r result
	ended := false
	seen := map[int]bool{}
	for c, err := range s {
		if ended {
			t.Fatalf("item (%+v, %v) after the stream ended", c, err)
		}
		if err != nil {
			r.Err, ended = err, true
			continue
		}
		r.Chunks = append(r.Chunks, c)
		switch c.Kind {
		case provider.ChunkDone:
			ended = true
		case provider.ChunkToolCall:
			// The id may be missing (a few servers send none; the agent
			// makes one up), the name may not.
			if !seen[c.ToolCall.Index] && c.ToolCall.Name == "" {
				t.Errorf("first fragment of call %d lacks the name: %+v", c.ToolCall.Index, c.ToolCall)
			}
			seen[c.ToolCall.Index] = true
		case provider.ChunkText, provider.ChunkReasoning:
			if c.Text == "" {
				t.Errorf("empty %v chunk", c.Kind)
			}
		}
	}
	if !ended {
		t.Fatal("stream ended without ChunkDone or error")
	}
	return r
}

// decode runs the decoder over raw SSE, without HTTP.
func decode(t *testing.T, sse []byte) result {
	t.Helper()
	return drain(t, func(yield func(provider.Chunk, error) bool) {
		d := newDecoder("test", []string{"sk-secret-test-key"})
		d.stream(context.Background(), wire.NewSSEReader(iotest.OneByteReader(bytes.NewReader(sse))), yield)
	})
}

func describe(cs []provider.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Kind {
		case provider.ChunkText:
			fmt.Fprintf(&b, "text %q\n", c.Text)
		case provider.ChunkReasoning:
			fmt.Fprintf(&b, "reasoning %q\n", c.Text)
		case provider.ChunkToolCall:
			fmt.Fprintf(&b, "call %d id=%q name=%q args=%q\n", c.ToolCall.Index, c.ToolCall.ID, c.ToolCall.Name, c.ToolCall.ArgsFragment)
		case provider.ChunkUsage:
			fmt.Fprintf(&b, "usage %+v\n", c.Usage)
		case provider.ChunkDone:
			fmt.Fprintf(&b, "done %q\n", c.StopReason)
		default:
			fmt.Fprintf(&b, "%+v\n", c)
		}
	}
	return b.String()
}

func checkResult(t *testing.T, got result, want []provider.Chunk, wantCode string) {
	t.Helper()
	if !slices.Equal(got.Chunks, want) {
		t.Errorf("chunks:\n%s\nwant:\n%s", describe(got.Chunks), describe(want))
	}
	switch pe, ok := provider.AsError(got.Err); {
	case wantCode == "" && got.Err != nil:
		t.Errorf("unexpected error %v", got.Err)
	case wantCode != "" && (!ok || pe.Code != wantCode):
		t.Errorf("error %v, want code %s", got.Err, wantCode)
	}
}

// fixtureTests is what every embedded recording must decode to.
var fixtureTests = []struct {
	fixture string
	want    []provider.Chunk
	errCode string
}{
	{"text", seq(
		text("Hello", "!", " 👋", " How", " can", " I", " help", " you", " today", "?"),
		usage(19, 10, 0, 0), done(provider.StopEnd)), ""},
	{"tool_call", seq(
		call(0, "call_Q3mPz8vW1bT6yK2nR5sLd0aE", "read_file", ""),
		frags(0, `{"`, `path`, `":"`, `docs`, `/RE`, `AD`, `ME`, `.md`, `","`, `limit`, `":`, `200`, `}`),
		usage(1536, 24, 1280, 0), done(provider.StopToolUse)), ""},
	{"parallel_tool_calls", seq(
		call(0, "call_7hJk2LmN9pQrS4tUvWxY1zAb", "get_weather", ""),
		frags(0, `{"ci`, `ty": `, `"Par`, `is"}`),
		call(1, "call_3cDe5FgH8iJkL0mNoPqR2sTu", "get_weather", ""),
		frags(1, `{"ci`, `ty": `, `"Tok`, `yo"}`),
		usage(88, 46, 0, 0), done(provider.StopToolUse)), ""},
	{"reasoning_content", seq(
		reasoning("Okay", ",", " the", " user", " asks", " for", " 17", " ×", " 23", ".", " 17", " ×", " 20", " =", " 340", ",", " 17", " ×", " 3", " =", " 51", ";", " sum", " 391", "."),
		text("17", " ×", " 23", " =", " **", "391", "**", "."),
		usage(21, 142, 0, 118), done(provider.StopEnd)), ""},
	{"reasoning_openrouter", seq(
		reasoning("The user", " wants a", " haiku about", " autumn.", " Five, seven,", " five syllables."),
		text("Crimson leaves descend", "\nwhispering to the cold earth", "\nsummer's last goodbye"),
		usage(14, 61, 0, 44), done(provider.StopEnd)), ""},
	{"ollama_tool_calls", seq(
		call(0, "call_wteop8bt", "run_command", `{"command":"ls"}`),
		call(1, "call_rk2xye1l", "read_file", `{"path":"go.mod"}`),
		usage(312, 41, 0, 0), done(provider.StopToolUse)), ""},
	{"llamacpp_usage", seq(
		text("The", " answer", " is", " 42", "."),
		usage(27, 6, 0, 0), done(provider.StopEnd)), ""},
	{"no_done", seq(text("Sure", ", done."), done(provider.StopEnd)), ""},
	{"error_midstream", text("Here", " is", " the", " first", " part"), "server_error"},
	{"truncated", text("The", " migration", " has", " three", " steps", ":"), "stream_cut"},
}

func TestFixturesDecode(t *testing.T) {
	covered := map[string]bool{}
	for _, tt := range fixtureTests {
		covered[tt.fixture] = true
		t.Run(tt.fixture, func(t *testing.T) {
			checkResult(t, decode(t, openaitest.Fixture(tt.fixture)), tt.want, tt.errCode)
		})
	}
	for _, name := range openaitest.FixtureNames() {
		if !covered[name] {
			t.Errorf("fixture %s has no expected decoding", name)
		}
	}
}

func TestFixturesOverHTTP(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	p := newTestProvider(t, srv, nil)
	for _, tt := range fixtureTests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv.Enqueue(openaitest.Stream(openaitest.Fixture(tt.fixture)))
			checkResult(t, drain(t, p.Stream(context.Background(), simpleRequest())), tt.want, tt.errCode)
		})
	}
}

// sse builds a stream from JSON chunks; "[DONE]" and raw lines such as
// "event: error" pass through.
func sse(events ...string) []byte {
	var b bytes.Buffer
	for _, e := range events {
		if strings.HasPrefix(e, "event:") || strings.HasPrefix(e, ":") {
			b.WriteString(e + "\n")
			continue
		}
		b.WriteString("data: " + e + "\n\n")
	}
	return b.Bytes()
}

// delta wraps a delta object (JSON) and a finish reason in a chunk.
func delta(d, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}`
}

func TestDecoderQuirks(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    []provider.Chunk
		errCode string
	}{
		{"fragments without index use their position",
			sse(delta(`{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":""}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]}`, ""),
				delta(`{"tool_calls":[{"function":{"arguments":"{\"x\":"}},{"function":{"arguments":"{\"y\":"}}]}`, ""),
				delta(`{"tool_calls":[{"function":{"arguments":"1}"}},{"function":{"arguments":"2}"}}]}`, "tool_calls"), "[DONE]"),
			seq(call(0, "a", "f", ""), call(1, "b", "g", ""), frags(0, `{"x":`), frags(1, `{"y":`), frags(0, "1}"), frags(1, "2}"), done(provider.StopToolUse)), ""},
		{"a new id at a reused index is a new call",
			sse(delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"f","arguments":"{\"n\":2}"}}]}`, ""),
				delta(`{}`, "tool_calls"), "[DONE]"),
			seq(call(0, "a", "f", "{}"), call(1, "b", "f", `{"n":2}`), done(provider.StopToolUse)), ""},
		{"a different name without ids is a new call",
			sse(delta(`{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}`, ""),
				delta(`{"tool_calls":[{"function":{"name":"g","arguments":"{}"}}]}`, "tool_calls"), "[DONE]"),
			seq(call(0, "", "f", "{}"), call(1, "", "g", "{}"), done(provider.StopToolUse)), ""},
		{"id and name repeated on every fragment are sent once",
			sse(delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"q\""}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":":1}"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f"}}]}`, "tool_calls"), "[DONE]"),
			seq(call(0, "a", "f", `{"q"`), frags(0, ":1}"), done(provider.StopToolUse)), ""},
		{"arguments sent as an object",
			sse(delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"path": "x"}}}]}`, "tool_calls"), "[DONE]"),
			seq(call(0, "a", "f", `{"path":"x"}`), done(provider.StopToolUse)), ""},
		{"stop after tool calls means tool use",
			sse(delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`, "stop"), "[DONE]"),
			seq(call(0, "a", "f", "{}"), done(provider.StopToolUse)), ""},
		{"reasoning sent in both fields counts once",
			sse(delta(`{"reasoning_content":"think","reasoning":"think"}`, ""), delta(`{"content":"ok"}`, "stop"), "[DONE]"),
			seq(reasoning("think"), text("ok"), done(provider.StopEnd)), ""},
		{"reasoning, text and a call in one delta keep that order",
			sse(delta(`{"reasoning":"r","content":"t","tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`, "tool_calls"), "[DONE]"),
			seq(reasoning("r"), text("t"), call(0, "a", "f", "{}"), done(provider.StopToolUse)), ""},
		{"non-string reasoning is ignored",
			sse(delta(`{"reasoning":{"effort":"low"},"content":"a"}`, "stop"), "[DONE]"),
			seq(text("a"), done(provider.StopEnd)), ""},
		{"content as a list of parts",
			sse(delta(`{"content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]}`, "stop"), "[DONE]"),
			seq(text("ab"), done(provider.StopEnd)), ""},
		{"cumulative usage on every chunk is reported once, last value",
			sse(`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`,
				`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`, "[DONE]"),
			seq(text("a", "b"), usage(5, 2, 0, 0), done(provider.StopEnd)), ""},
		{"usage null is not usage",
			sse(`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}],"usage":null}`, "[DONE]"),
			seq(text("a"), done(provider.StopEnd)), ""},
		{"DeepSeek cache hits",
			sse(delta(`{"content":"a"}`, "stop"), `{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}`, "[DONE]"),
			seq(text("a"), usage(100, 3, 64, 0), done(provider.StopEnd)), ""},
		{"length", sse(delta(`{"content":"a"}`, "length"), "[DONE]"), seq(text("a"), done(provider.StopMaxTokens)), ""},
		{"function_call", sse(delta(`{}`, "function_call"), "[DONE]"), done(provider.StopToolUse), ""},
		{"other reasons pass through", sse(delta(`{"content":"a"}`, "content_filter"), "[DONE]"), seq(text("a"), done("content_filter")), ""},
		{"[DONE] without a finish reason", sse(delta(`{"content":"a"}`, ""), "[DONE]"), seq(text("a"), done(provider.StopEnd)), ""},
		{"a choice other than 0 is ignored",
			sse(`{"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"},"finish_reason":"stop"}]}`, "[DONE]"),
			seq(text("yes"), done(provider.StopEnd)), ""},
		{"keep-alive comments and empty data", append([]byte(": ping\n\ndata:\n\n"), sse(delta(`{"content":"a"}`, "stop"), "[DONE]")...),
			seq(text("a"), done(provider.StopEnd)), ""},
		{"error null is not an error", sse(`{"error":null,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`, "[DONE]"),
			seq(text("a"), done(provider.StopEnd)), ""},
		{"finish reason then a cut is complete",
			append(sse(delta(`{"content":"a"}`, "stop")), []byte(`data: {"choices":[],"usa`)...),
			seq(text("a"), done(provider.StopEnd)), ""},
		{"cut mid-line before the end", append(sse(delta(`{"content":"a"}`, "")), []byte(`data: {"choi`)...), text("a"), "stream_cut"},
		{"empty body", nil, nil, "stream_cut"},
		{"OpenRouter error with a numeric code and finish_reason error",
			sse(delta(`{"content":"a"}`, ""), `{"id":"gen-1","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`),
			text("a"), "server_error"},
		{"finish_reason error without an error object", sse(delta(`{"content":"a"}`, "error")), text("a"), "server_error"},
		{"rate limit error before any content", sse(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), nil, "rate_limited"},
		{"context length error", sse(`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), nil, "bad_request"},
		{"error as a bare string", sse(`{"error":"model crashed"}`), nil, "server_error"},
		{"named error event with text data", sse("event: error", "upstream timed out"), nil, "server_error"},
		{"named error event with JSON data", sse("event: error", `{"message":"overloaded","type":"overloaded_error"}`), nil, "overloaded"},
		{"data that is not JSON", sse(delta(`{"content":"a"}`, ""), "not json"), text("a"), "bad_response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkResult(t, decode(t, tt.in), tt.want, tt.errCode)
		})
	}
}

func TestStreamErrorDetails(t *testing.T) {
	tests := []struct {
		name      string
		in        []byte
		retryable bool
		message   string
	}{
		{"before content a transient error may be retried",
			sse(`{"error":{"message":"The server had an error","type":"server_error"}}`), true, "The server had an error"},
		{"after content it may not",
			openaitest.Fixture("error_midstream"), false, "The server had an error while processing your request. Sorry about that!"},
		{"a bad request is never retried", sse(`{"error":{"message":"bad","type":"invalid_request_error"}}`), false, "bad"},
		{"the key is redacted", sse(`{"error":{"message":"key sk-secret-test-key rejected"}}`), true, "key [redacted] rejected"},
		{"cut", openaitest.Fixture("truncated"), false, "the response stream ended before the model finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decode(t, tt.in)
			pe, ok := provider.AsError(r.Err)
			if !ok || pe.Provider != "test" || pe.Retryable != tt.retryable || pe.Message != tt.message {
				t.Fatalf("error %#v, want retryable %v message %q", r.Err, tt.retryable, tt.message)
			}
		})
	}
}

func TestDecodeNonStreamedAnswer(t *testing.T) {
	body := `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"hmm",` +
		`"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`
	r := drain(t, func(yield func(provider.Chunk, error) bool) {
		newDecoder("test", nil).whole(context.Background(), strings.NewReader(body), yield)
	})
	checkResult(t, r, seq(reasoning("hmm"), text("Hi"), call(0, "c1", "f", `{"a":1}`), usage(9, 4, 2, 1), done(provider.StopToolUse)), "")

	r = drain(t, func(yield func(provider.Chunk, error) bool) {
		newDecoder("test", nil).whole(context.Background(), strings.NewReader(`{"error":{"message":"nope","type":"invalid_request_error"}}`), yield)
	})
	checkResult(t, r, nil, "bad_request")
}

func TestConsumerMayStopEarly(t *testing.T) {
	// Breaking out of the loop must end the iterator without a panic
	// ("yield called after it returned false") at any point.
	fx := openaitest.Fixture("parallel_tool_calls")
	total := len(decode(t, fx).Chunks)
	for stop := 1; stop <= total; stop++ {
		n := 0
		d := newDecoder("test", nil)
		s := func(yield func(provider.Chunk, error) bool) {
			d.stream(context.Background(), wire.NewSSEReader(bytes.NewReader(fx)), yield)
		}
		for range s {
			n++
			if n == stop {
				break
			}
		}
		if n != stop {
			t.Fatalf("stopped at %d, want %d", n, stop)
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"}, // byte 3 is inside the second é
		{"👋👋", 5, "👋…"},
	}
	for _, tt := range tests {
		if got := clip(tt.in, tt.n); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestEmptyFragmentsAreDropped(t *testing.T) {
	in := sse(delta(`{"tool_calls":[{"index":0,"type":"function"}]}`, ""),
		delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}}]}`, ""),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":""}}]}`, ""),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`, "tool_calls"), "[DONE]")
	checkResult(t, decode(t, in), seq(call(0, "a", "f", ""), frags(0, "{}"), done(provider.StopToolUse)), "")
}

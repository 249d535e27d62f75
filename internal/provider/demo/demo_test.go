package demo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// call is a tool call reassembled from its fragments.
type call struct {
	ID, Name string
	Args     string
	Frags    []string
}

// result is a whole stream, reassembled the way the agent loop would.
type result struct {
	Chunks     []provider.Chunk
	Text       string
	TextFrags  []string
	Reasoning  string
	Signatures []string // signature of each reasoning chunk, "" when unset
	Calls      []call   // by Index
	Usages     []provider.Usage
	Stop       string
	Err        error
}

func collect(t *testing.T, ctx context.Context, p *Provider, req provider.Request) result {
	t.Helper()
	var r result
	for c, err := range p.Stream(ctx, req) {
		if r.Err != nil || r.Stop != "" {
			t.Fatalf("item (%+v, %v) after the stream ended (err %v, stop %q)", c, err, r.Err, r.Stop)
		}
		if err != nil {
			r.Err = err
			continue
		}
		r.Chunks = append(r.Chunks, c)
		switch c.Kind {
		case provider.ChunkText:
			r.Text += c.Text
			r.TextFrags = append(r.TextFrags, c.Text)
		case provider.ChunkReasoning:
			r.Reasoning += c.Text
			r.Signatures = append(r.Signatures, c.Signature)
		case provider.ChunkToolCall:
			d := c.ToolCall
			switch {
			case d.Index == len(r.Calls):
				if d.ID == "" || d.Name == "" || d.ArgsFragment != "" {
					t.Fatalf("first fragment of call %d = %+v, want ID and Name only", d.Index, d)
				}
				r.Calls = append(r.Calls, call{ID: d.ID, Name: d.Name})
			case d.Index == len(r.Calls)-1:
				if d.ID != "" || d.Name != "" {
					t.Fatalf("later fragment of call %d repeats ID/Name: %+v", d.Index, d)
				}
				r.Calls[d.Index].Args += d.ArgsFragment
				r.Calls[d.Index].Frags = append(r.Calls[d.Index].Frags, d.ArgsFragment)
			default:
				t.Fatalf("tool call fragment with index %d after %d calls", d.Index, len(r.Calls))
			}
		case provider.ChunkUsage:
			r.Usages = append(r.Usages, c.Usage)
		case provider.ChunkDone:
			r.Stop = c.StopReason
		default:
			t.Fatalf("unexpected chunk kind %d", c.Kind)
		}
	}
	if r.Err == nil && r.Stop == "" {
		t.Fatalf("stream ended without ChunkDone or error")
	}
	return r
}

func user(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Text: s} }
func assistant(s string) provider.Message {
	return provider.Message{Role: provider.RoleAssistant, Text: s}
}
func toolMsg(s string) provider.Message {
	return provider.Message{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{ToolCallID: "x", Content: s}}}
}

func req(msgs ...provider.Message) provider.Request { return provider.Request{Messages: msgs} }

func say(s string) Step { return Step{Kind: KindText, Text: s} }

func turns(texts ...string) []Turn {
	var out []Turn
	for _, s := range texts {
		out = append(out, Turn{Steps: []Step{say(s)}})
	}
	return out
}

func TestNameAndDemo(t *testing.T) {
	p := New(Script{})
	if p.Name() != "demo" || !p.Demo() {
		t.Fatalf("Name %q Demo %v, want demo true", p.Name(), p.Demo())
	}
}

func TestScenarioAndTurnSelection(t *testing.T) {
	script := Script{Scenarios: []Scenario{
		{Match: "alpha", Turns: turns("alpha-0", "alpha-1")},
		{Match: "", Turns: turns("default-0")},
		{Match: "BETA", Turns: turns("beta-0")},
		{Match: "", Turns: turns("second default")},
		{Match: "alp", Turns: turns("shadowed by alpha")},
	}}
	tests := []struct {
		name string
		req  provider.Request
		want string
	}{
		{"match", req(user("say alpha")), "alpha-0"},
		{"case-insensitive both ways", req(user("Beta please")), "beta-0"},
		{"default placed before a match does not shadow it", req(user("beta")), "beta-0"},
		{"first matching scenario wins", req(user("ALPHA and beta")), "alpha-0"},
		{"first default when nothing matches", req(user("hello")), "default-0"},
		{"no user message uses default", req(), "default-0"},
		{"only the last user message counts", req(user("alpha"), assistant("a"), user("beta")), "beta-0"},
		{"turn counts assistant messages after last user", req(user("alpha"), assistant("a"), toolMsg("r")), "alpha-1"},
		{"assistants before last user do not count", req(user("x"), assistant("a"), assistant("b"), user("alpha")), "alpha-0"},
		{"past the last turn", req(user("alpha"), assistant("a"), toolMsg("r"), assistant("b")), EndOfScript},
		{"past a one-turn default", req(user("hi"), assistant("a")), EndOfScript},
	}
	p := New(script)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := collect(t, context.Background(), p, tt.req)
			if r.Err != nil || r.Text != tt.want || r.Stop != provider.StopEnd {
				t.Fatalf("got text %q stop %q err %v, want %q end_turn", r.Text, r.Stop, r.Err, tt.want)
			}
		})
	}

	t.Run("no scenario at all", func(t *testing.T) {
		r := collect(t, context.Background(), New(Script{Scenarios: []Scenario{{Match: "x", Turns: turns("x")}}}), req(user("y")))
		if r.Text != EndOfScript || r.Stop != provider.StopEnd {
			t.Fatalf("got %q %q", r.Text, r.Stop)
		}
	})
}

func TestTextFragmentsReassemble(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		chunkSize int
		wantSize  int
	}{
		{"default size", "Hello, streaming world!", 0, 4},
		{"size 1", "abc", 1, 1},
		{"multi-byte runes are never split", "héllo wörld — ünïcode 😀👍🏽 日本語", 3, 3},
		{"larger than text", "short", 100, 100},
		{"markdown with newlines", "# Title\n\n- a\n- b\n", 5, 5},
		{"empty", "", 4, 4},
	}
	for _, tt := range tests {
		for _, kind := range []string{KindText, KindReasoning} {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{{Kind: kind, Text: tt.text, ChunkSize: tt.chunkSize}}}}}}})
				r := collect(t, context.Background(), p, req(user("x")))
				var frags []string
				got := r.Text
				for _, c := range r.Chunks {
					if c.Kind == provider.ChunkText || c.Kind == provider.ChunkReasoning {
						frags = append(frags, c.Text)
					}
				}
				if kind == KindReasoning {
					got = r.Reasoning
					if r.Text != "" {
						t.Fatalf("reasoning leaked into text: %q", r.Text)
					}
				}
				if got != tt.text {
					t.Fatalf("reassembled %q, want %q", got, tt.text)
				}
				for i, f := range frags {
					n := utf8.RuneCountInString(f)
					if !utf8.ValidString(f) || n == 0 || n > tt.wantSize || (i < len(frags)-1 && n != tt.wantSize) {
						t.Fatalf("fragment %d %q has %d runes, want %d (last may be shorter)", i, f, n, tt.wantSize)
					}
				}
			})
		}
	}
}

func TestToolCallArgsReassemble(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		chunkSize int
		want      string
		wantSize  int
	}{
		{"compacted", "{\n  \"path\": \".\",\n  \"depth\": 2\n}", 0, `{"path":".","depth":2}`, 8},
		{"key order kept", `{"z":1,"a":[1, 2,3],"m":{"k":"v"}}`, 5, `{"z":1,"a":[1,2,3],"m":{"k":"v"}}`, 5},
		{"unicode and escapes", `{"q":"日本語 \"quoted\" 😀\n"}`, 3, `{"q":"日本語 \"quoted\" 😀\n"}`, 3},
		{"absent args are an empty object", "", 0, `{}`, 8},
		{"invalid args pass through for tests of bad models", `{"path":`, 2, `{"path":`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Step{Kind: KindToolCall, Name: "list_dir", Args: json.RawMessage(tt.args), ChunkSize: tt.chunkSize}
			p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{st}}}}}})
			r := collect(t, context.Background(), p, req(user("x")))
			if len(r.Calls) != 1 || r.Calls[0].Args != tt.want {
				t.Fatalf("calls %+v, want one with args %s", r.Calls, tt.want)
			}
			frags := r.Calls[0].Frags
			for i, f := range frags {
				n := utf8.RuneCountInString(f)
				if n == 0 || n > tt.wantSize || (i < len(frags)-1 && n != tt.wantSize) {
					t.Fatalf("fragment %d %q has %d runes, want %d", i, f, n, tt.wantSize)
				}
			}
		})
	}
}

func TestToolCalls(t *testing.T) {
	script := Script{Scenarios: []Scenario{{Turns: []Turn{
		{Steps: []Step{
			say("Two things:"),
			{Kind: KindToolCall, Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)},
			{Kind: KindToolCall, ID: "fixed-id", Name: "read_file", Args: json.RawMessage(`{"path":"b.go"}`)},
		}},
		{Steps: []Step{
			{Kind: KindToolCall, Name: "write_file", Args: json.RawMessage(`{"path":"c.go"}`)},
		}},
		{Steps: []Step{say("done")}},
	}}}}
	p := New(script)
	ctx := context.Background()

	r0 := collect(t, ctx, p, req(user("go")))
	if r0.Err != nil || r0.Stop != provider.StopToolUse || r0.Text != "Two things:" {
		t.Fatalf("turn 0: text %q stop %q err %v", r0.Text, r0.Stop, r0.Err)
	}
	if len(r0.Calls) != 2 {
		t.Fatalf("turn 0: %d calls, want 2", len(r0.Calls))
	}
	if c := r0.Calls[0]; c.Name != "read_file" || c.Args != `{"path":"a.go"}` || !strings.HasPrefix(c.ID, "call_") || !strings.HasSuffix(c.ID, "_0_0") {
		t.Fatalf("call 0 = %+v", c)
	}
	if c := r0.Calls[1]; c.ID != "fixed-id" || c.Args != `{"path":"b.go"}` {
		t.Fatalf("call 1 = %+v", c)
	}
	// Text precedes the calls, and fragments of one call are contiguous.
	if r0.Chunks[0].Kind != provider.ChunkText {
		t.Fatalf("first chunk %+v, want text", r0.Chunks[0])
	}

	again := collect(t, ctx, p, req(user("go")))
	if again.Calls[0].ID != r0.Calls[0].ID {
		t.Fatalf("ids not deterministic: %q vs %q", again.Calls[0].ID, r0.Calls[0].ID)
	}
	other := collect(t, ctx, p, req(user("go!")))
	if other.Calls[0].ID == r0.Calls[0].ID {
		t.Fatalf("different messages got the same id %q", other.Calls[0].ID)
	}
	repeated := collect(t, ctx, p, req(user("go"), assistant("ok"), user("go")))
	if repeated.Calls[0].ID == r0.Calls[0].ID {
		t.Fatalf("a repeated message later in the session reused id %q", r0.Calls[0].ID)
	}

	r1 := collect(t, ctx, p, req(user("go"), provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a"}}}, toolMsg("r")))
	if len(r1.Calls) != 1 || r1.Calls[0].Name != "write_file" || !strings.HasSuffix(r1.Calls[0].ID, "_1_0") || r1.Stop != provider.StopToolUse {
		t.Fatalf("turn 1: calls %+v stop %q", r1.Calls, r1.Stop)
	}
	if r1.Calls[0].ID == r0.Calls[0].ID {
		t.Fatalf("turn 1 reused turn 0's id")
	}

	r2 := collect(t, ctx, p, req(user("go"), assistant(""), toolMsg("r"), assistant(""), toolMsg("r")))
	if r2.Text != "done" || r2.Stop != provider.StopEnd || len(r2.Calls) != 0 {
		t.Fatalf("turn 2: %+v", r2)
	}
}

func TestReasoningSignature(t *testing.T) {
	p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
		{Kind: KindReasoning, Text: "thinking it over", Signature: "sig-1"},
		{Kind: KindReasoning, Signature: "sig-redacted"},
		{Kind: KindReasoning, Text: "unsigned"},
		say("answer"),
	}}}}}})
	r := collect(t, context.Background(), p, req(user("x")))
	// "thinking it over" is 4 fragments, then the text-less signed block,
	// then 2 unsigned fragments.
	want := []string{"", "", "", "sig-1", "sig-redacted", "", ""}
	if strings.Join(r.Signatures, ",") != strings.Join(want, ",") {
		t.Fatalf("signatures per reasoning chunk = %q, want %q", r.Signatures, want)
	}
	if r.Reasoning != "thinking it overunsigned" || r.Text != "answer" {
		t.Fatalf("reasoning %q text %q", r.Reasoning, r.Text)
	}
}

func TestErrorStep(t *testing.T) {
	tests := []struct {
		name string
		step Step
		want provider.Error
	}{
		{"default code", Step{Kind: KindError, Message: "boom"}, provider.Error{Provider: "demo", Code: "scripted", Message: "boom"}},
		{"custom retryable", Step{Kind: KindError, Code: "rate_limited", Message: "slow down", Retryable: true}, provider.Error{Provider: "demo", Code: "rate_limited", Message: "slow down", Retryable: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
				say("partial"), tt.step, say("never sent"),
			}}}}}})
			r := collect(t, context.Background(), p, req(user("x")))
			pe, ok := provider.AsError(r.Err)
			if !ok || *pe != tt.want {
				t.Fatalf("err = %#v, want %#v", r.Err, tt.want)
			}
			if r.Text != "partial" || r.Stop != "" || len(r.Usages) != 0 {
				t.Fatalf("text %q stop %q usages %v; want the partial text only", r.Text, r.Stop, r.Usages)
			}
		})
	}

	t.Run("unvalidated unknown kind fails rather than skipping", func(t *testing.T) {
		p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{{Kind: "txet", Text: "x"}}}}}}})
		r := collect(t, context.Background(), p, req(user("x")))
		if pe, ok := provider.AsError(r.Err); !ok || pe.Code != "bad_script" {
			t.Fatalf("err = %v", r.Err)
		}
	})
}

func TestUsage(t *testing.T) {
	history := req(
		provider.Message{Role: provider.RoleUser, Text: strings.Repeat("u", 40)},
		provider.Message{Role: provider.RoleAssistant, Text: "abcd", Reasoning: []provider.Reasoning{{Text: "rrrr"}},
			ToolCalls: []provider.ToolCall{{Name: "ab", Args: json.RawMessage(`{"a":1}`)}}}, // 2+7 runes
		provider.Message{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{Content: "0123456789"}}},
	)
	history.System = "sys!"
	// input: 4 system + 40 + 4 + 4 + 9 + 10 = 71 runes -> 17 tokens.
	tests := []struct {
		name  string
		steps []Step
		want  []provider.Usage
	}{
		{"estimated", []Step{say(strings.Repeat("x", 20)), {Kind: KindToolCall, Name: "t", Args: json.RawMessage(`{"k":"v"}`)}},
			// output: 20 text + 1 name + 9 args = 30 runes -> 7 tokens.
			[]provider.Usage{{InputTokens: 17, OutputTokens: 7}}},
		{"scripted usage replaces the estimate", []Step{say("hi"), {Kind: KindUsage, InputTokens: 1000, OutputTokens: 5}},
			[]provider.Usage{{InputTokens: 1000, OutputTokens: 5}, {InputTokens: 1000, OutputTokens: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{}, {Steps: tt.steps}}}}})
			r := collect(t, context.Background(), p, history)
			if len(r.Usages) != len(tt.want) {
				t.Fatalf("usages %+v, want %+v", r.Usages, tt.want)
			}
			for i := range tt.want {
				if r.Usages[i] != tt.want[i] {
					t.Fatalf("usages %+v, want %+v", r.Usages, tt.want)
				}
			}
			last := r.Chunks[len(r.Chunks)-2]
			if last.Kind != provider.ChunkUsage {
				t.Fatalf("chunk before Done is %+v, want usage", last)
			}
		})
	}
}

func TestDelay(t *testing.T) {
	p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
		{Kind: KindDelay, DelayMS: 30}, {Kind: KindText, Text: "abcdefgh", ChunkSize: 2, ChunkDelayMS: 10},
	}}}}}})
	start := time.Now()
	r := collect(t, context.Background(), p, req(user("x")))
	// 30 ms delay + 3 pauses between 4 fragments.
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Fatalf("stream took %v, want at least 60ms", d)
	}
	if r.Text != "abcdefgh" {
		t.Fatalf("text %q", r.Text)
	}
}

func TestCancellation(t *testing.T) {
	long := 10_000
	tests := []struct {
		name  string
		steps []Step
		want  string // text delivered before cancellation
	}{
		{"during delay", []Step{say("before"), {Kind: KindDelay, DelayMS: long}, say("after")}, "before"},
		{"between text fragments", []Step{{Kind: KindText, Text: "abcdefgh", ChunkDelayMS: long}}, "abcd"},
		{"between tool call fragments", []Step{{Kind: KindToolCall, Name: "t", ChunkDelayMS: long}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: tt.steps}}}}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled time.Time
			time.AfterFunc(20*time.Millisecond, func() { cancelled = time.Now(); cancel() })
			r := collect(t, ctx, p, req(user("x")))
			if took := time.Since(cancelled); took > 50*time.Millisecond {
				t.Fatalf("stream returned %v after cancel, want within 50ms", took)
			}
			if !errors.Is(r.Err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", r.Err)
			}
			if r.Text != tt.want {
				t.Fatalf("text %q, want %q", r.Text, tt.want)
			}
		})
	}

	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := collect(t, ctx, New(Script{Scenarios: []Scenario{{Turns: turns("hi")}}}), req(user("x")))
		if !errors.Is(r.Err, context.Canceled) || len(r.Chunks) != 0 {
			t.Fatalf("err %v chunks %d, want context.Canceled and nothing", r.Err, len(r.Chunks))
		}
	})
}

// TestEarlyBreak stops consuming after every possible chunk; a yield after
// the consumer broke off would make the range loop panic.
func TestEarlyBreak(t *testing.T) {
	p := New(Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
		{Kind: KindReasoning, Text: "hmm, let me see", Signature: "s", ChunkDelayMS: 1},
		{Kind: KindText, Text: "some text here", ChunkDelayMS: 1},
		{Kind: KindUsage, InputTokens: 1},
		{Kind: KindDelay, DelayMS: 1},
		{Kind: KindToolCall, Name: "a", Args: json.RawMessage(`{"path":"somewhere/long"}`), ChunkDelayMS: 1},
		{Kind: KindToolCall, Name: "b", Args: json.RawMessage(`{"x":1}`)},
	}}}}}})
	full := collect(t, context.Background(), p, req(user("x")))
	for n := 1; n <= len(full.Chunks); n++ {
		got := 0
		for c, err := range p.Stream(context.Background(), req(user("x"))) {
			if err != nil {
				t.Fatalf("break after %d: err %v", n, err)
			}
			if c != full.Chunks[got] {
				t.Fatalf("chunk %d = %+v, want %+v", got, c, full.Chunks[got])
			}
			got++
			if got == n {
				break
			}
		}
		if got != n {
			t.Fatalf("break after %d: got %d chunks", n, got)
		}
	}
}

func TestNewCopiesScript(t *testing.T) {
	s := Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
		say("original"), {Kind: KindToolCall, Name: "t", Args: json.RawMessage(`{"a":1}`)},
	}}}}}}
	p := New(s)
	s.Scenarios[0].Turns[0].Steps[0].Text = "changed"
	s.Scenarios[0].Turns[0].Steps[1].Args[5] = '2'
	r := collect(t, context.Background(), p, req(user("x")))
	if r.Text != "original" || r.Calls[0].Args != `{"a":1}` {
		t.Fatalf("script changed under the provider: %q %q", r.Text, r.Calls[0].Args)
	}
}

package anthropic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic/anthropictest"
)

func user(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Text: s} }
func assistant(s string) provider.Message {
	return provider.Message{Role: provider.RoleAssistant, Text: s}
}
func results(rs ...provider.ToolResult) provider.Message {
	return provider.Message{Role: provider.RoleTool, ToolResults: rs}
}
func toolCall(id, name, args string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// TestConvertMessages checks the conversation the API receives. Every
// result must also pass the fake server's validation, which mirrors the
// API's rules.
func TestConvertMessages(t *testing.T) {
	tests := []struct {
		name string
		in   []provider.Message
		want string // the messages array
	}{
		{
			name: "plain",
			in:   []provider.Message{user("hi")},
			want: `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`,
		},
		{
			name: "consecutive roles merge",
			in:   []provider.Message{user("a"), user("b"), assistant("x"), assistant("y"), user("c")},
			want: `[
				{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
				{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},
				{"role":"user","content":[{"type":"text","text":"c"}]}]`,
		},
		{
			name: "tool results come first in their user message",
			in: []provider.Message{
				user("read it"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{toolCall("toolu_1", "read_file", `{"path":"a"}`)}},
				user("and hurry"),
				results(provider.ToolResult{ToolCallID: "toolu_1", Content: "A"}),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"read it"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"},{"type":"text","text":"and hurry"}]}]`,
		},
		{
			name: "signed thinking kept first, unsigned dropped",
			in: []provider.Message{
				user("q"),
				{Role: provider.RoleAssistant, Text: "let me look", Reasoning: []provider.Reasoning{
					{Text: "plan", Signature: "sig1"},
					{Text: "from another provider"},
					{Redacted: "opaque=="},
				}, ToolCalls: []provider.ToolCall{toolCall("toolu_1", "ls", `{}`)}},
				results(provider.ToolResult{ToolCallID: "toolu_1", Content: "x", IsError: true}),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"plan","signature":"sig1"},
					{"type":"redacted_thinking","data":"opaque=="},
					{"type":"text","text":"let me look"},
					{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x","is_error":true}]}]`,
		},
		{
			name: "empty text omitted, empty messages skipped",
			in: []provider.Message{
				user("hi"),
				{Role: provider.RoleAssistant, Text: "", Reasoning: []provider.Reasoning{{Text: "unsigned"}},
					ToolCalls: []provider.ToolCall{toolCall("toolu_1", "ls", `{}`)}},
				results(provider.ToolResult{ToolCallID: "toolu_1", Content: ""}),
				assistant(" \n"),
				{Role: provider.RoleAssistant, Reasoning: []provider.Reasoning{{Text: "only thinking", Signature: "s"}}},
				user("next"),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"hi"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"},{"type":"text","text":"next"}]}]`,
		},
		{
			name: "ids sanitised consistently",
			in: []provider.Message{
				user("go"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
					toolCall("functions.read_file:0", "read_file", `{}`),
					toolCall("functions.read_file:1", "read_file", `{}`),
					toolCall("call_ok-1", "read_file", `{}`),
				}},
				results(
					provider.ToolResult{ToolCallID: "functions.read_file:0", Content: "a"},
					provider.ToolResult{ToolCallID: "functions.read_file:1", Content: "b"},
					provider.ToolResult{ToolCallID: "call_ok-1", Content: "c"},
				),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"go"}]},
				{"role":"assistant","content":[
					{"type":"tool_use","id":"toolu_functions_read_file_0_9f904f25","name":"read_file","input":{}},
					{"type":"tool_use","id":"toolu_functions_read_file_1_9e904d92","name":"read_file","input":{}},
					{"type":"tool_use","id":"call_ok-1","name":"read_file","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_functions_read_file_0_9f904f25","content":"a"},
					{"type":"tool_result","tool_use_id":"toolu_functions_read_file_1_9e904d92","content":"b"},
					{"type":"tool_result","tool_use_id":"call_ok-1","content":"c"}]}]`,
		},
		{
			name: "ids reused by another provider are made unique",
			in: []provider.Message{
				user("go"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{toolCall("call_0", "a", `{}`), toolCall("call_0", "b", `{}`)}},
				results(provider.ToolResult{ToolCallID: "call_0", Content: "A"}, provider.ToolResult{ToolCallID: "call_0", Content: "B"}),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{toolCall("call_0", "c", `{}`)}},
				results(provider.ToolResult{ToolCallID: "call_0", Content: "C"}),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"go"}]},
				{"role":"assistant","content":[
					{"type":"tool_use","id":"call_0","name":"a","input":{}},
					{"type":"tool_use","id":"call_0_2","name":"b","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"call_0","content":"A"},
					{"type":"tool_result","tool_use_id":"call_0_2","content":"B"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"call_0_3","name":"c","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_0_3","content":"C"}]}]`,
		},
		{
			name: "leading assistant gets a user message before it",
			in:   []provider.Message{assistant("earlier answer"), user("go on")},
			want: `[
				{"role":"user","content":[{"type":"text","text":"(continued)"}]},
				{"role":"assistant","content":[{"type":"text","text":"earlier answer"}]},
				{"role":"user","content":[{"type":"text","text":"go on"}]}]`,
		},
		{
			name: "empty history",
			in:   nil,
			want: `[{"role":"user","content":[{"type":"text","text":"(continued)"}]}]`,
		},
		{
			name: "trailing assistant kept, trailing whitespace trimmed",
			in:   []provider.Message{user("q"), assistant("The answer is \n")},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}]`,
		},
		{
			name: "unanswered calls get an error result",
			in: []provider.Message{
				user("q"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{toolCall("toolu_1", "a", `{}`), toolCall("toolu_2", "b", `{}`)}},
				results(provider.ToolResult{ToolCallID: "toolu_2", Content: "B"}),
				user("well?"),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"tool_use","id":"toolu_1","name":"a","input":{}},
					{"type":"tool_use","id":"toolu_2","name":"b","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_2","content":"B"},
					{"type":"tool_result","tool_use_id":"toolu_1","content":"no result was recorded for this tool call","is_error":true},
					{"type":"text","text":"well?"}]}]`,
		},
		{
			name: "trailing tool use is answered",
			in: []provider.Message{
				user("q"),
				{Role: provider.RoleAssistant, Text: "checking", ToolCalls: []provider.ToolCall{toolCall("toolu_1", "a", `{}`)}},
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[{"type":"text","text":"checking"},{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"no result was recorded for this tool call","is_error":true}]}]`,
		},
		{
			name: "results without their call become text",
			in: []provider.Message{
				user("q"),
				results(provider.ToolResult{ToolCallID: "toolu_9", Content: "stale"}),
				assistant("ok"),
				results(provider.ToolResult{ToolCallID: "toolu_8", Content: "", IsError: true}),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"},{"type":"text","text":"[result of an earlier tool call toolu_9]\nstale"}]},
				{"role":"assistant","content":[{"type":"text","text":"ok"}]},
				{"role":"user","content":[{"type":"text","text":"[error of an earlier tool call toolu_8]\n(the tool failed without output)"}]}]`,
		},
		{
			name: "assistant messages merge in API order",
			in: []provider.Message{
				user("q"),
				{Role: provider.RoleAssistant, Text: "part one", ToolCalls: []provider.ToolCall{toolCall("toolu_1", "a", `{}`)}},
				{Role: provider.RoleAssistant, Reasoning: []provider.Reasoning{{Text: "t", Signature: "s"}}, Text: "part two"},
				results(provider.ToolResult{ToolCallID: "toolu_1", Content: "A"}),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"t","signature":"s"},
					{"type":"text","text":"part one"},
					{"type":"text","text":"part two"},
					{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`,
		},
		{
			name: "tool inputs that are not objects become {}",
			in: []provider.Message{
				user("q"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
					toolCall("toolu_1", "a", ``), toolCall("toolu_2", "a", `{"broken`), toolCall("toolu_3", "a", `[1]`), toolCall("toolu_4", "a", ` {"ok":true} `),
				}},
				results(
					provider.ToolResult{ToolCallID: "toolu_1", Content: "1"}, provider.ToolResult{ToolCallID: "toolu_2", Content: "2"},
					provider.ToolResult{ToolCallID: "toolu_3", Content: "3"}, provider.ToolResult{ToolCallID: "toolu_4", Content: "4"},
				),
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"tool_use","id":"toolu_1","name":"a","input":{}},
					{"type":"tool_use","id":"toolu_2","name":"a","input":{}},
					{"type":"tool_use","id":"toolu_3","name":"a","input":{}},
					{"type":"tool_use","id":"toolu_4","name":"a","input":{"ok":true}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_1","content":"1"},
					{"type":"tool_result","tool_use_id":"toolu_2","content":"2"},
					{"type":"tool_result","tool_use_id":"toolu_3","content":"3"},
					{"type":"tool_result","tool_use_id":"toolu_4","content":"4"}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(convertMessages(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tt.want)
			body, _ := json.Marshal(buildRequest(provider.Request{Model: "m", Messages: tt.in}, DefaultMaxTokens))
			if err := anthropictest.Validate(body); err != nil {
				t.Errorf("the API would reject it: %v", err)
			}
		})
	}
}

func TestBuildRequest(t *testing.T) {
	signedToolTurn := []provider.Message{
		user("q"),
		{Role: provider.RoleAssistant, Reasoning: []provider.Reasoning{{Text: "t", Signature: "s"}},
			ToolCalls: []provider.ToolCall{toolCall("toolu_1", "a", `{}`)}},
		results(provider.ToolResult{ToolCallID: "toolu_1", Content: "A"}),
	}
	unsignedToolTurn := []provider.Message{
		user("q"),
		{Role: provider.RoleAssistant, Reasoning: []provider.Reasoning{{Text: "from elsewhere"}},
			ToolCalls: []provider.ToolCall{toolCall("call_1", "a", `{}`)}},
		results(provider.ToolResult{ToolCallID: "call_1", Content: "A"}),
	}
	msgsOf := func(in []provider.Message) json.RawMessage {
		b, _ := json.Marshal(convertMessages(in))
		return b
	}
	tests := []struct {
		name string
		req  provider.Request
		want string
	}{
		{
			name: "defaults, no system, no tools",
			req:  provider.Request{Model: "claude-x", Messages: []provider.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":8192,"messages":` + string(msgsOf([]provider.Message{user("hi")})) + `,"stream":true}`,
		},
		{
			name: "system, tools and max tokens",
			req: provider.Request{Model: "claude-x", System: "be brief", MaxTokens: 100, Messages: []provider.Message{user("hi")},
				Tools: []provider.ToolSpec{
					{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
					{Name: "now", Description: "The time."},
				}},
			want: `{"model":"claude-x","max_tokens":100,"system":"be brief","messages":` + string(msgsOf([]provider.Message{user("hi")})) + `,
				"tools":[
					{"name":"read_file","description":"Reads a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
					{"name":"now","description":"The time.","input_schema":{"type":"object","properties":{}}}],
				"stream":true}`,
		},
		{
			name: "thinking within max tokens",
			req:  provider.Request{Model: "claude-x", ThinkingBudget: 2048, Messages: []provider.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":8192,"messages":` + string(msgsOf([]provider.Message{user("hi")})) + `,"stream":true,
				"thinking":{"type":"enabled","budget_tokens":2048}}`,
		},
		{
			name: "thinking budget above max tokens raises them",
			req:  provider.Request{Model: "claude-x", ThinkingBudget: 10000, MaxTokens: 4096, Messages: []provider.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":18192,"messages":` + string(msgsOf([]provider.Message{user("hi")})) + `,"stream":true,
				"thinking":{"type":"enabled","budget_tokens":10000}}`,
		},
		{
			name: "thinking budget below the minimum is raised",
			req:  provider.Request{Model: "claude-x", ThinkingBudget: 100, Messages: []provider.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":8192,"messages":` + string(msgsOf([]provider.Message{user("hi")})) + `,"stream":true,
				"thinking":{"type":"enabled","budget_tokens":1024}}`,
		},
		{
			name: "thinking continues a signed tool turn",
			req:  provider.Request{Model: "claude-x", ThinkingBudget: 2048, Messages: signedToolTurn},
			want: `{"model":"claude-x","max_tokens":8192,"messages":` + string(msgsOf(signedToolTurn)) + `,"stream":true,
				"thinking":{"type":"enabled","budget_tokens":2048}}`,
		},
		{
			name: "thinking left off while an unsigned tool turn runs",
			req:  provider.Request{Model: "claude-x", ThinkingBudget: 2048, Messages: unsignedToolTurn},
			want: `{"model":"claude-x","max_tokens":8192,"messages":` + string(msgsOf(unsignedToolTurn)) + `,"stream":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(buildRequest(tt.req, DefaultMaxTokens))
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tt.want)
			if err := anthropictest.Validate(got); err != nil {
				t.Errorf("the API would reject it: %v", err)
			}
		})
	}
}

func TestSanitizeID(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"toolu_01A", "call-x_9", "functions.a:0", "functions.a_0", "functions_a:0", "", "ü", "a b"} {
		got := sanitizeID(id)
		if got != sanitizeID(id) {
			t.Errorf("sanitizeID(%q) is not stable", id)
		}
		for _, r := range got {
			if !idRune(r) {
				t.Errorf("sanitizeID(%q) = %q has %q", id, got, r)
			}
		}
		if got == "" {
			t.Errorf("sanitizeID(%q) is empty", id)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("sanitizeID(%q) = sanitizeID(%q) = %q", id, prev, got)
		}
		seen[got] = id
	}
	if got := sanitizeID("toolu_01A"); got != "toolu_01A" {
		t.Errorf("a valid id changed: %q", got)
	}
}

// assertJSON compares JSON documents by value.
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		var gi, wi bytes.Buffer
		_ = json.Indent(&gi, got, "", "  ")
		wc, _ := json.Marshal(w)
		_ = json.Indent(&wi, wc, "", "  ")
		t.Errorf("JSON mismatch\n got %s\nwant %s", gi.String(), wi.String())
	}
}

// TestConvertAnyHistory feeds random, often nonsensical histories through
// the conversion: whatever the stored conversation, the API (as the fake
// models it) must accept the request.
func TestConvertAnyHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(ss ...string) string { return ss[rng.IntN(len(ss))] }
	ids := []string{"toolu_1", "toolu_2", "call_0", "functions.read:0", "", "a b"}
	for n := range 1000 {
		var msgs []provider.Message
		var lastCalls []string
		for range rng.IntN(8) {
			var m provider.Message
			switch rng.IntN(3) {
			case 0:
				m = provider.Message{Role: provider.RoleUser, Text: pick("", " ", "hi", "x\n")}
			case 1:
				m = provider.Message{Role: provider.RoleAssistant, Text: pick("", "\t", "ok", "ends with space ")}
				for range rng.IntN(3) {
					m.Reasoning = append(m.Reasoning, provider.Reasoning{Text: pick("", "t"), Signature: pick("", "sig"), Redacted: pick("", "", "data")})
				}
				lastCalls = nil
				for range rng.IntN(3) {
					id := ids[rng.IntN(len(ids))]
					lastCalls = append(lastCalls, id)
					m.ToolCalls = append(m.ToolCalls, toolCall(id, "t", pick(`{}`, ``, `[`, `{"a":1}`)))
				}
			default:
				m = provider.Message{Role: provider.RoleTool}
				for range rng.IntN(3) {
					id := ids[rng.IntN(len(ids))]
					if len(lastCalls) > 0 && rng.IntN(4) > 0 {
						id = lastCalls[rng.IntN(len(lastCalls))]
					}
					m.ToolResults = append(m.ToolResults, provider.ToolResult{ToolCallID: id, Content: pick("", "out"), IsError: rng.IntN(2) == 0})
				}
				if rng.IntN(4) == 0 {
					m.Text = "note"
				}
			}
			msgs = append(msgs, m)
		}
		req := provider.Request{Model: "m", Messages: msgs, ThinkingBudget: []int{0, 500, 4000}[rng.IntN(3)], MaxTokens: rng.IntN(3) * 2000}
		body, err := json.Marshal(buildRequest(req, DefaultMaxTokens))
		if err != nil {
			t.Fatal(err)
		}
		if err := anthropictest.Validate(body); err != nil {
			in, _ := json.Marshal(msgs)
			t.Fatalf("history %d rejected: %v\nhistory: %s\nrequest: %s", n, err, in, body)
		}
	}
}

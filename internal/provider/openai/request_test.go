package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// canonical re-encodes JSON so goldens compare by meaning, not spacing.
func canonical(t *testing.T, s []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(s, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", s, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

const streamTail = `"stream":true,"stream_options":{"include_usage":true}`

func TestEncodeRequest(t *testing.T) {
	history := []provider.Message{
		{Role: provider.RoleUser, Text: "What is in docs/ and how warm is Paris?"},
		{Role: provider.RoleAssistant, Text: "Let me look.",
			Reasoning: []provider.Reasoning{{Text: "two independent lookups", Signature: "sig"}},
			ToolCalls: []provider.ToolCall{
				{ID: "call_1", Name: "list_dir", Args: json.RawMessage(`{ "path" : "docs" }`)},
				{ID: "call_2", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
			}},
		{Role: provider.RoleTool, ToolResults: []provider.ToolResult{
			{ToolCallID: "call_1", Content: "API.md\nEVENTS.md"},
			{ToolCallID: "call_2", Content: "timeout after 10s", IsError: true},
		}},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "get_weather", Args: nil}}},
		{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{ToolCallID: "call_3", Content: "error: still down", IsError: true}}},
		{Role: provider.RoleAssistant, Text: "docs/ has API.md and EVENTS.md; the weather service is down."},
		{Role: provider.RoleUser, Text: "Thanks <3 & bye"},
	}
	tests := []struct {
		name string
		req  provider.Request
		c    compat
		want string
	}{
		{"minimal",
			provider.Request{Model: "gpt-4o-mini", Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}},
			compat{},
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],` + streamTail + `}`},
		{"system, limits and effort",
			provider.Request{Model: "o4-mini", System: "You are terse.", MaxTokens: 512, ReasoningEffort: "high", ThinkingBudget: 9999,
				Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}},
			compat{},
			`{"model":"o4-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi"}],` +
				`"max_tokens":512,"reasoning_effort":"high",` + streamTail + `}`},
		{"history with tool calls and results",
			provider.Request{Model: "m", Messages: history},
			compat{},
			`{"model":"m","messages":[
				{"role":"user","content":"What is in docs/ and how warm is Paris?"},
				{"role":"assistant","content":"Let me look.","tool_calls":[
					{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\"docs\"}"}},
					{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"API.md\nEVENTS.md"},
				{"role":"tool","tool_call_id":"call_2","content":"Error: timeout after 10s"},
				{"role":"assistant","content":null,"tool_calls":[
					{"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"call_3","content":"error: still down"},
				{"role":"assistant","content":"docs/ has API.md and EVENTS.md; the weather service is down."},
				{"role":"user","content":"Thanks <3 & bye"}],` + streamTail + `}`},
		{"empty messages are skipped",
			provider.Request{Model: "m", System: "  \n", Messages: []provider.Message{
				{Role: provider.RoleUser, Text: "first"},
				{Role: provider.RoleAssistant, Reasoning: []provider.Reasoning{{Text: "thought only"}}},
				{Role: provider.RoleAssistant, Text: " \n"},
				{Role: provider.RoleUser, Text: ""},
				{Role: provider.RoleTool},
				{Role: provider.RoleUser, Text: "second"},
			}},
			compat{},
			`{"model":"m","messages":[{"role":"user","content":"first"},{"role":"user","content":"second"}],` + streamTail + `}`},
		{"tools",
			provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}, Tools: []provider.ToolSpec{
				{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
				{Name: "now"},
			}},
			compat{},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[
				{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
				{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}],` + streamTail + `}`},
		{"max_completion_tokens for servers that want it",
			provider.Request{Model: "o3", MaxTokens: 100, Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}},
			compat{maxCompletionTokens: true},
			`{"model":"o3","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":100,` + streamTail + `}`},
		{"without stream_options for servers that refuse it",
			provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}},
			compat{noStreamOptions: true},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeRequest(tt.req, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := canonical(t, got), canonical(t, []byte(tt.want)); g != w {
				t.Fatalf("request:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

func TestEncodeRequestKeepsTextReadable(t *testing.T) {
	got, err := encodeRequest(provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: "<b>&</b>"}}}, compat{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`"<b>&</b>"`)) || bytes.HasSuffix(got, []byte("\n")) {
		t.Fatalf("body %s", got)
	}
}

func TestEncodeRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  provider.Request
		want string
	}{
		{"unknown role", provider.Request{Messages: []provider.Message{{Role: "system", Text: "x"}}}, `unknown role "system"`},
		{"invalid schema", provider.Request{Tools: []provider.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}}, `tool "t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := encodeRequest(tt.req, compat{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCompatAdjust(t *testing.T) {
	withMax := provider.Request{MaxTokens: 10}
	tests := []struct {
		name string
		c    compat
		msg  string
		req  provider.Request
		want compat
		ok   bool
	}{
		{"max_tokens refused", compat{}, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", withMax, compat{maxCompletionTokens: true}, true},
		{"max_tokens refused but none sent", compat{}, "Use 'max_completion_tokens' instead.", provider.Request{}, compat{}, false},
		{"already switched", compat{maxCompletionTokens: true}, "Use 'max_completion_tokens' instead.", withMax, compat{maxCompletionTokens: true}, false},
		{"stream_options refused", compat{}, "Unrecognized request argument supplied: stream_options", provider.Request{}, compat{noStreamOptions: true}, true},
		{"stream_options already dropped", compat{noStreamOptions: true}, "stream_options", provider.Request{}, compat{noStreamOptions: true}, false},
		{"other errors", compat{}, "Invalid 'messages[1].content'", withMax, compat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.c.adjust(tt.msg, tt.req)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("adjust = %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

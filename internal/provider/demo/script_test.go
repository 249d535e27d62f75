package demo

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const validScript = `{
  "scenarios": [
    {"match": "files", "turns": [
      {"steps": [
        {"kind": "reasoning", "text": "look first", "signature": "sig"},
        {"kind": "text", "text": "Looking.", "chunk_size": 2, "chunk_delay_ms": 5},
        {"kind": "tool_call", "name": "list_dir", "args": {"path": "."}},
        {"kind": "tool_call", "id": "c2", "name": "read_file", "args": "{\"path\":\"a.go\"}", "chunk_size": 3}
      ]},
      {"steps": [
        {"kind": "delay", "delay_ms": 100},
        {"kind": "usage", "input_tokens": 10, "output_tokens": 2},
        {"kind": "error", "code": "rate_limited", "message": "slow down", "retryable": true}
      ]}
    ]},
    {"turns": [{"steps": [{"kind": "text", "text": "hi"}]}]}
  ]
}`

func TestParseScript(t *testing.T) {
	s, err := ParseScript([]byte(validScript))
	if err != nil {
		t.Fatal(err)
	}
	want := Script{Scenarios: []Scenario{
		{Match: "files", Turns: []Turn{
			{Steps: []Step{
				{Kind: KindReasoning, Text: "look first", Signature: "sig"},
				{Kind: KindText, Text: "Looking.", ChunkSize: 2, ChunkDelayMS: 5},
				{Kind: KindToolCall, Name: "list_dir", Args: json.RawMessage(`{"path": "."}`)},
				// Args given as a string holding JSON are unwrapped.
				{Kind: KindToolCall, ID: "c2", Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`), ChunkSize: 3},
			}},
			{Steps: []Step{
				{Kind: KindDelay, DelayMS: 100},
				{Kind: KindUsage, InputTokens: 10, OutputTokens: 2},
				{Kind: KindError, Code: "rate_limited", Message: "slow down", Retryable: true},
			}},
		}},
		{Turns: []Turn{{Steps: []Step{{Kind: KindText, Text: "hi"}}}}},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", s, want)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string // substrings of the error
	}{
		{"unknown kind",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"text"}]}]},{"match":"x","turns":[{"steps":[]},{"steps":[{"kind":"text"},{"kind":"txet"}]}]}]}`,
			[]string{`scenario 1 (match "x") turn 1 step 1`, `unknown kind "txet"`}},
		{"missing kind",
			`{"scenarios":[{"turns":[{"steps":[{"text":"hi"}]}]}]}`,
			[]string{"scenario 0", "turn 0 step 0", "no kind"}},
		{"tool_call without name",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"text"},{"kind":"text"},{"kind":"tool_call","args":{}}]}]}]}`,
			[]string{"scenario 0", "turn 0 step 2", "tool_call has no name"}},
		{"blank tool name",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"tool_call","name":"  "}]}]}]}`,
			[]string{"step 0", "no name"}},
		{"bad JSON args",
			`{"scenarios":[{"match":"m","turns":[{"steps":[{"kind":"tool_call","name":"list_dir","args":"{\"path\":"}]}]}]}`,
			[]string{`scenario 0 (match "m") turn 0 step 0`, `tool_call "list_dir" has invalid JSON args`}},
		{"error without message",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"error","code":"x"}]}]}]}`,
			[]string{"step 0", "no message"}},
		{"negative delay",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"delay","delay_ms":-1}]}]}]}`,
			[]string{"step 0", "delay_ms is negative"}},
		{"negative chunk size",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"text","chunk_size":-2}]}]}]}`,
			[]string{"chunk_size is negative"}},
		{"negative tokens",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"usage","input_tokens":-2}]}]}]}`,
			[]string{"token counts are negative"}},
		{"unknown field",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"delay","delayms":5}]}]}]}`,
			[]string{"scenario 0", "turn 0 step 0", `unknown field "delayms"`}},
		{"unknown scenario field",
			`{"scenarios":[{"mtach":"x"}]}`,
			[]string{`unknown field "mtach"`}},
		{"wrong step field type",
			`{"scenarios":[{"turns":[{"steps":[{"kind":"delay"},{"kind":"delay","delay_ms":"5"}]}]}]}`,
			[]string{"turn 0 step 1", "delay_ms"}},
		{"syntax error reports line and column",
			"{\"scenarios\": [\n  {\"turns\": [}\n]}",
			[]string{"line 2 column 14"}},
		{"wrong type",
			"{\"scenarios\": [\n {\"match\": 3}]}",
			[]string{"line 2", "match"}},
		{"trailing data",
			`{"scenarios":[]} {}`,
			[]string{"unexpected data after"}},
		{"empty input",
			``,
			[]string{"demo script"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.script))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestValidateGoScript(t *testing.T) {
	s := Script{Scenarios: []Scenario{{Turns: []Turn{{Steps: []Step{
		{Kind: KindToolCall, Name: "t", Args: json.RawMessage(`{"a":`)},
	}}}}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "invalid JSON args") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(validScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"scenarios":[{"turns":[{"steps":[{"kind":"nope"}]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err := LoadScript(good)
	if err != nil || len(s.Scenarios) != 2 {
		t.Fatalf("LoadScript(good) = %d scenarios, %v", len(s.Scenarios), err)
	}
	if _, err := LoadScript(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `unknown kind "nope"`) {
		t.Fatalf("LoadScript(bad) = %v, want path and cause", err)
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.json")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadScript(missing) = %v", err)
	}
}

// TestScriptJSONRoundTrip guards the snake_case tags: a script written out
// as JSON must load back unchanged, so the default can serve as a template.
func TestScriptJSONRoundTrip(t *testing.T) {
	data, err := json.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{`"chunk_delay_ms"`, `"scenarios"`, `"turns"`, `"steps"`, `"kind"`} {
		if !strings.Contains(string(data), tag) {
			t.Fatalf("marshalled script lacks %s", tag)
		}
	}
	s, err := ParseScript(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Default()) {
		t.Fatalf("round trip changed the script")
	}
}

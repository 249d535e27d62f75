package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/memory"
)

func TestMemoryTool(t *testing.T) {
	store := memory.New(t.TempDir())
	tl := NewMemory(store)
	steps := []struct {
		args    string
		status  string
		output  string   // substring
		entries []string // checked on success
	}{
		{`{"action": "list", "target": "notes"}`, event.ToolOK, "notes is empty (0 of 8000 characters used).", []string{}},
		{`{"action": "add", "target": "notes", "text": "CI needs\n make db"}`, event.ToolOK, "Saved to notes (1 entry, 19 of 8000 characters used).", []string{"CI needs make db"}},
		{`{"action": "add", "target": "notes", "text": "deploys via staging"}`, event.ToolOK, "Saved to notes (2 entries", []string{"CI needs make db", "deploys via staging"}},
		{`{"action": "add", "target": "user", "text": "prefers tabs"}`, event.ToolOK, "Saved to user (1 entry", []string{"prefers tabs"}},
		{`{"action": "list", "target": "notes"}`, event.ToolOK, "notes (2 entries, 41 of 8000 characters used):\n- CI needs make db\n- deploys via staging", nil},
		{`{"action": "replace", "target": "notes", "old": "make db", "text": "CI needs make db-up"}`, event.ToolOK, "Replaced the entry in notes", []string{"CI needs make db-up", "deploys via staging"}},
		{`{"action": "replace", "target": "notes", "old": "e", "text": "x"}`, event.ToolError, "replace not saved: several memory entries match \"e\" in notes: 2 entries contain it", nil},
		{`{"action": "remove", "target": "notes", "old": "lint"}`, event.ToolError, "remove not saved: no memory entry matches \"lint\" in notes (2 entries)", nil},
		{`{"action": "add", "target": "user", "text": "key sk-ant-api03-abcdefABCDEF0123456789"}`, event.ToolError, "looks like it contains a secret", nil},
		{`{"action": "add", "target": "user", "text": "` + strings.Repeat("x", memory.MaxEntryChars+1) + `"}`, event.ToolError, "too long", nil},
		{`{"action": "remove", "target": "notes", "old": "staging"}`, event.ToolOK, "Removed the entry from notes (1 entry", []string{"CI needs make db-up"}},
		{`{"action": "list", "target": "user"}`, event.ToolOK, "- prefers tabs", []string{"prefers tabs"}},
	}
	for _, s := range steps {
		res := call(t, tl, "", s.args)
		if res.Status != s.status || !strings.Contains(res.Output, s.output) {
			t.Fatalf("%s: %s %q, want %s containing %q", s.args, res.Status, res.Output, s.status, s.output)
		}
		if s.status != event.ToolOK {
			if res.Data != nil {
				t.Errorf("%s: error with data %+v", s.args, res.Data)
			}
			continue
		}
		d, ok := res.Data.(MemoryData)
		if !ok || !d.OK || d.Limit != memory.MaxFileChars || d.Chars != memory.Size(d.Entries) {
			t.Fatalf("%s: data %+v", s.args, res.Data)
		}
		if s.entries != nil && !slices.Equal(d.Entries, s.entries) {
			t.Errorf("%s: entries %q, want %q", s.args, d.Entries, s.entries)
		}
	}
	// Empty lists marshal as [], not null.
	store.Remove(context.Background(), memory.User, "tabs")
	b, _ := json.Marshal(call(t, tl, "", `{"action": "list", "target": "user"}`).Data)
	if want := `{"ok":true,"action":"list","target":"user","entries":[],"chars":0,"limit":8000}`; string(b) != want {
		t.Errorf("data JSON %s, want %s", b, want)
	}
}

func TestMemoryToolNearlyFull(t *testing.T) {
	store := memory.New(t.TempDir())
	tl := NewMemory(store)
	long := strings.Repeat("word ", 190)
	var res Result
	for i := range 8 {
		res = call(t, tl, "", `{"action": "add", "target": "notes", "text": "`+string(rune('a'+i))+long+`"}`)
		if res.Status != event.ToolOK {
			t.Fatalf("add %d: %s", i, res.Output)
		}
	}
	if !strings.Contains(res.Output, "nearly full") {
		t.Errorf("no warning: %s", res.Output)
	}
	res = call(t, tl, "", `{"action": "add", "target": "notes", "text": "z`+long+`"}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "consolidate") {
		t.Errorf("full: %s %s", res.Status, res.Output)
	}
}

func TestMemoryToolBadArguments(t *testing.T) {
	tl := NewMemory(memory.New(t.TempDir()))
	tests := []struct{ args, want string }{
		{`{}`, "target is required"},
		{`{"target": "notes"}`, "action is required"},
		{`{"action": "forget", "target": "notes"}`, `action must be list, add, replace or remove, got "forget"`},
		{`{"action": "list", "target": "profile"}`, `target must be "notes" or "user", got "profile"`},
		{`{"action": "list", "target": "notes", "text": "x"}`, "list takes no text or old"},
		{`{"action": "add", "target": "notes"}`, "add needs text"},
		{`{"action": "add", "target": "notes", "text": "  "}`, "add needs text"},
		{`{"action": "add", "target": "notes", "text": "a", "old": "b"}`, "old is only used by replace and remove"},
		{`{"action": "replace", "target": "notes", "text": "a"}`, "replace needs old"},
		{`{"action": "replace", "target": "notes", "old": "a"}`, "replace needs text"},
		{`{"action": "remove", "target": "notes"}`, "remove needs old"},
		{`{"action": "remove", "target": "notes", "old": "a", "text": "b"}`, "remove takes no text"},
		{`{"action": "list", "target": "notes", "extra": 1}`, `unknown field "extra"`},
		{`[1]`, "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		res := call(t, tl, "", tt.args)
		if res.Status != event.ToolError || !strings.HasPrefix(res.Output, "invalid arguments: ") || !strings.Contains(res.Output, tt.want) {
			t.Errorf("%s: %s %q, want %q", tt.args, res.Status, res.Output, tt.want)
		}
		if in := tl.Intent(json.RawMessage(tt.args)); !in.Invalid || in.Effect != EffectMemory {
			t.Errorf("%s: intent %+v", tt.args, in)
		}
		if l := tl.Label(json.RawMessage(tt.args)); l != "memory (invalid arguments)" {
			t.Errorf("%s: label %q", tt.args, l)
		}
	}
}

func TestMemoryToolNotConfigured(t *testing.T) {
	tl := NewMemory(nil)
	res := call(t, tl, "", `{"action": "list", "target": "notes"}`)
	if res.Status != event.ToolError || res.Output != "memory is not configured" {
		t.Errorf("nil store: %+v", res)
	}
	if tl.Spec().Name != NameMemory {
		t.Error("name")
	}
}

func TestMemoryToolIOFailure(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	must(t, os.WriteFile(blocker, []byte("not a directory"), 0o644))
	res := call(t, NewMemory(memory.New(filepath.Join(blocker, "memory"))), "", `{"action": "add", "target": "notes", "text": "x"}`)
	if res.Status != event.ToolError || !strings.HasPrefix(res.Output, "add failed, memory unchanged: ") || strings.Contains(res.Output, dir) {
		t.Errorf("I/O failure: %q", res.Output)
	}
}

func TestMemoryToolIntentAndLabel(t *testing.T) {
	tl := NewMemory(nil)
	tests := []struct {
		args   string
		effect Effect
		action string
	}{
		{`{"action": "list", "target": "notes"}`, EffectNone, "memory list (notes)"},
		{`{"action": "add", "target": "user", "text": "prefers\n tabs"}`, EffectMemory, `memory add (user): "prefers tabs"`},
		{`{"action": "replace", "target": "notes", "old": "Go 1.25", "text": "uses Go 1.26"}`, EffectMemory, `memory replace (notes): "Go 1.25" → "uses Go 1.26"`},
		{`{"action": "remove", "target": "notes", "old": "staging"}`, EffectMemory, `memory remove (notes): "staging"`},
	}
	for _, tt := range tests {
		in := tl.Intent(json.RawMessage(tt.args))
		if in.Effect != tt.effect || in.Action != tt.action || in.Invalid {
			t.Errorf("%s: intent %+v", tt.args, in)
		}
		if l := tl.Label(json.RawMessage(tt.args)); l != tt.action {
			t.Errorf("%s: label %q", tt.args, l)
		}
	}
	long := `{"action": "add", "target": "notes", "text": "` + strings.Repeat("ab ", 330) + `"}`
	if in := tl.Intent(json.RawMessage(long)); !strings.Contains(in.Action, strings.TrimSpace(strings.Repeat("ab ", 330))+`"`) {
		t.Errorf("intent must show the whole entry: %d chars", len(in.Action))
	}
	if l := tl.Label(json.RawMessage(long)); len([]rune(l)) != 120 {
		t.Errorf("label not truncated: %d", len([]rune(l)))
	}
}

func TestMemoryToolCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := callEnv(t, ctx, NewMemory(memory.New(t.TempDir())), Env{}, `{"action": "add", "target": "notes", "text": "x"}`)
	if res.Status != event.ToolCancelled {
		t.Errorf("cancelled: %+v", res)
	}
}

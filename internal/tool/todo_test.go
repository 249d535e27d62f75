package tool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestTodo(t *testing.T) {
	type emitted struct {
		typ     event.Type
		payload any
	}
	var got []emitted
	env := Env{Emit: func(typ event.Type, payload any) error {
		got = append(got, emitted{typ, payload})
		return nil
	}}
	args := `{"items": [
		{"content": "Read the code", "status": "done"},
		{"id": "1", "content": "  Write tests  ", "status": "in_progress"},
		{"content": "Document", "status": "pending"},
		{"id": "x", "content": "Rewrite in Rust", "status": "cancelled"}
	]}`
	res := callEnv(t, context.Background(), NewTodo(), env, args)
	if res.Status != event.ToolOK {
		t.Fatalf("status %s: %s", res.Status, res.Output)
	}
	// Given ids are kept; missing ones get the smallest unused numbers.
	want := []event.TodoItem{
		{ID: "2", Content: "Read the code", Status: "done"},
		{ID: "1", Content: "Write tests", Status: "in_progress"},
		{ID: "3", Content: "Document", Status: "pending"},
		{ID: "x", Content: "Rewrite in Rust", Status: "cancelled"},
	}
	if d := res.Data.(TodoData); !d.OK || !reflect.DeepEqual(d.Items, want) {
		t.Errorf("data %+v", d)
	}
	if len(got) != 1 || got[0].typ != event.TodoUpdated || !reflect.DeepEqual(got[0].payload, event.TodoPayload{Items: want}) {
		t.Errorf("emitted %+v", got)
	}
	wantOut := "Todo list updated: 4 items, 1 done, 1 in progress, 1 pending, 1 cancelled.\n" +
		"[x] 2. Read the code\n" +
		"[~] 1. Write tests  (in progress)\n" +
		"[ ] 3. Document\n" +
		"[-] x. Rewrite in Rust  (cancelled)"
	if res.Output != wantOut {
		t.Errorf("output:\n%s\nwant:\n%s", res.Output, wantOut)
	}

	// An empty list clears it, and is journaled as an empty array.
	got = nil
	res = callEnv(t, context.Background(), NewTodo(), env, `{"items": []}`)
	if res.Status != event.ToolOK || res.Output != "The todo list is now empty." || len(got) != 1 {
		t.Fatalf("clear: %s %q, %d events", res.Status, res.Output, len(got))
	}
	if b, _ := json.Marshal(got[0].payload); string(b) != `{"items":[]}` {
		t.Errorf("clear payload %s", b)
	}
	if b, _ := json.Marshal(res.Data); string(b) != `{"ok":true,"items":[]}` {
		t.Errorf("clear data %s", b)
	}
}

func TestTodoWithoutEmit(t *testing.T) {
	res := callEnv(t, context.Background(), NewTodo(), Env{}, `{"items": [{"content": "a", "status": "pending"}]}`)
	if res.Status != event.ToolOK || res.Data.(TodoData).Items[0].ID != "1" {
		t.Errorf("status %s data %+v", res.Status, res.Data)
	}
}

func TestTodoEmitFailure(t *testing.T) {
	lost := errors.New("lease lost")
	env := Env{Emit: func(event.Type, any) error { return lost }}
	_, err := NewTodo().Run(context.Background(), env, json.RawMessage(`{"items": []}`))
	if !errors.Is(err, lost) {
		t.Errorf("err %v", err)
	}
}

func TestTodoValidation(t *testing.T) {
	item := func(content, status string) string {
		b, _ := json.Marshal(map[string]string{"content": content, "status": status})
		return string(b)
	}
	many := make([]string, MaxTodoItems+1)
	for i := range many {
		many[i] = item("x", "pending")
	}
	tests := []struct{ name, args, output string }{
		{"missing items", `{}`, "items is required; send [] to clear the list"},
		{"null items", `{"items": null}`, "items is required"},
		{"items not a list", `{"items": "a"}`, `field "items" must be an array of objects`},
		{"too many", `{"items": [` + strings.Join(many, ",") + `]}`, "at most 50 items, got 51"},
		{"empty content", `{"items": [` + item("a", "done") + `,` + item(" ", "pending") + `]}`, "item 2: content is required"},
		{"long content", `{"items": [` + item(strings.Repeat("é", 501), "pending") + `]}`, "item 1: content is 501 characters, at most 500"},
		{"missing status", `{"items": [{"content": "a"}]}`, "item 1: status is required"},
		{"bad status", `{"items": [` + item("a", "finished") + `]}`, `item 1: status must be pending, in_progress, done or cancelled, got "finished"`},
		{"two in progress", `{"items": [` + item("a", "in_progress") + `,` + item("b", "in_progress") + `]}`, "2 items are in_progress; at most one may be"},
		{"duplicate id", `{"items": [{"id": "1", "content": "a", "status": "done"}, {"id": " 1", "content": "b", "status": "done"}]}`, `item 2: id "1" is used twice`},
		{"empty id", `{"items": [{"id": "", "content": "a", "status": "done"}]}`, "item 1: id is empty"},
		{"long id", `{"items": [{"id": "` + strings.Repeat("i", 65) + `", "content": "a", "status": "done"}]}`, "item 1: id is longer than 64 bytes"},
		{"unknown field", `{"items": [{"content": "a", "status": "done", "priority": 1}]}`, `unknown field "priority"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emitted := false
			env := Env{Emit: func(event.Type, any) error { emitted = true; return nil }}
			res := callEnv(t, context.Background(), NewTodo(), env, tt.args)
			if res.Status != event.ToolError || !strings.HasPrefix(res.Output, "invalid arguments: ") || !strings.Contains(res.Output, tt.output) {
				t.Errorf("status %s output %q, want %q", res.Status, res.Output, tt.output)
			}
			if emitted {
				t.Error("an invalid list was emitted")
			}
		})
	}
}

func TestTodoLabelAndIntent(t *testing.T) {
	tl := NewTodo()
	for args, want := range map[string]string{
		`{"items": []}`: "clear the todo list",
		`{"items": [{"content": "a", "status": "done"}, {"content": "b", "status": "pending"}]}`: "update todo list (1 of 2 done)",
		`{"items": 3}`: "todo (invalid arguments)",
	} {
		if got := tl.Label(json.RawMessage(args)); got != want {
			t.Errorf("Label(%s) = %q, want %q", args, got, want)
		}
	}
	if in := tl.Intent(json.RawMessage(`{"items": []}`)); in.Effect != EffectNone {
		t.Errorf("intent %+v", in)
	}
	if !json.Valid(tl.Spec().Parameters) {
		t.Error("schema is not JSON")
	}
}

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameTodo is the tool that keeps the agent's plan.
const NameTodo = "todo"

// Limits of the todo list: a plan longer than this is no longer a plan,
// and every update repeats the whole list in the context.
const (
	MaxTodoItems   = 50
	MaxTodoContent = 500 // runes
	maxTodoID      = 64
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoDone       = "done"
	TodoCancelled  = "cancelled"
)

// TodoData is the structured result of todo: the list as stored.
type TodoData struct {
	OK    bool             `json:"ok"`
	Items []event.TodoItem `json:"items"`
}

type todoArgs struct {
	Items *[]todoItemArg `json:"items"`
}

type todoItemArg struct {
	ID      *string `json:"id"`
	Content string  `json:"content"`
	Status  string  `json:"status"`
}

type todoTool struct{}

// NewTodo returns the todo tool. It keeps no state: every call sends the
// whole list, and the todo.updated event it emits is the record.
func NewTodo() Tool { return todoTool{} }

const todoSchema = `{
  "type": "object",
  "properties": {
    "items": {
      "type": "array",
      "maxItems": 50,
      "description": "The whole list, in order; it replaces the previous one. Send [] to clear it.",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "maxLength": 64, "description": "Keep the id of an item across updates. Omit it for a new item and one is assigned."},
          "content": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What is to be done, in a short sentence."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "done", "cancelled"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["items"],
  "additionalProperties": false
}`

func (todoTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameTodo,
		Description: "Keep a todo list for a task of several steps, so you and the person can follow progress. " +
			"Each call sends the whole list and replaces the previous one. Mark an item in_progress when you " +
			"start it (only one at a time) and done as soon as it is finished; cancel items that no longer apply.",
		Parameters: json.RawMessage(todoSchema),
	}
}

// parse validates the list and assigns missing ids.
func (todoTool) parse(args json.RawMessage) ([]event.TodoItem, error) {
	var a todoArgs
	if err := decodeArgs(args, &a); err != nil {
		return nil, err
	}
	if a.Items == nil {
		return nil, errors.New("items is required; send [] to clear the list")
	}
	in := *a.Items
	if len(in) > MaxTodoItems {
		return nil, fmt.Errorf("at most %d items, got %d", MaxTodoItems, len(in))
	}
	items := make([]event.TodoItem, len(in))
	used := map[string]bool{}
	inProgress := 0
	for i, it := range in {
		n := i + 1
		content := strings.TrimSpace(it.Content)
		switch {
		case content == "":
			return nil, fmt.Errorf("item %d: content is required", n)
		case utf8.RuneCountInString(content) > MaxTodoContent:
			return nil, fmt.Errorf("item %d: content is %d characters, at most %d", n, utf8.RuneCountInString(content), MaxTodoContent)
		}
		switch it.Status {
		case TodoPending, TodoDone, TodoCancelled:
		case TodoInProgress:
			inProgress++
		case "":
			return nil, fmt.Errorf("item %d: status is required", n)
		default:
			return nil, fmt.Errorf("item %d: status must be pending, in_progress, done or cancelled, got %q", n, it.Status)
		}
		items[i] = event.TodoItem{Content: content, Status: it.Status}
		if it.ID == nil {
			continue
		}
		id := strings.TrimSpace(*it.ID)
		switch {
		case id == "":
			return nil, fmt.Errorf("item %d: id is empty; omit it to have one assigned", n)
		case len(id) > maxTodoID:
			return nil, fmt.Errorf("item %d: id is longer than %d bytes", n, maxTodoID)
		case used[id]:
			return nil, fmt.Errorf("item %d: id %q is used twice", n, id)
		}
		used[id] = true
		items[i].ID = id
	}
	// One item in progress keeps the plan honest about what is being done
	// now; several would make the list say less.
	if inProgress > 1 {
		return nil, fmt.Errorf("%d items are in_progress; at most one may be, mark the others pending or done", inProgress)
	}
	next := 1
	for i := range items {
		if items[i].ID != "" {
			continue
		}
		for used[strconv.Itoa(next)] {
			next++
		}
		items[i].ID = strconv.Itoa(next)
		used[items[i].ID] = true
	}
	return items, nil
}

func (t todoTool) Label(args json.RawMessage) string {
	items, err := t.parse(args)
	if err != nil {
		return "todo (invalid arguments)"
	}
	if len(items) == 0 {
		return "clear the todo list"
	}
	done := 0
	for _, it := range items {
		if it.Status == TodoDone {
			done++
		}
	}
	return fmt.Sprintf("update todo list (%d of %d done)", done, len(items))
}

func (todoTool) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (t todoTool) Run(_ context.Context, env Env, args json.RawMessage) (Result, error) {
	items, err := t.parse(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	if env.Emit != nil {
		if err := env.Emit(event.TodoUpdated, event.TodoPayload{Items: items}); err != nil {
			// Only a lost lease fails Emit: the run is no longer ours.
			return Result{}, fmt.Errorf("todo: emit %s: %w", event.TodoUpdated, err)
		}
	}
	return Result{Status: event.ToolOK, Output: renderTodo(items), Data: TodoData{OK: true, Items: items}}, nil
}

// renderTodo shows the list as a checklist, the way the model wrote it.
func renderTodo(items []event.TodoItem) string {
	if len(items) == 0 {
		return "The todo list is now empty."
	}
	counts := map[string]int{}
	var b strings.Builder
	for _, it := range items {
		counts[it.Status]++
	}
	fmt.Fprintf(&b, "Todo list updated: %d items, %d done, %d in progress, %d pending",
		len(items), counts[TodoDone], counts[TodoInProgress], counts[TodoPending])
	if c := counts[TodoCancelled]; c > 0 {
		fmt.Fprintf(&b, ", %d cancelled", c)
	}
	b.WriteString(".\n")
	for _, it := range items {
		box := map[string]string{TodoPending: "[ ]", TodoInProgress: "[~]", TodoDone: "[x]", TodoCancelled: "[-]"}[it.Status]
		fmt.Fprintf(&b, "%s %s. %s", box, it.ID, it.Content)
		if it.Status == TodoInProgress {
			b.WriteString("  (in progress)")
		}
		if it.Status == TodoCancelled {
			b.WriteString("  (cancelled)")
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

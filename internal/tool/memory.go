package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameMemory is the memory tool's name.
const NameMemory = "memory"

// MemoryData is the structured result of the memory tool.
type MemoryData struct {
	OK     bool   `json:"ok"`
	Action string `json:"action"`
	Target string `json:"target"`
	// Entries are the target's entries after the call.
	Entries []string `json:"entries"`
	// Chars is how much of Limit the entries use (memory.Size).
	Chars int `json:"chars"`
	Limit int `json:"limit"`
}

type memoryArgs struct {
	Action string `json:"action"`
	Target string `json:"target"`
	Text   string `json:"text"`
	Old    string `json:"old"`
}

type memoryTool struct{ store *memory.Store }

// NewMemory returns the memory tool over store; a run's own memory (its
// profile's, Env.Memory) takes its place. A nil store gives a tool
// that is offered but answers every call with "memory is not configured",
// so the registry need not change shape with the configuration.
func NewMemory(store *memory.Store) Tool { return memoryTool{store: store} }

const memorySchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "add", "replace", "remove"], "description": "list shows the entries; add appends one; replace rewrites the one entry containing old as text; remove deletes the one entry containing old."},
    "target": {"type": "string", "enum": ["notes", "user"], "description": "notes: your own notes. user: the user's profile."},
    "text": {"type": "string", "description": "add, replace: the entry's new text, one short self-contained fact."},
    "old": {"type": "string", "description": "replace, remove: a substring found in exactly one existing entry."}
  },
  "required": ["action", "target"],
  "additionalProperties": false
}`

func (memoryTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameMemory,
		Description: "Keep durable memory across sessions. target \"notes\" is your own notes: facts about the projects " +
			"and environment, conventions, lessons learnt, things that were hard to find out. target \"user\" is the user's " +
			"profile: preferences, role, habits, how they like to work. Both are shown to you at the start of every later " +
			"session, so make each entry one short, self-contained fact; do not store task progress, things that are easy to " +
			"look up again, or secrets. replace and remove pick the single entry containing old. Each target holds at most " +
			fmt.Sprint(memory.MaxFileChars) + " characters: when it is full, consolidate (merge related entries with replace, remove stale ones).",
		Parameters: json.RawMessage(memorySchema),
	}
}

// parseMemoryArgs checks the arguments' shape; what the store itself
// checks (lengths, limits, secrets, matches) is left to Run.
func parseMemoryArgs(raw json.RawMessage) (memoryArgs, memory.Target, error) {
	var a memoryArgs
	if err := decodeArgs(raw, &a); err != nil {
		return a, "", err
	}
	if a.Target == "" {
		return a, "", errors.New(`target is required: "notes" or "user"`)
	}
	target, err := memory.ParseTarget(a.Target)
	if err != nil {
		return a, "", fmt.Errorf(`target must be "notes" or "user", got %q`, a.Target)
	}
	text, old := strings.TrimSpace(a.Text) != "", strings.TrimSpace(a.Old) != ""
	switch a.Action {
	case "list":
		if a.Text != "" || a.Old != "" {
			return a, "", errors.New("list takes no text or old")
		}
	case "add":
		switch {
		case !text:
			return a, "", errors.New("add needs text, the entry to add")
		case a.Old != "":
			return a, "", errors.New("old is only used by replace and remove")
		}
	case "replace":
		switch {
		case !old:
			return a, "", errors.New("replace needs old, a substring of the entry to replace")
		case !text:
			return a, "", errors.New("replace needs text, the entry's new text; use remove to delete an entry")
		}
	case "remove":
		switch {
		case !old:
			return a, "", errors.New("remove needs old, a substring of the entry to remove")
		case a.Text != "":
			return a, "", errors.New("remove takes no text; give a substring of the entry as old")
		}
	case "":
		return a, "", errors.New("action is required: list, add, replace or remove")
	default:
		return a, "", fmt.Errorf("action must be list, add, replace or remove, got %q", a.Action)
	}
	return a, target, nil
}

// memoryFold shows text the way the store will keep it: on one line.
func memoryFold(s string) string { return strings.Join(strings.Fields(s), " ") }

// memoryAction describes a valid call in full, for approval: the person
// agrees to exactly the text that will be stored.
func memoryAction(a memoryArgs) string {
	const max = memory.MaxEntryChars + 100
	head := fmt.Sprintf("memory %s (%s)", a.Action, a.Target)
	switch a.Action {
	case "add":
		return fmt.Sprintf("%s: %q", head, truncate(memoryFold(a.Text), max))
	case "replace":
		return fmt.Sprintf("%s: %q → %q", head, truncate(memoryFold(a.Old), max), truncate(memoryFold(a.Text), max))
	case "remove":
		return fmt.Sprintf("%s: %q", head, truncate(memoryFold(a.Old), max))
	}
	return head
}

func (memoryTool) Label(args json.RawMessage) string {
	a, _, err := parseMemoryArgs(args)
	if err != nil {
		return "memory (invalid arguments)"
	}
	return truncate(memoryAction(a), 120)
}

func (memoryTool) Intent(args json.RawMessage) Intent {
	a, _, err := parseMemoryArgs(args)
	if err != nil {
		return Intent{Effect: EffectMemory, Action: "memory " + truncate(string(args), 500), Invalid: true}
	}
	if a.Action == "list" {
		return Intent{Effect: EffectNone, Action: memoryAction(a)}
	}
	return Intent{Effect: EffectMemory, Action: memoryAction(a)}
}

func (t memoryTool) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	st := t.store
	if env.Memory != nil {
		st = env.Memory
	}
	if st == nil {
		return errorResult("memory is not configured"), nil
	}
	a, target, err := parseMemoryArgs(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
	}
	var entries []string
	switch a.Action {
	case "list":
		entries, err = st.List(ctx, target)
	case "add":
		entries, err = st.Add(ctx, target, a.Text)
	case "replace":
		entries, err = st.Replace(ctx, target, a.Old, a.Text)
	case "remove":
		entries, err = st.Remove(ctx, target, a.Old)
	}
	if err != nil {
		return memoryFailure(a, err), nil
	}

	size := memory.Size(entries)
	noun := "entries"
	if len(entries) == 1 {
		noun = "entry"
	}
	usage := fmt.Sprintf("%d %s, %d of %d characters used", len(entries), noun, size, memory.MaxFileChars)
	var out string
	switch a.Action {
	case "list":
		if len(entries) == 0 {
			out = fmt.Sprintf("%s is empty (0 of %d characters used).", target, memory.MaxFileChars)
			break
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%s):\n", target, usage)
		for _, e := range entries {
			b.WriteString("- " + e + "\n")
		}
		out = strings.TrimRight(b.String(), "\n")
	case "add":
		out = fmt.Sprintf("Saved to %s (%s).", target, usage)
	case "replace":
		out = fmt.Sprintf("Replaced the entry in %s (%s).", target, usage)
	case "remove":
		out = fmt.Sprintf("Removed the entry from %s (%s).", target, usage)
	}
	if a.Action != "remove" && size*10 >= memory.MaxFileChars*9 {
		out += fmt.Sprintf(" %s is nearly full: consolidate related entries and remove stale ones.", target)
	}
	return Result{
		Status: event.ToolOK,
		Output: out,
		// Entries is never null in JSON, so viewers need no special case.
		Data: MemoryData{
			OK: true, Action: a.Action, Target: string(target),
			Entries: append([]string{}, entries...), Chars: size, Limit: memory.MaxFileChars,
		},
	}, nil
}

// memoryFailure words a store error for the model. The store's own
// refusals are already addressed to it; anything else is an I/O failure,
// shown without the data directory's path.
func memoryFailure(a memoryArgs, err error) Result {
	for _, e := range []error{
		memory.ErrEmpty, memory.ErrTooLong, memory.ErrFull, memory.ErrSecret,
		memory.ErrControl, memory.ErrNoMatch, memory.ErrAmbiguous,
	} {
		if errors.Is(err, e) {
			return errorResult("%s not saved: %v", a.Action, err)
		}
	}
	if a.Action == "list" {
		return errorResult("cannot read %s: %v", a.Target, bareErr(err))
	}
	return errorResult("%s failed, memory unchanged: %v", a.Action, bareErr(err))
}

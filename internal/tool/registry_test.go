package tool

import (
	"context"
	"encoding/json"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestBuiltinRegistry(t *testing.T) {
	r := Builtin(Config{})
	want := []string{"clarify", "edit_file", "glob", "grep", "list_dir", "memory", "process", "read_file",
		"run_command", "skills", "todo", "update_goal", "web_fetch", "web_search", "write_file"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %q", got)
	}
	specs := r.Specs()
	for i, s := range specs {
		if s.Name != want[i] {
			t.Errorf("spec %d is %s, want %s", i, s.Name, want[i])
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", s.Name, err)
		}
		if schema.Type != "object" || schema.Required == nil || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema %s", s.Name, s.Parameters)
		}
		for _, req := range schema.Required {
			if _, ok := schema.Properties[req]; !ok {
				t.Errorf("%s: required %q is not a property", s.Name, req)
			}
		}
		tl, ok := r.Get(s.Name)
		if !ok || tl.Spec().Name != s.Name {
			t.Errorf("Get(%s) = %v, %v", s.Name, tl, ok)
		}
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	names := r.Names()
	names[0] = "mutated"
	if r.Names()[0] != "clarify" {
		t.Error("Names exposes internal state")
	}
	for name, want := range map[string]Effect{"clarify": EffectNone, "list_dir": EffectNone, "read_file": EffectNone, "run_command": EffectExec,
		"glob": EffectNone, "grep": EffectNone, "write_file": EffectWrite, "edit_file": EffectWrite, "todo": EffectNone,
		"web_fetch": EffectNetwork, "web_search": EffectNetwork, "skills": EffectNone} {
		tl, _ := r.Get(name)
		if got := tl.Intent(json.RawMessage(`{"command": "ls", "path": "a", "question": "q"}`)).Effect; got != want {
			t.Errorf("%s: effect = %v, want %v", name, got, want)
		}
	}
}

func TestNewRegistryRejectsDuplicates(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `duplicate tool "clarify"`) {
			t.Errorf("recover() = %v", r)
		}
	}()
	NewRegistry(NewClarify(), NewClarify())
}

func TestConfigDefaults(t *testing.T) {
	c := Config{CommandTimeout: DefaultMaxCommandTimeout * 2}.withDefaults()
	if c.MaxCommandTimeout != c.CommandTimeout || c.OutputCap != DefaultOutputCap || c.ReadCap != DefaultReadCap {
		t.Errorf("%+v", c)
	}
	if c := (Config{}).withDefaults(); c.CommandTimeout != DefaultCommandTimeout || c.MaxCommandTimeout != DefaultMaxCommandTimeout {
		t.Errorf("%+v", c)
	}
}

// Every tool survives hostile arguments with an error result, never a panic.
func TestBadArgumentsNeverPanic(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "a\n"})
	bad := []string{
		``, `null`, `{`, `[]`, `"x"`, `42`, `{"path": null}`, `{"path": {}}`, `{"path": ["a"]}`,
		`{"command": 1}`, `{"question": false}`, `{"depth": 1e99}`, `{"limit": 1.5}`, `{"offset": "1"}`,
		`{"path": "a\u0000b"}`, `{"command": "echo\u0000"}`, `{} {}`, `{"choices": "a"}`, `{"zzz": 1}`,
	}
	r := Builtin(Config{Memory: memory.New(t.TempDir()), Skills: skill.New(t.TempDir()), Processes: NewProcessTable(0, 0, nil)})
	for _, name := range r.Names() {
		tl, _ := r.Get(name)
		for _, args := range bad {
			tl.Label(json.RawMessage(args))
			tl.Intent(json.RawMessage(args))
			res, err := tl.Run(context.Background(), Env{Workspace: ws}, json.RawMessage(args))
			if err != nil {
				t.Errorf("%s(%s): machinery error %v", name, args, err)
				continue
			}
			if res.Status == event.ToolOK {
				continue // empty args are fine for list_dir
			}
			if res.Status != event.ToolError || res.Output == "" {
				t.Errorf("%s(%s): status %s output %q", name, args, res.Status, res.Output)
			}
			if name != NameClarify && !strings.HasPrefix(res.Output, "invalid arguments: ") && !strings.Contains(res.Output, "NUL") {
				t.Errorf("%s(%s): output %q", name, args, res.Output)
			}
		}
	}
}

func TestMisconfiguredWorkspaceIsAMachineryError(t *testing.T) {
	r := Builtin(Config{})
	for _, name := range []string{NameListDir, NameReadFile, NameRunCommand} {
		tl, _ := r.Get(name)
		if _, err := tl.Run(context.Background(), Env{}, json.RawMessage(`{"path": "a", "command": "true"}`)); err == nil {
			t.Errorf("%s with no workspace: no error", name)
		}
	}
}

package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/skill"
)

func skillDoc(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

// skillsFixture makes a workspace with one workspace skill and a data
// directory, outside it, with two more.
func skillsFixture(t *testing.T) (ws, data string, tl Tool) {
	t.Helper()
	ws = workspace(t, map[string]string{
		".caduceus/skills/lint/SKILL.md":        skillDoc("lint", "Run the linters", "# Lint\nRun `make lint`.\n"),
		".caduceus/skills/lint/scripts/lint.sh": "#!/bin/sh\n",
		".caduceus/skills/release/SKILL.md":     skillDoc("release", "Workspace release (shadowed)", "ws"),
	})
	data = t.TempDir()
	for p, c := range map[string]string{
		"release/SKILL.md":     "---\nname: release\ndescription: >\n  Cut a release;\n  use when asked to tag.\ntags: [git, ci]\n---\n# Release\nSteps.\n",
		"release/checklist.md": "- [ ] tag",
		"broken/SKILL.md":      "---\nname: broken\n---\n",
	} {
		full := filepath.Join(data, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(c), 0o644))
	}
	lib := skill.New(data, filepath.Join(ws, ".caduceus", "skills"))
	return ws, data, NewSkills(lib)
}

func TestSkillsList(t *testing.T) {
	ws, data, tl := skillsFixture(t)
	res := call(t, tl, ws, `{"action": "list"}`)
	want := "3 skills:\n" +
		"- broken — (cannot be loaded: front matter has no description)\n" +
		"- lint — Run the linters\n" +
		"- release — Cut a release; use when asked to tag. [git, ci]"
	if res.Status != event.ToolOK || res.Output != want {
		t.Fatalf("list: %s\n%s\nwant\n%s", res.Status, res.Output, want)
	}
	d := res.Data.(SkillsData)
	if !d.OK || d.Action != "list" || len(d.Skills) != 3 || d.Skills[2].Path != filepath.Join(data, "release") || len(d.Skills[2].Shadowed) != 1 {
		t.Errorf("data %+v", d)
	}
	if strings.Contains(res.Output, data) {
		t.Error("list shows the data directory")
	}

	empty := call(t, NewSkills(skill.New(filepath.Join(t.TempDir(), "none"))), ws, `{"action": "list"}`)
	if empty.Status != event.ToolOK || empty.Output != "No skills are installed." {
		t.Errorf("empty: %+v", empty)
	}
}

func TestSkillsLoad(t *testing.T) {
	ws, data, tl := skillsFixture(t)

	// A workspace skill: its files are named so read_file can open them.
	res := call(t, tl, ws, `{"action": "load", "name": "lint"}`)
	want := "# Lint\nRun `make lint`.\n\nFiles in this skill (open them with read_file):\n- .caduceus/skills/lint/scripts/lint.sh"
	if res.Status != event.ToolOK || res.Output != want {
		t.Fatalf("load lint: %s\n%s\nwant\n%s", res.Status, res.Output, want)
	}
	d := res.Data.(SkillsData)
	if d.ViewerPath != ".caduceus/skills/lint" || !slices.Equal(d.Files, []string{"scripts/lint.sh"}) || d.Truncated || d.Name != "lint" {
		t.Errorf("data %+v", d)
	}
	if rf := call(t, NewReadFile(Config{}), ws, `{"path": ".caduceus/skills/lint/scripts/lint.sh"}`); rf.Status != event.ToolOK {
		t.Errorf("listed file not readable: %s", rf.Output)
	}

	// A data-directory skill: files are named relative to it, with a warning.
	res = call(t, tl, ws, `{"action": "load", "name": "release"}`)
	if res.Status != event.ToolOK || !strings.HasPrefix(res.Output, "# Release\nSteps.\n\nOther files in this skill's directory, which is outside the workspace") ||
		!strings.HasSuffix(res.Output, "\n- checklist.md") || strings.Contains(res.Output, data) {
		t.Errorf("load release:\n%s", res.Output)
	}
	if d := res.Data.(SkillsData); d.ViewerPath != "" || d.Path != filepath.Join(data, "release") {
		t.Errorf("data %+v", d)
	}

	res = call(t, tl, ws, `{"action": "load", "name": "nope"}`)
	if res.Status != event.ToolError || res.Output != `no skill named "nope"; available: lint, release` {
		t.Errorf("unknown: %q", res.Output)
	}
	res = call(t, tl, ws, `{"action": "load", "name": "broken"}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "skill cannot be loaded: broken: front matter has no description") {
		t.Errorf("broken: %q", res.Output)
	}
	res = call(t, NewSkills(skill.New()), ws, `{"action": "load", "name": "x"}`)
	if res.Status != event.ToolError || res.Output != `no skill named "x"; no skills are installed` {
		t.Errorf("none: %q", res.Output)
	}
}

func TestSkillsLoadCapsBody(t *testing.T) {
	line := strings.Repeat("é", 40) + "\n"
	body := strings.Repeat(line, skillBodyCap/len(line)+50)
	ws := workspace(t, map[string]string{"skills/big/SKILL.md": skillDoc("big", "Big", body)})
	res := call(t, NewSkills(skill.New(filepath.Join(ws, "skills"))), ws, `{"action": "load", "name": "big"}`)
	d := res.Data.(SkillsData)
	if res.Status != event.ToolOK || !d.Truncated || d.Bytes != len(body) || len(res.Output) > skillBodyCap+200 {
		t.Fatalf("cap: %s truncated=%v bytes=%d out=%d", res.Status, d.Truncated, d.Bytes, len(res.Output))
	}
	if !strings.Contains(res.Output, strings.Repeat("é", 40)+"\n… [SKILL.md cut at ") || !strings.HasSuffix(res.Output, "; read the rest with read_file skills/big/SKILL.md]") {
		t.Errorf("cut notice: %q", res.Output[len(res.Output)-200:])
	}

	// Without a line break in reach, the cut keeps whole runes.
	if got := cutAtLine(strings.Repeat("é", 100), 51); got != strings.Repeat("é", 25) {
		t.Errorf("cutAtLine = %q", got)
	}
}

func TestSkillsBadArguments(t *testing.T) {
	_, _, tl := skillsFixture(t)
	tests := []struct{ args, want string }{
		{`{}`, "action is required"},
		{`{"action": "run"}`, `action must be list or load, got "run"`},
		{`{"action": "load"}`, "load needs name"},
		{`{"action": "load", "name": " "}`, "load needs name"},
		{`{"action": "list", "name": "x"}`, "list takes no name"},
		{`{"action": "list", "verbose": true}`, `unknown field "verbose"`},
		{`{"action": 1}`, `field "action" must be a string`},
	}
	for _, tt := range tests {
		res := call(t, tl, "", tt.args)
		if res.Status != event.ToolError || !strings.HasPrefix(res.Output, "invalid arguments: ") || !strings.Contains(res.Output, tt.want) {
			t.Errorf("%s: %s %q, want %q", tt.args, res.Status, res.Output, tt.want)
		}
		if in := tl.Intent(json.RawMessage(tt.args)); !in.Invalid || in.Effect != EffectNone {
			t.Errorf("%s: intent %+v", tt.args, in)
		}
	}
}

func TestSkillsLabelIntentAndNil(t *testing.T) {
	tl := NewSkills(nil)
	if res := call(t, tl, "", `{"action": "list"}`); res.Status != event.ToolError || res.Output != "skills are not configured" {
		t.Errorf("nil library: %+v", res)
	}
	for args, label := range map[string]string{
		`{"action": "list"}`:                "list skills",
		`{"action": "load", "name": "pdf"}`: "load skill pdf",
		`{"action": "load"}`:                "skills (invalid arguments)",
	} {
		if l := tl.Label(json.RawMessage(args)); l != label {
			t.Errorf("%s: label %q, want %q", args, l, label)
		}
	}
	if in := tl.Intent(json.RawMessage(`{"action": "load", "name": "pdf"}`)); in.Effect != EffectNone || in.Invalid || in.Action != "load skill pdf" {
		t.Errorf("intent %+v", in)
	}
	if tl.Spec().Name != NameSkills {
		t.Error("name")
	}
}

func TestMemoryAndSkillsSchemas(t *testing.T) {
	for _, tl := range []Tool{NewMemory(nil), NewSkills(nil)} {
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		spec := tl.Spec()
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties || !slices.Contains(schema.Required, "action") {
			t.Errorf("%s: schema %+v", spec.Name, schema)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q not a property", spec.Name, r)
			}
		}
	}
}

// A profile's enabled skills narrow what list and load see; no names
// leave every skill.
func TestOnlySkills(t *testing.T) {
	ws, _, tl := skillsFixture(t)
	reg := NewRegistry(tl, NewTodo())
	if reg.OnlySkills(nil) != reg {
		t.Fatal("OnlySkills(nil) changed the registry")
	}
	only := reg.OnlySkills([]string{"lint", "missing"})
	if !slices.Equal(only.Names(), reg.Names()) {
		t.Fatalf("names = %q, want %q", only.Names(), reg.Names())
	}
	sk, _ := only.Get(NameSkills)
	if res := call(t, sk, ws, `{"action": "list"}`); res.Output != "1 skill:\n- lint — Run the linters" {
		t.Errorf("list = %q", res.Output)
	}
	if res := call(t, sk, ws, `{"action": "load", "name": "release"}`); !strings.Contains(res.Output, `no skill named "release"`) {
		t.Errorf("load of a skill the profile leaves out = %q", res.Output)
	}
	if NewRegistry(NewTodo()).OnlySkills([]string{"x"}).Names()[0] != NameTodo {
		t.Error("a registry without the skills tool changed")
	}
}

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/skill"
)

// NameSkills is the skills tool's name.
const NameSkills = "skills"

const (
	// skillBodyCap bounds the SKILL.md text a load returns; a skill is
	// meant to be read whole, but not at any price.
	skillBodyCap = 64 << 10
	// skillDescCap bounds a description in the list, which the model
	// reads to decide what to load.
	skillDescCap = 300
)

// SkillsData is the structured result of the skills tool.
type SkillsData struct {
	OK     bool   `json:"ok"`
	Action string `json:"action"`
	// Skills is the listing (list).
	Skills []skill.Skill `json:"skills,omitempty"`
	// The rest describes the loaded skill (load).
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
	// ViewerPath is the skill's directory relative to the workspace, when
	// it lies inside it.
	ViewerPath string `json:"viewer_path,omitempty"`
	// Files are the skill's other files, relative to its directory.
	Files     []string `json:"files,omitempty"`
	Bytes     int      `json:"bytes,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
}

type skillsArgs struct {
	Action string `json:"action"`
	Name   string `json:"name"`
}

type skillsTool struct{ lib *skill.Library }

// NewSkills returns the skills tool over lib. A nil library gives a tool
// that answers every call with "skills are not configured".
func NewSkills(lib *skill.Library) Tool { return skillsTool{lib: lib} }

const skillsSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "load"], "description": "list shows the available skills; load returns one skill's instructions."},
    "name": {"type": "string", "description": "load: the skill's name, as listed."}
  },
  "required": ["action"],
  "additionalProperties": false
}`

func (skillsTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameSkills,
		Description: "Skills are instructions for particular kinds of task, written in advance. list shows each skill's " +
			"name and when to use it; before starting a task a skill describes, load it and follow its instructions.",
		Parameters: json.RawMessage(skillsSchema),
	}
}

func parseSkillsArgs(raw json.RawMessage) (skillsArgs, error) {
	var a skillsArgs
	if err := decodeArgs(raw, &a); err != nil {
		return a, err
	}
	a.Name = strings.TrimSpace(a.Name)
	switch a.Action {
	case "list":
		if a.Name != "" {
			return a, errors.New("list takes no name")
		}
	case "load":
		if a.Name == "" {
			return a, errors.New("load needs name, the skill to load")
		}
	case "":
		return a, errors.New("action is required: list or load")
	default:
		return a, fmt.Errorf("action must be list or load, got %q", a.Action)
	}
	return a, nil
}

func (skillsTool) Label(args json.RawMessage) string {
	a, err := parseSkillsArgs(args)
	switch {
	case err != nil:
		return "skills (invalid arguments)"
	case a.Action == "load":
		return "load skill " + truncate(a.Name, 100)
	}
	return "list skills"
}

func (t skillsTool) Intent(args json.RawMessage) Intent {
	_, err := parseSkillsArgs(args)
	return Intent{Effect: EffectNone, Action: t.Label(args), Invalid: err != nil}
}

func (t skillsTool) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if t.lib == nil {
		return errorResult("skills are not configured"), nil
	}
	a, err := parseSkillsArgs(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
	}
	if a.Action == "list" {
		return t.list()
	}
	return t.load(env, a.Name)
}

func (t skillsTool) list() (Result, error) {
	skills, err := t.lib.List()
	var b strings.Builder
	switch len(skills) {
	case 0:
		b.WriteString("No skills are installed.")
	case 1:
		b.WriteString("1 skill:\n")
	default:
		fmt.Fprintf(&b, "%d skills:\n", len(skills))
	}
	for _, s := range skills {
		b.WriteString("- " + s.Name + " — ")
		if s.Error != "" {
			b.WriteString("(cannot be loaded: " + truncate(s.Error, skillDescCap) + ")\n")
			continue
		}
		b.WriteString(truncate(strings.Join(strings.Fields(s.Description), " "), skillDescCap))
		if len(s.Tags) > 0 {
			b.WriteString(" [" + strings.Join(s.Tags, ", ") + "]")
		}
		b.WriteString("\n")
	}
	if err != nil {
		// The error names the runner's directories; the model needs only
		// to know the list may be incomplete.
		b.WriteString("(Some skill directories could not be read; this list may be incomplete.)")
	}
	return Result{
		Status: event.ToolOK,
		Output: strings.TrimRight(b.String(), "\n"),
		Data:   SkillsData{OK: true, Action: "list", Skills: skills},
	}, nil
}

func (t skillsTool) load(env Env, name string) (Result, error) {
	l, err := t.lib.Load(name)
	switch {
	case errors.Is(err, skill.ErrNotFound):
		return errorResult("no skill named %q; %s", name, t.available()), nil
	case err != nil:
		return errorResult("%v", err), nil
	}

	data := SkillsData{OK: true, Action: "load", Name: l.Name, Path: l.Path, Files: l.Files, Bytes: len(l.Body)}
	// Only a skill inside the workspace has files the model can open.
	if env.Workspace != "" {
		if ws, err := openWorkspace(env.Workspace); err == nil {
			if rel, _, err := ws.resolve(l.Path); err == nil {
				data.ViewerPath = rel
			}
			ws.Close()
		}
	}

	body := l.Body
	if len(body) > skillBodyCap {
		body, data.Truncated = cutAtLine(body, skillBodyCap), true
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(body, "\n"))
	if data.Truncated {
		fmt.Fprintf(&b, "\n… [SKILL.md cut at %d of %d bytes", len(body), len(l.Body))
		if data.ViewerPath != "" {
			fmt.Fprintf(&b, "; read the rest with read_file %s", skillFile(data.ViewerPath, skill.File))
		}
		b.WriteString("]")
	}
	if len(l.Files) > 0 {
		if data.ViewerPath != "" {
			b.WriteString("\n\nFiles in this skill (open them with read_file):\n")
			for _, f := range l.Files {
				b.WriteString("- " + skillFile(data.ViewerPath, f) + "\n")
			}
		} else {
			b.WriteString("\n\nOther files in this skill's directory, which is outside the workspace (the file tools cannot open them):\n")
			for _, f := range l.Files {
				b.WriteString("- " + f + "\n")
			}
		}
		if l.MoreFiles {
			fmt.Fprintf(&b, "- … (only the first %d files are listed)\n", len(l.Files))
		}
	}
	return Result{Status: event.ToolOK, Output: strings.TrimRight(b.String(), "\n"), Data: data}, nil
}

// available names the skills that can be loaded, for a model that asked
// for one that does not exist.
func (t skillsTool) available() string {
	skills, _ := t.lib.List()
	var names []string
	for _, s := range skills {
		if s.Error == "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "no skills are installed"
	}
	return "available: " + strings.Join(names, ", ")
}

// OnlySkills returns r with its skills tool limited to the named skills,
// those a run's profile enables; with no names (a profile that enables
// none, which means all) or no skills tool, r itself.
func (r *Registry) OnlySkills(names []string) *Registry {
	st, ok := r.tools[NameSkills].(skillsTool)
	if !ok || st.lib == nil || len(names) == 0 {
		return r
	}
	keep := make([]Tool, 0, len(r.names))
	for _, n := range r.names {
		if n == NameSkills {
			keep = append(keep, skillsTool{lib: st.lib.Only(names...)})
			continue
		}
		keep = append(keep, r.tools[n])
	}
	return NewRegistry(keep...)
}

// skillFile joins a workspace-relative directory and a file in it.
func skillFile(dir, f string) string {
	if dir == "." {
		return f
	}
	return dir + "/" + f
}

// cutAtLine shortens s to at most n bytes, at a line break when one is in
// the second half, else at a rune boundary.
func cutAtLine(s string, n int) string {
	if i := strings.LastIndexByte(s[:n], '\n'); i >= n/2 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

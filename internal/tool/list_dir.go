package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/ignore"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

const (
	listDefaultDepth = 1
	listMaxDepth     = 5
	listDefaultLimit = 500
	// listMaxLimit keeps one call from flooding the model's context.
	listMaxLimit = 5000
)

// ListDirData is the structured result of list_dir.
type ListDirData struct {
	Path      string      `json:"path"` // relative to the workspace
	Entries   []ListEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
	// Ignored counts the entries .gitignore rules hid (an ignored
	// directory counts once); zero with include_ignored.
	Ignored int `json:"ignored"`
}

// ListEntry is one listed file; Name is relative to the listed directory.
type ListEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // file | dir | symlink
	Size int64  `json:"size"`
}

type listArgs struct {
	Path           string `json:"path"`
	Depth          int    `json:"depth"`
	Limit          int    `json:"limit"`
	IncludeIgnored bool   `json:"include_ignored"`
}

type listDir struct{}

// NewListDir returns the list_dir tool.
func NewListDir(Config) Tool { return listDir{} }

const listSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the workspace root. Default \".\"."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many levels to descend; 1 lists only direct children. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Maximum number of entries. Default 500."},
    "include_ignored": {"type": "boolean", "description": "Also list entries that .gitignore rules exclude (node_modules/, build output, ...). Default false: they are hidden and the result says how many were."}
  },
  "required": [],
  "additionalProperties": false
}`

func (listDir) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameListDir,
		Description: "List files and directories in the workspace, sorted by name. Directories end with \"/\". " +
			"Symlinks are shown but not followed; .git is never listed, and entries excluded by .gitignore are hidden unless include_ignored is set.",
		Parameters: json.RawMessage(listSchema),
	}
}

func (listDir) Label(args json.RawMessage) string {
	var a listArgs
	if err := decodeArgs(args, &a); err != nil {
		return "ls ."
	}
	if a.Path == "" {
		a.Path = "."
	}
	return "ls " + truncate(a.Path, 120) + ignoredLabel(a.IncludeIgnored)
}

func (listDir) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (listDir) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a listArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	if a.Depth, err = count("depth", a.Depth, listDefaultDepth, listMaxDepth); err != nil {
		return invalidArgs(err), nil
	}
	if a.Limit, err = count("limit", a.Limit, listDefaultLimit, listMaxLimit); err != nil {
		return invalidArgs(err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	rel, real, err := ws.resolve(a.Path)
	if err != nil {
		return pathFailure(err), nil
	}
	fi, err := ws.root.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("%s does not exist", rel), nil
	case err != nil:
		return rootFailure(fmt.Errorf("cannot list %s: %w", rel, bareErr(err)), a.Path), nil
	case !fi.IsDir():
		return errorResult("%s is a file, not a directory; use read_file to read it", rel), nil
	}

	l := lister{ctx: ctx, ws: ws, limit: a.Limit, depth: a.Depth}
	if !a.IncludeIgnored {
		// A directory named outright is listed even when it is ignored.
		rules := newIgnoreRules(ws, real)
		if real == "." || !rules.Ignored(real, true) {
			l.ignore = rules
		}
	}
	if err := l.walk(real, "", 1); err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		}
		return rootFailure(fmt.Errorf("cannot list %s: %w", rel, bareErr(err)), a.Path), nil
	}
	data := ListDirData{Path: rel, Entries: l.entries, Truncated: l.truncated, Ignored: l.hidden.n}
	if data.Entries == nil {
		data.Entries = []ListEntry{}
	}
	out := formatListing(data)
	if note := l.hidden.note(); note != "" {
		out += "\n" + note
	}
	return Result{Status: event.ToolOK, Output: out, Data: data}, nil
}

type lister struct {
	ctx       context.Context
	ws        *workspaceFS
	limit     int
	depth     int
	ignore    *ignore.Rules // nil when ignore rules are off
	hidden    hiddenCount
	entries   []ListEntry
	truncated bool
}

// walk lists dir (a resolved name) depth-first, so a directory's children
// follow it and the listing reads like a tree. Only the top directory's
// read error is fatal: an unreadable subdirectory should not hide the
// rest.
func (l *lister) walk(dir, prefix string, level int) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	des, err := readDirSorted(l.ws, dir)
	if err != nil && level == 1 {
		return err
	}
	if l.ignore != nil {
		defer l.ignore.Leave(l.ignore.Enter(dir))
	}
	for _, de := range des {
		// .git internals are noise to the model, and git's own business.
		if de.Name() == ".git" {
			continue
		}
		name := path.Join(prefix, de.Name())
		child := path.Join(dir, de.Name())
		isDir := de.IsDir()
		if l.ignore != nil && l.ignore.Ignored(child, isDir) {
			l.hidden.add(name, isDir)
			continue
		}
		if len(l.entries) >= l.limit {
			l.truncated = true
			return nil
		}
		e := ListEntry{Name: name, Type: "file"}
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			e.Type = "symlink"
		case isDir:
			e.Type = "dir"
		default:
			// Entries read through a Root carry their lstat already.
			if info, err := de.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		l.entries = append(l.entries, e)
		// Symlinks are not followed: they may point outside the workspace
		// or form cycles.
		if e.Type == "dir" && level < l.depth {
			if err := l.walk(child, name, level+1); err != nil {
				return err
			}
			if l.truncated {
				return nil
			}
		}
	}
	return nil
}

func formatListing(d ListDirData) string {
	var b strings.Builder
	noun := "entries"
	if len(d.Entries) == 1 {
		noun = "entry"
	}
	fmt.Fprintf(&b, "%s/ (%d %s)\n", strings.TrimSuffix(d.Path, "/"), len(d.Entries), noun)
	if len(d.Entries) == 0 {
		b.WriteString("(empty)\n")
	}
	for _, e := range d.Entries {
		switch e.Type {
		case "dir":
			fmt.Fprintf(&b, "%s/\n", e.Name)
		case "symlink":
			fmt.Fprintf(&b, "%s@ (symlink)\n", e.Name)
		default:
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name, e.Size)
		}
	}
	if d.Truncated {
		fmt.Fprintf(&b, "… [listing truncated at %d entries; list a subdirectory or raise limit]\n", len(d.Entries))
	}
	return strings.TrimRight(b.String(), "\n")
}

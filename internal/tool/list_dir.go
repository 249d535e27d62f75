package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
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
}

// ListEntry is one listed file; Name is relative to the listed directory.
type ListEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // file | dir | symlink
	Size int64  `json:"size"`
}

type listArgs struct {
	Path  string `json:"path"`
	Depth int    `json:"depth"`
	Limit int    `json:"limit"`
}

type listDir struct{}

// NewListDir returns the list_dir tool.
func NewListDir(Config) Tool { return listDir{} }

const listSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the workspace root. Default \".\"."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many levels to descend; 1 lists only direct children. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Maximum number of entries. Default 500."}
  },
  "required": [],
  "additionalProperties": false
}`

func (listDir) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameListDir,
		Description: "List files and directories in the workspace, sorted by name. Directories end with \"/\". " +
			"Symlinks are shown but not followed; the contents of .git are skipped.",
		Parameters: json.RawMessage(listSchema),
	}
}

func (listDir) Label(args json.RawMessage) string {
	var a listArgs
	if err := decodeArgs(args, &a); err != nil || a.Path == "" {
		return "ls ."
	}
	return "ls " + truncate(a.Path, 120)
}

func (listDir) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (listDir) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if err := checkWorkspace(env); err != nil {
		return Result{}, err
	}
	var a listArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	var err error
	if a.Depth, err = count("depth", a.Depth, listDefaultDepth, listMaxDepth); err != nil {
		return invalidArgs(err), nil
	}
	if a.Limit, err = count("limit", a.Limit, listDefaultLimit, listMaxLimit); err != nil {
		return invalidArgs(err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	abs, err := Resolve(env.Workspace, a.Path)
	if err != nil {
		return pathFailure(err), nil
	}
	rel := relPath(env.Workspace, abs)
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("%s does not exist", rel), nil
	case err != nil:
		return errorResult("cannot list %s: %v", rel, bareErr(err)), nil
	case !fi.IsDir():
		return errorResult("%s is a file, not a directory; use read_file to read it", rel), nil
	}

	l := lister{ctx: ctx, limit: a.Limit, depth: a.Depth}
	if err := l.walk(abs, "", 1); err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		}
		return errorResult("cannot list %s: %v", rel, bareErr(err)), nil
	}
	data := ListDirData{Path: rel, Entries: l.entries, Truncated: l.truncated}
	if data.Entries == nil {
		data.Entries = []ListEntry{}
	}
	return Result{Status: event.ToolOK, Output: formatListing(data), Data: data}, nil
}

type lister struct {
	ctx       context.Context
	limit     int
	depth     int
	entries   []ListEntry
	truncated bool
}

// walk lists dir depth-first, so a directory's children follow it and the
// listing reads like a tree. Only the top directory's read error is fatal:
// an unreadable subdirectory should not hide the rest.
func (l *lister) walk(dir, prefix string, level int) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(dir)
	if err != nil && level == 1 {
		return err
	}
	for _, de := range des {
		if len(l.entries) >= l.limit {
			l.truncated = true
			return nil
		}
		name := path.Join(prefix, de.Name())
		e := ListEntry{Name: name, Type: "file"}
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			e.Type = "symlink"
		case de.IsDir():
			e.Type = "dir"
		default:
			if info, err := de.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		l.entries = append(l.entries, e)
		// Symlinks are not followed: they may point outside the workspace
		// or form cycles. .git internals are noise to the model.
		if e.Type == "dir" && level < l.depth && de.Name() != ".git" {
			if err := l.walk(filepath.Join(dir, de.Name()), name, level+1); err != nil {
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

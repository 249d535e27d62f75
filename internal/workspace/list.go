package workspace

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/ignore"
)

// List's page sizes.
const (
	DefaultListLimit = 200
	MaxListLimit     = 1000
)

// Entry is one entry of a directory.
type Entry struct {
	Name string `json:"name"`
	// Path is relative to the workspace, slash-separated.
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Size and ModTime are the entry's own (a symlink's, not its
	// target's).
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	// Ignored is set when .gitignore rules exclude the entry (or a
	// directory above it): the tree shows it dimmed.
	Ignored bool `json:"ignored"`
}

// Page is one page of a directory's entries. Next is the cursor of the
// following page, "" after the last.
type Page struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next,omitempty"`
}

// List returns a page of dir's entries: directories first, then the rest,
// each by name (byte order); .git is never listed. limit <= 0 means
// DefaultListLimit; it is capped at MaxListLimit. The cursor is a
// position in that order, not an offset, so entries added or removed
// between pages shift nothing.
//
// Only the page's entries are stat'ed and matched against .gitignore: the
// directory is read once and sorted by the kinds its entries carry, so a
// 10,000-entry directory's first page costs little more than reading it.
func (w *Workspace) List(ctx context.Context, dir, cursor string, limit int) (Page, error) {
	n, err := name(dir)
	if err != nil {
		return Page{}, err
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)

	f, err := w.root.Open(n)
	if err != nil {
		return Page{}, pathErr(dir, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return Page{}, pathErr(dir, err)
	} else if !fi.IsDir() {
		return Page{}, fmt.Errorf("%w: %q", ErrNotDir, dir)
	}
	if w.viaGit(f) {
		return Page{}, fmt.Errorf("%w: %q leads into .git through a symlink", ErrOutside, dir)
	}
	des, err := readDirents(f)
	if err != nil {
		return Page{}, pathErr(dir, err)
	}
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	des = slices.DeleteFunc(des, func(de dirent) bool { return de.name == ".git" })
	slices.SortFunc(des, func(a, b dirent) int { return compareEntries(a.isDir(), a.name, b.isDir(), b.name) })

	start := 0
	if after.name != "" {
		start, _ = slices.BinarySearchFunc(des, after, func(de dirent, k position) int {
			return compareEntries(de.isDir(), de.name, k.dir, k.name)
		})
		if start < len(des) && des[start].isDir() == after.dir && des[start].name == after.name {
			start++
		}
	}
	end := min(start+limit, len(des))
	page := Page{Entries: make([]Entry, 0, max(0, end-start))}
	if end < len(des) {
		page.Next = encodeCursor(des[end-1])
	}
	if start >= end {
		return page, nil
	}

	rules, dirIgnored := w.rulesIn(n)
	for _, de := range des[start:end] {
		p := path.Join(n, de.name)
		e := Entry{Name: de.name, Path: p, Kind: kindOf(de.typ)}
		// An entry removed since it was read keeps its place with no size.
		if size, mtime, typ, err := statAt(f, de.name); err == nil {
			e.Size, e.ModTime, e.Kind = size, mtime, kindOf(typ)
		}
		e.Ignored = dirIgnored || rules.Ignored(p, de.isDir())
		page.Entries = append(page.Entries, e)
	}
	return page, nil
}

// rulesIn returns the .gitignore rules in force inside dir, and whether
// dir itself or a directory above it is excluded (then so is all it
// holds, as in git).
func (w *Workspace) rulesIn(dir string) (*ignore.Rules, bool) {
	r := ignore.New(w.root.FS(), ".")
	parent, excluded := ".", false
	for _, c := range ignore.Split(dir) {
		r.Enter(parent)
		parent = path.Join(parent, c)
		if !excluded && r.Ignored(parent, true) {
			excluded = true
		}
	}
	r.Enter(dir)
	return r, excluded
}

// position is a place in List's order: directories first, then the
// rest, each by name. Cursors encode one: "d/" or "f/" and the name.
type position struct {
	dir  bool
	name string
}

func compareEntries(aDir bool, a string, bDir bool, b string) int {
	if aDir != bDir {
		if aDir {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func encodeCursor(de dirent) string {
	k := "f/"
	if de.isDir() {
		k = "d/"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(k + de.name))
}

func decodeCursor(c string) (position, error) {
	if c == "" {
		return position{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	k := string(b)
	if err != nil || len(k) < 3 || (k[:2] != "d/" && k[:2] != "f/") || strings.ContainsAny(k[2:], "/\x00") {
		return position{}, fmt.Errorf("%w: %q is not a cursor List returned", ErrBadCursor, c)
	}
	return position{dir: k[0] == 'd', name: k[2:]}, nil
}

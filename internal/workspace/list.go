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
// directory is read once, and the page picked by the kinds its entries
// carry without sorting the rest, so a 10,000-entry directory's first
// page costs little more than reading it.
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

	f, err := w.openDir(dir, n)
	if err != nil {
		return Page{}, err
	}
	defer f.Close()
	des, err := readDirents(f)
	if err != nil {
		return Page{}, pathErr(dir, err)
	}
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	page, more := firstAfter(des, after, limit)
	out := Page{Entries: make([]Entry, 0, len(page))}
	if more {
		out.Next = encodeCursor(page[len(page)-1])
	}
	if len(page) == 0 {
		return out, nil
	}

	rules, dirIgnored := w.rulesIn(n)
	for _, de := range page {
		p := path.Join(n, de.name)
		e := Entry{Name: de.name, Path: p, Kind: kindOf(de.typ)}
		// An entry removed since it was read keeps its place with no size.
		if size, mtime, typ, err := statAt(f, de.name); err == nil {
			e.Size, e.ModTime, e.Kind = size, mtime, kindOf(typ)
		}
		e.Ignored = dirIgnored || rules.Ignored(p, de.isDir())
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

// firstAfter returns, in List's order, the first limit entries that come
// after the position (all of them when it is zero), .git left out, and
// whether more follow. It keeps the best limit entries in a max-heap
// rather than sorting the directory: O(n log limit), which for the first
// page of a 100,000-entry directory is well under the cost of the sort
// os.ReadDir does.
func firstAfter(des []dirent, after position, limit int) ([]dirent, bool) {
	less := func(a, b dirent) bool { return compareEntries(a.isDir(), a.name, b.isDir(), b.name) < 0 }
	h := make([]dirent, 0, limit)
	more := false
	for _, de := range des {
		if de.name == ".git" || (after.name != "" && compareEntries(de.isDir(), de.name, after.dir, after.name) <= 0) {
			continue
		}
		if len(h) < limit {
			h = append(h, de)
			siftUp(h, len(h)-1, less)
			continue
		}
		more = true
		if less(de, h[0]) { // better than the worst kept
			h[0] = de
			siftDown(h, 0, less)
		}
	}
	slices.SortFunc(h, func(a, b dirent) int { return compareEntries(a.isDir(), a.name, b.isDir(), b.name) })
	return h, more
}

// siftUp and siftDown keep h a max-heap under less.
func siftUp(h []dirent, i int, less func(a, b dirent) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []dirent, i int, less func(a, b dirent) bool) {
	for {
		l, big := 2*i+1, i
		if l < len(h) && less(h[big], h[l]) {
			big = l
		}
		if r := l + 1; r < len(h) && less(h[big], h[r]) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// rulesIn returns the .gitignore rules in force inside dir, and whether
// dir itself or a directory above it is excluded (then so is all it
// holds, as in git).
func (w *Workspace) rulesIn(dir string) (*ignore.Rules, bool) {
	r := ignore.New(ignore.RootFS(w.root), ".")
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

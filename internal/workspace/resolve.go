package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Ref is a file reference the server has checked: a path the agent
// mentioned that exists inside the workspace.
type Ref struct {
	// Path is clean and relative to the workspace.
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Line and Column are 1-based; 0 when the mention gave none.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// Resolve checks a path mentioned in the agent's text — relative, "./"
// relative, or absolute inside the workspace, optionally followed by
// ":line", ":line:column" or "#Lline" — and returns where it points, when
// it exists inside the workspace. A path that leaves the workspace gives
// ErrOutside, one that does not exist ErrNotFound: the UI shows both as
// plain text. The line is not checked against the file's length.
func (w *Workspace) Resolve(mention string) (Ref, error) {
	mention = strings.TrimSpace(mention)
	p, line, col := splitPosition(mention)
	ref, err := w.resolvePath(p)
	if err != nil && p != mention {
		// A name that itself ends in ":12" is rare but legal.
		if whole, werr := w.resolvePath(mention); werr == nil {
			return whole, nil
		}
	}
	if err != nil {
		return Ref{}, err
	}
	ref.Line, ref.Column = line, col
	return ref, nil
}

func (w *Workspace) resolvePath(p string) (Ref, error) {
	if filepath.IsAbs(p) {
		abs := filepath.Clean(p)
		rel, ok := relWithin(w.dir, abs)
		if !ok {
			rel, ok = relWithin(w.real, abs)
		}
		if !ok {
			return Ref{}, fmt.Errorf("%w: %q", ErrOutside, p)
		}
		p = rel
	}
	n, err := name(strings.TrimPrefix(p, "./"))
	if err != nil {
		return Ref{}, err
	}
	fi, err := w.root.Stat(n)
	if err != nil {
		return Ref{}, pathErr(p, err)
	}
	if fi.Mode().IsRegular() || fi.IsDir() {
		// A link that spells a plain name may still lead into .git.
		f, err := w.root.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != nil {
			return Ref{}, pathErr(p, err)
		}
		inGit := w.viaGit(f)
		f.Close()
		if inGit {
			return Ref{}, fmt.Errorf("%w: %q leads into .git through a symlink", ErrOutside, p)
		}
	}
	return Ref{Path: n, Kind: kindOf(fi.Mode())}, nil
}

// splitPosition splits "a.go:12:3", "a.go:12" and "a.go#L12" into the path
// and the position.
func splitPosition(s string) (p string, line, col int) {
	if i := strings.LastIndex(s, "#L"); i > 0 {
		if n, err := strconv.Atoi(s[i+2:]); err == nil && n > 0 {
			return s[:i], n, 0
		}
	}
	nums := []int{}
	for range 2 {
		i := strings.LastIndexByte(s, ':')
		if i <= 0 {
			break
		}
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n <= 0 {
			break
		}
		nums = append([]int{n}, nums...)
		s = s[:i]
	}
	switch len(nums) {
	case 1:
		return s, nums[0], 0
	case 2:
		return s, nums[0], nums[1]
	}
	return s, 0, 0
}

// relWithin returns p relative to base, slash-separated, when p is base or
// below it; both clean and absolute.
func relWithin(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

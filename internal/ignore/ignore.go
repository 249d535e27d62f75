// Package ignore applies a tree's .gitignore files the way git does, for
// code that walks a workspace itself (the agent's grep, glob and list_dir
// tools; the Files panel's listing and search). It reads the files through
// an fs.FS, typically an os.Root's, so it never looks outside the tree.
package ignore

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

const (
	// FileName is read in every directory a walk enters.
	FileName = ".gitignore"
	// fileMax bounds how much of one .gitignore is read; real ones are a
	// few KiB.
	fileMax = 1 << 20
)

// Rules are the .gitignore patterns in force at one point of a walk: those
// of the directory being read and of every directory above it, up to the
// root. Each file's patterns apply below its own directory (git's
// nesting), and the last pattern that matches a path decides, so a deeper
// file or a later "!pattern" can re-include what an earlier one excluded.
// A walk does not enter an excluded directory, which gives git's rule that
// nothing below an excluded directory can be re-included.
type Rules struct {
	fsys     fs.FS
	patterns []gitignore.Pattern
}

// New loads the .gitignore files of the directories above dir (a clean,
// slash-separated name relative to fsys's root; "." is the root), so a
// walk that starts below the root obeys them too. dir's own file is loaded
// by the walk when it enters dir.
func New(fsys fs.FS, dir string) *Rules {
	r := &Rules{fsys: fsys}
	if dir == "." {
		return r
	}
	r.Enter(".")
	parts := Split(dir)
	for i := 1; i < len(parts); i++ {
		r.Enter(path.Join(parts[:i]...))
	}
	return r
}

// Enter adds the patterns of dir's .gitignore, if it has one, and returns
// the mark to leave dir with. An unreadable or missing file adds nothing:
// git ignores those too.
func (r *Rules) Enter(dir string) (mark int) {
	mark = len(r.patterns)
	f, err := r.fsys.Open(path.Join(dir, FileName))
	if err != nil {
		return mark
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return mark
	}
	var domain []string
	if dir != "." {
		domain = Split(dir)
	}
	sc := bufio.NewScanner(io.LimitReader(f, fileMax))
	sc.Buffer(make([]byte, 0, 4096), fileMax)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		// Comments and blank lines are the caller's to drop (as go-git's
		// own reader does); a pattern may begin with "\#" to match "#".
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		r.patterns = append(r.patterns, gitignore.ParsePattern(line, domain))
	}
	return mark
}

// RootFS is the fs.FS Rules should read a workspace through: root's, but
// opening without blocking, so a FIFO named .gitignore (the agent can make
// one) is seen for what it is and skipped instead of hanging the walk.
func RootFS(root *os.Root) fs.FS { return nonblockFS{root} }

type nonblockFS struct{ root *os.Root }

func (n nonblockFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return n.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// Leave drops the patterns added since mark.
func (r *Rules) Leave(mark int) { r.patterns = r.patterns[:mark] }

// Ignored reports whether name (clean, slash-separated, relative to the
// root) is excluded by the patterns in force.
func (r *Rules) Ignored(name string, isDir bool) bool {
	if len(r.patterns) == 0 {
		return false
	}
	return gitignore.NewMatcher(r.patterns).Match(Split(name), isDir)
}

// Split splits a slash-separated name into its components.
func Split(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool { return r == '/' })
}

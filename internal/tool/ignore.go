package tool

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

const (
	// ignoreFileName is read in every directory a walk enters.
	ignoreFileName = ".gitignore"
	// ignoreFileMax bounds how much of one .gitignore is read; real ones
	// are a few KiB.
	ignoreFileMax = 1 << 20
	// ignoredExamples is how many hidden names a result quotes, enough for
	// the model to see what kind of thing was skipped.
	ignoredExamples = 3
)

// ignoreRules are the .gitignore patterns in force at one point of a walk:
// those of the directory being read and of every directory above it, up to
// the workspace root. Each file's patterns apply below its own directory
// (git's nesting), and the last pattern that matches a path decides, so a
// deeper file or a later "!pattern" can re-include what an earlier one
// excluded. A walk does not enter an excluded directory, which gives git's
// rule that nothing below an excluded directory can be re-included.
type ignoreRules struct {
	ws       *workspaceFS
	patterns []gitignore.Pattern
}

// newIgnoreRules loads the .gitignore files of the directories above dir
// (a resolved name), so a walk that starts below the root obeys them too.
// dir's own file is loaded by the walk when it enters dir.
func newIgnoreRules(ws *workspaceFS, dir string) *ignoreRules {
	r := &ignoreRules{ws: ws}
	if dir == "." {
		return r
	}
	r.enter(".")
	parts := splitName(dir)
	for i := 1; i < len(parts); i++ {
		r.enter(path.Join(parts[:i]...))
	}
	return r
}

// enter adds the patterns of dir's .gitignore, if it has one, and returns
// the mark to leave dir with. An unreadable or missing file adds nothing:
// git ignores those too.
func (r *ignoreRules) enter(dir string) (mark int) {
	mark = len(r.patterns)
	f, err := r.ws.root.Open(path.Join(dir, ignoreFileName))
	if err != nil {
		return mark
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return mark
	}
	var domain []string
	if dir != "." {
		domain = splitName(dir)
	}
	sc := bufio.NewScanner(io.LimitReader(f, ignoreFileMax))
	sc.Buffer(make([]byte, 0, 4096), ignoreFileMax)
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

// leave drops the patterns added since mark.
func (r *ignoreRules) leave(mark int) { r.patterns = r.patterns[:mark] }

// ignored reports whether the file name (resolved, relative to the root)
// is excluded.
func (r *ignoreRules) ignored(name string, isDir bool) bool {
	if len(r.patterns) == 0 {
		return false
	}
	return gitignore.NewMatcher(r.patterns).Match(splitName(name), isDir)
}

// hiddenCount counts what ignore rules hid from a result and keeps a few
// names to quote.
type hiddenCount struct {
	n        int
	examples []string
}

func (h *hiddenCount) add(rel string, isDir bool) {
	h.n++
	if len(h.examples) < ignoredExamples {
		if isDir {
			rel += "/"
		}
		h.examples = append(h.examples, rel)
	}
}

// note tells the model what was hidden and how to see it, or "" when
// nothing was.
func (h hiddenCount) note() string {
	if h.n == 0 {
		return ""
	}
	ex := strings.Join(h.examples, ", ")
	if h.n > len(h.examples) {
		ex += ", …"
	}
	what := "1 entry"
	if h.n != 1 {
		what = fmt.Sprintf("%d entries", h.n)
	}
	return "[" + what + " ignored by .gitignore not shown (" + ex + "); set include_ignored to include them]"
}

// ignoredLabel marks the label of a call that includes ignored files.
func ignoredLabel(include bool) string {
	if include {
		return " (incl. ignored)"
	}
	return ""
}

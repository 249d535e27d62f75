package tool

import (
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/ignore"
)

// ignoredExamples is how many hidden names a result quotes, enough for the
// model to see what kind of thing was skipped.
const ignoredExamples = 3

// newIgnoreRules loads the .gitignore rules in force above dir (a resolved
// name); the rules themselves live in package ignore, shared with the
// Files panel.
func newIgnoreRules(ws *workspaceFS, dir string) *ignore.Rules {
	return ignore.New(ignore.RootFS(ws.root), dir)
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

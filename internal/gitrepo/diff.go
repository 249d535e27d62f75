package gitrepo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// FileDiff is one file's part of a diff.
type FileDiff struct {
	Path string `json:"path"`
	// OldPath is a rename's source.
	OldPath string `json:"old_path,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Binary files have no line counts and a patch that says so.
	Binary bool `json:"binary"`
	// Patch is the file's unified diff, from its "diff --git" line.
	Patch string `json:"patch"`
}

// Diff is a set of file diffs with their totals.
type Diff struct {
	Files   []FileDiff `json:"files"`
	Added   int        `json:"added"`
	Removed int        `json:"removed"`
}

// Diff returns the unstaged changes (work tree against index) or, with
// staged, the staged ones (index against HEAD, or against nothing before
// the first commit), optionally for one path only. Untracked files are in
// Status, not here. External diff drivers and textconv are never run.
func (r *Repo) Diff(ctx context.Context, staged bool, path string) (Diff, error) {
	common := []string{"--no-color", "--no-ext-diff", "--no-textconv", "--find-renames",
		"--ignore-submodules=dirty", "--no-relative"}
	if staged {
		common = append(common, "--cached")
	}
	var tail []string
	if path != "" {
		p, err := r.cleanPath(path)
		if err != nil {
			return Diff{}, err
		}
		tail = []string{"--", p}
	}
	stat, err := r.run(ctx, runOpts{}, append(append([]string{"diff", "--numstat", "-z"}, common...), tail...)...)
	if err != nil {
		return Diff{}, err
	}
	patch, err := r.run(ctx, runOpts{}, append(append([]string{"diff", "--patch", "--src-prefix=a/", "--dst-prefix=b/"}, common...), tail...)...)
	if err != nil {
		return Diff{}, err
	}
	d, err := parseNumstat(stat)
	if err != nil {
		return Diff{}, err
	}
	// The two runs list files in the same order; when a file changed in
	// between they may not agree, and the patches are then left out rather
	// than given to the wrong file.
	if parts := splitPatch(string(patch)); len(parts) == len(d.Files) {
		for i := range parts {
			d.Files[i].Patch = parts[i]
		}
	}
	return d, nil
}

// parseNumstat reads `git diff --numstat -z`: "added\tremoved\tpath\0",
// or for a rename "added\tremoved\t\0old\0new\0"; "-" counts for binary.
func parseNumstat(out []byte) (Diff, error) {
	d := Diff{Files: []FileDiff{}}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		if recs[i] == "" {
			continue
		}
		f := strings.SplitN(recs[i], "\t", 3)
		if len(f) != 3 {
			return Diff{}, fmt.Errorf("gitrepo: unexpected numstat record %q", recs[i])
		}
		fd := FileDiff{Path: f[2]}
		if f[2] == "" { // a rename: the paths follow
			if i+2 >= len(recs) {
				return Diff{}, fmt.Errorf("gitrepo: truncated numstat rename")
			}
			fd.OldPath, fd.Path = recs[i+1], recs[i+2]
			i += 2
		}
		if f[0] == "-" && f[1] == "-" {
			fd.Binary = true
		} else {
			var err1, err2 error
			fd.Added, err1 = strconv.Atoi(f[0])
			fd.Removed, err2 = strconv.Atoi(f[1])
			if err1 != nil || err2 != nil {
				return Diff{}, fmt.Errorf("gitrepo: unexpected numstat counts %q", recs[i])
			}
		}
		d.Added += fd.Added
		d.Removed += fd.Removed
		d.Files = append(d.Files, fd)
	}
	return d, nil
}

// splitPatch cuts a multi-file patch at its "diff --git " lines. A line of
// content cannot start that way: content lines start with " ", "+", "-"
// or "\".
func splitPatch(p string) []string {
	var parts []string
	for p != "" {
		next := strings.Index(p[1:], "\ndiff --git ")
		if next < 0 {
			parts = append(parts, p)
			break
		}
		parts = append(parts, p[:next+2])
		p = p[next+2:]
	}
	return parts
}

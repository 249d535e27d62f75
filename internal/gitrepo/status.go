package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Head is where the work tree stands.
type Head struct {
	// Branch is the current branch's short name; "" when detached.
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached"`
	// Commit is HEAD's full hash; "" on a branch with no commits yet.
	Commit string `json:"commit,omitempty"`
}

// Head returns the current branch and commit.
func (r *Repo) Head(ctx context.Context) (Head, error) {
	var h Head
	out, err := r.run(ctx, runOpts{noFilters: true}, "symbolic-ref", "-q", "--short", "HEAD")
	var ge *GitError
	switch {
	case err == nil:
		h.Branch = strings.TrimSpace(string(out))
	case errors.As(err, &ge) && ge.ExitCode == 1:
		h.Detached = true
	default:
		return Head{}, err
	}
	out, err = r.run(ctx, runOpts{noFilters: true}, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	switch {
	case err == nil:
		h.Commit = strings.TrimSpace(string(out))
	case errors.As(err, &ge) && ge.ExitCode == 1: // unborn
	default:
		return Head{}, err
	}
	return h, nil
}

// Change is one path's change on one side (index or work tree).
type Change struct {
	Path string `json:"path"`
	// OrigPath is the source of a rename or copy.
	OrigPath string `json:"orig_path,omitempty"`
	// Kind is modified, added, deleted, renamed, copied or type_changed;
	// for a conflict, both_modified, both_added, both_deleted,
	// added_by_us, added_by_them, deleted_by_us or deleted_by_them.
	Kind string `json:"kind"`
}

// Status is the work tree's state as the Git panel shows it.
type Status struct {
	Head
	// Upstream is the current branch's upstream ("" when none); Ahead
	// and Behind count commits against it.
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead"`
	Behind   int    `json:"behind"`
	// Staged are changes in the index, Unstaged in the work tree.
	Staged   []Change `json:"staged"`
	Unstaged []Change `json:"unstaged"`
	// Untracked are paths git does not know (a directory of them once,
	// with a trailing slash); ignored files are not listed.
	Untracked  []string `json:"untracked"`
	Conflicted []Change `json:"conflicted"`
}

// Status returns the branch, its distance to its upstream and every
// changed path. Submodules count as changed only when their commit
// differs.
func (r *Repo) Status(ctx context.Context) (Status, error) {
	out, err := r.run(ctx, runOpts{}, "status", "--porcelain=v2", "-z", "--branch",
		"--untracked-files=normal", "--ignore-submodules=dirty", "--find-renames")
	if err != nil {
		return Status{}, err
	}
	return parseStatus(out)
}

var changeKinds = map[byte]string{
	'M': "modified", 'T': "type_changed", 'A': "added", 'D': "deleted", 'R': "renamed", 'C': "copied",
}

var conflictKinds = map[string]string{
	"DD": "both_deleted", "AU": "added_by_us", "UD": "deleted_by_them", "UA": "added_by_them",
	"DU": "deleted_by_us", "AA": "both_added", "UU": "both_modified",
}

// parseStatus reads `git status --porcelain=v2 -z --branch`. Fields are
// separated by single spaces up to the path, which is the rest of the
// record (it may hold spaces, newlines, anything but NUL); a rename's
// source is the next record.
func parseStatus(out []byte) (Status, error) {
	st := Status{Staged: []Change{}, Unstaged: []Change{}, Untracked: []string{}, Conflicted: []Change{}}
	recs := strings.Split(string(out), "\x00")
	bad := func(rec string) error { return fmt.Errorf("gitrepo: unexpected status record %q", rec) }
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			k, v, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
			switch k {
			case "branch.oid":
				if v != "(initial)" {
					st.Commit = v
				}
			case "branch.head":
				if v == "(detached)" {
					st.Detached = true
				} else {
					st.Branch = v
				}
			case "branch.upstream":
				st.Upstream = v
			case "branch.ab":
				a, b, _ := strings.Cut(v, " ")
				st.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
				st.Behind, _ = strconv.Atoi(strings.TrimPrefix(b, "-"))
			}
		case '1', '2':
			nf := 9 // "1 XY sub mH mI mW hH hI path"
			if rec[0] == '2' {
				nf = 10 // "... Xscore path", then the source
			}
			f := strings.SplitN(rec, " ", nf)
			if len(f) != nf || len(f[1]) != 2 {
				return Status{}, bad(rec)
			}
			c := Change{Path: f[nf-1]}
			if rec[0] == '2' {
				if i+1 >= len(recs) || recs[i+1] == "" {
					return Status{}, bad(rec)
				}
				i++
				c.OrigPath = recs[i]
			}
			if x := f[1][0]; x != '.' {
				s := c
				s.Kind = changeKinds[x]
				st.Staged = append(st.Staged, s)
			}
			if y := f[1][1]; y != '.' {
				u := Change{Path: c.Path, Kind: changeKinds[y]}
				if y == 'R' || y == 'C' {
					u.OrigPath = c.OrigPath
				}
				st.Unstaged = append(st.Unstaged, u)
			}
		case 'u':
			f := strings.SplitN(rec, " ", 11) // "u XY sub m1 m2 m3 mW h1 h2 h3 path"
			if len(f) != 11 {
				return Status{}, bad(rec)
			}
			st.Conflicted = append(st.Conflicted, Change{Path: f[10], Kind: conflictKinds[f[1]]})
		case '?':
			st.Untracked = append(st.Untracked, strings.TrimPrefix(rec, "? "))
		case '!':
		default:
			return Status{}, bad(rec)
		}
	}
	return st, nil
}

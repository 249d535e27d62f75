package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Branch is a local branch.
type Branch struct {
	Name     string `json:"name"`
	Commit   string `json:"commit"`
	Current  bool   `json:"current"`
	Upstream string `json:"upstream,omitempty"`
}

// Branches lists the local branches by name.
func (r *Repo) Branches(ctx context.Context) ([]Branch, error) {
	out, err := r.run(ctx, runOpts{noFilters: true}, "for-each-ref",
		"--format=%(HEAD)%00%(refname)%00%(objectname)%00%(upstream:short)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	bs := []Branch{}
	// Ref names hold no newline, so records are lines.
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\x00")
		if len(f) != 4 {
			return nil, fmt.Errorf("gitrepo: unexpected branch record %q", line)
		}
		bs = append(bs, Branch{Name: strings.TrimPrefix(f[1], "refs/heads/"), Commit: f[2], Current: f[0] == "*", Upstream: f[3]})
	}
	return bs, nil
}

// Switch checks out an existing local branch. git's refusal to overwrite
// changes in the work tree (tracked or untracked) becomes
// ErrWouldOverwrite, with nothing changed; changes that do not collide
// are carried over, as git does.
func (r *Repo) Switch(ctx context.Context, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("%w: %q", ErrInvalidBranch, branch)
	}
	if _, err := r.run(ctx, runOpts{noFilters: true}, "check-ref-format", "refs/heads/"+branch); err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return fmt.Errorf("%w: %q", ErrInvalidBranch, branch)
		}
		return err
	}
	if _, err := r.run(ctx, runOpts{noFilters: true}, "show-ref", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return fmt.Errorf("%w: %q", ErrNoBranch, branch)
		}
		return err
	}
	_, err := r.run(ctx, runOpts{}, "switch", "--no-guess", "--quiet", branch)
	var ge *GitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ge):
		return err
	case strings.Contains(ge.Stderr, "would be overwritten by checkout"):
		return fmt.Errorf("%w: %s", ErrWouldOverwrite, ge.Stderr)
	case strings.Contains(ge.Stderr, "resolve your current index first"),
		strings.Contains(ge.Stderr, "while merging"):
		return fmt.Errorf("%w: %s", ErrUnmerged, ge.Stderr)
	}
	return err
}

package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// cleanPath checks a path a person gave (relative to the work tree,
// slash-separated) and returns it clean. It must stay inside the
// repository by its spelling — no "..", not absolute, no NUL or
// backslash, nothing in .git — and by what it resolves to: a symlinked
// directory leading out is refused. It is passed after "--" with literal
// pathspecs, so ":(glob)*" or "-rf" are names, not magic or options.
func (r *Repo) cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrInvalidPath)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%w: the path contains a NUL byte", ErrInvalidPath)
	case strings.ContainsRune(p, '\\'):
		return "", fmt.Errorf("%w: %q contains a backslash", ErrInvalidPath, p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: %q is absolute", ErrOutside, p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			return "", fmt.Errorf("%w: %q has a .. segment", ErrOutside, p)
		case ".git":
			return "", fmt.Errorf("%w: %q is inside .git", ErrOutside, p)
		}
	}
	c := path.Clean(p)
	// The deepest existing directory above the path must resolve inside
	// the work tree (the path itself may be deleted, or a symlink, which
	// git records as a link).
	dir := filepath.Join(r.dir, filepath.FromSlash(path.Dir(c)))
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			if real != r.dir && !strings.HasPrefix(real, r.dir+string(filepath.Separator)) {
				return "", fmt.Errorf("%w: %q leads out of the repository through a symlink", ErrOutside, p)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || dir == r.dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	return c, nil
}

func (r *Repo) cleanPaths(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, ErrNoPaths
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		c, err := r.cleanPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Stage adds the paths' current state to the index: new and changed
// files, and deletions. "." is the whole work tree.
func (r *Repo) Stage(ctx context.Context, paths []string) error {
	ps, err := r.cleanPaths(paths)
	if err != nil {
		return err
	}
	_, err = r.run(ctx, runOpts{}, append([]string{"add", "--all", "--"}, ps...)...)
	return pathspecErr(err)
}

// Unstage takes the paths' staged changes out of the index, leaving the
// work tree alone; before the first commit it removes them from the index
// (there is no HEAD to restore them from).
func (r *Repo) Unstage(ctx context.Context, paths []string) error {
	ps, err := r.cleanPaths(paths)
	if err != nil {
		return err
	}
	h, err := r.Head(ctx)
	if err != nil {
		return err
	}
	args := []string{"restore", "--staged", "--"}
	if h.Commit == "" {
		args = []string{"rm", "--cached", "-r", "-f", "-q", "--ignore-unmatch", "--"}
	}
	_, err = r.run(ctx, runOpts{}, append(args, ps...)...)
	return pathspecErr(err)
}

func pathspecErr(err error) error {
	var ge *GitError
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "did not match any file") {
		return fmt.Errorf("%w: %s", ErrPathNotFound, ge.Stderr)
	}
	return err
}

// Commit records the index as a new commit by the named person (author
// and committer) and returns its hash. An empty message, an index with
// nothing staged and unresolved conflicts are refused with their errors.
// Hooks do not run (see the package comment).
func (r *Repo) Commit(ctx context.Context, message, name, email string) (string, error) {
	if strings.TrimSpace(message) == "" {
		return "", ErrEmptyMessage
	}
	if strings.ContainsRune(message, 0) {
		return "", fmt.Errorf("%w: the message contains a NUL byte", ErrEmptyMessage)
	}
	for _, v := range []string{name, email} {
		if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "<>\n\r\x00") {
			return "", fmt.Errorf("%w: a name and an email without <, > or line breaks are needed", ErrInvalidAuthor)
		}
	}
	st, err := r.Status(ctx)
	if err != nil {
		return "", err
	}
	if len(st.Conflicted) > 0 {
		return "", fmt.Errorf("%w: resolve and stage %s first", ErrUnmerged, st.Conflicted[0].Path)
	}
	if len(st.Staged) == 0 {
		return "", ErrNothingToCommit
	}
	env := []string{
		"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email,
	}
	_, err = r.run(ctx, runOpts{stdin: strings.NewReader(message), env: env},
		"commit", "--quiet", "--no-verify", "--cleanup=whitespace", "--file=-")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "nothing to commit") {
			return "", ErrNothingToCommit
		}
		return "", err
	}
	h, err := r.Head(ctx)
	if err != nil {
		return "", err
	}
	return h.Commit, nil
}

// Package gitrepo is the Git panel's view of a workspace that is a git
// repository: status, diffs, log, stage and unstage, commit, branches and
// switching, through the git binary.
//
// A person's click runs git in a directory the agent can write to, and
// the agent can write .git/hooks, .git/config and .gitattributes. So no
// call here may run anything the agent put there:
//   - hooks are off (-c core.hooksPath=/dev/null), and commits also pass
//     --no-verify: a pre-commit or post-checkout hook would otherwise run
//     the agent's code with the server's rights on a person's click;
//   - core.fsmonitor (a command git runs on status), commit and tag
//     signing (gpg.program), signature display, external diff drivers and
//     textconv are off, and every filter driver the repository configures
//     is emptied for the call (clean/smudge commands run on add, status,
//     diff and checkout). With filters off, git-lfs content is staged as
//     it is in the work tree;
//   - the environment is clean: no inherited GIT_* variable, no system or
//     global config (GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null),
//     no terminal prompt (GIT_TERMINAL_PROMPT=0), C locale so refusals
//     can be recognised, no optional locks, literal pathspecs;
//   - discovery stops at the workspace (GIT_CEILING_DIRECTORIES): a
//     workspace inside someone else's repository is not a repository;
//   - git is exec'd directly (never a shell) with --no-pager, in its own
//     process group killed when the call's context ends or its timeout
//     passes; its output is bounded.
//
// Output is read in the -z / porcelain v2 forms, so paths with spaces,
// quotes, newlines or any bytes come through unquoted and unchanged.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Errors, each with a stable code (its text).
var (
	ErrNotRepo           = errors.New("not_a_git_repository")
	ErrInvalidPath       = errors.New("invalid_path")
	ErrOutside           = errors.New("path_outside_repository")
	ErrNoPaths           = errors.New("no_paths")
	ErrPathNotFound      = errors.New("path_not_found")
	ErrEmptyMessage      = errors.New("empty_commit_message")
	ErrNothingToCommit   = errors.New("nothing_to_commit")
	ErrInvalidAuthor     = errors.New("invalid_author")
	ErrUnmerged          = errors.New("unmerged_paths")
	ErrInvalidBranch     = errors.New("invalid_branch_name")
	ErrNoBranch          = errors.New("no_such_branch")
	ErrWouldOverwrite    = errors.New("local_changes_would_be_overwritten")
	ErrBadCursor         = errors.New("invalid_cursor")
	ErrTimeout           = errors.New("git_timeout")
	ErrOutputTooLarge    = errors.New("git_output_too_large")
	ErrGit               = errors.New("git_failed")
	errorsWithStableCode = []error{ErrNotRepo, ErrInvalidPath, ErrOutside, ErrNoPaths, ErrPathNotFound,
		ErrEmptyMessage, ErrNothingToCommit, ErrInvalidAuthor, ErrUnmerged, ErrInvalidBranch, ErrNoBranch,
		ErrWouldOverwrite, ErrBadCursor, ErrTimeout, ErrOutputTooLarge, ErrGit}
)

// Code returns the stable code of err, or "".
func Code(err error) string {
	for _, c := range errorsWithStableCode {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return ""
}

// GitError is git refusing or failing in a way this package has no more
// precise error for. Stderr is git's message, trimmed and bounded.
type GitError struct {
	Args     []string // the subcommand and its arguments
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	return fmt.Sprintf("%s: git %s: exit %d: %s", ErrGit, strings.Join(e.Args, " "), e.ExitCode, e.Stderr)
}

func (e *GitError) Unwrap() error { return ErrGit }

// Options tune a Repo; the zero value is usable.
type Options struct {
	// Git is the git binary (default "git", found in PATH).
	Git string
	// Timeout bounds every git process (default 15 s).
	Timeout time.Duration
	// MaxOutput bounds what one git process may print (default 32 MiB).
	MaxOutput int
}

// Repo is a workspace that is a git repository's work tree.
type Repo struct {
	dir  string // the workspace, symlinks resolved: the work tree's top
	opts Options
}

// Open reports whether dir is the top of a git work tree; ErrNotRepo when
// it is not (a plain directory, a directory inside another repository, a
// bare repository).
func Open(ctx context.Context, dir string, opts Options) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: %w", err)
	}
	if opts.Git == "" {
		opts.Git = "git"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 32 << 20
	}
	r := &Repo{dir: real, opts: opts}
	out, err := r.run(ctx, runOpts{noFilters: true}, "rev-parse", "--is-inside-work-tree", "--show-toplevel")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "not a git repository") || strings.Contains(ge.Stderr, "must be run in a work tree")) {
			return nil, fmt.Errorf("%w: %s", ErrNotRepo, abs)
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "true" {
		return nil, fmt.Errorf("%w: %s (inside a .git directory)", ErrNotRepo, abs)
	}
	if top, err := filepath.EvalSymlinks(lines[1]); err != nil || top != real {
		return nil, fmt.Errorf("%w: %s is not the top of its work tree", ErrNotRepo, abs)
	}
	return r, nil
}

// Dir is the repository's work tree.
func (r *Repo) Dir() string { return r.dir }

// safetyConfig is passed to every git call; see the package comment.
var safetyConfig = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"log.showSignature=false",
	"submodule.recurse=false",
	"core.quotePath=false",
}

type runOpts struct {
	stdin io.Reader
	env   []string // added to the clean environment
	// noFilters skips looking up filter drivers, for calls that run none
	// (rev-parse, config).
	noFilters bool
}

// run runs git with args in the work tree and returns its stdout.
func (r *Repo) run(ctx context.Context, o runOpts, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	pre := []string{"--no-pager", "-c", "safe.directory=" + r.dir}
	for _, c := range safetyConfig {
		pre = append(pre, "-c", c)
	}
	if !o.noFilters {
		off, err := r.filtersOff(ctx)
		if err != nil {
			return nil, err
		}
		pre = append(pre, off...)
	}
	cmd := exec.CommandContext(ctx, r.opts.Git, append(pre, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(r.env(), o.env...)
	cmd.Stdin = o.stdin
	stdout := &boundedBuffer{max: r.opts.MaxOutput}
	stderr := &boundedBuffer{max: 16 << 10, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: git %s did not finish within %s", ErrTimeout, args[0], r.opts.Timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case stdout.over:
		return nil, fmt.Errorf("%w: git %s printed more than %d bytes", ErrOutputTooLarge, args[0], r.opts.MaxOutput)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	if err != nil {
		return nil, fmt.Errorf("gitrepo: git %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// env is the clean environment every git call gets.
func (r *Repo) env() []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(r.dir),
		"LC_ALL=C",
		"LANG=C",
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// filtersOff returns the -c options that empty every filter driver the
// repository's config names. It is looked up on every call: the agent may
// add one at any time.
func (r *Repo) filtersOff(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, runOpts{noFilters: true}, "config", "-z", "--get-regexp", `^filter\.`)
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 { // no such keys
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var off []string
	seen := map[string]bool{}
	for _, rec := range strings.Split(string(out), "\x00") {
		key, _, _ := strings.Cut(rec, "\n")
		// filter.<driver>.<var>; the driver name may itself hold dots.
		i := strings.LastIndexByte(key, '.')
		if i <= len("filter.") {
			continue
		}
		driver := key[len("filter."):i]
		if seen[driver] {
			continue
		}
		seen[driver] = true
		for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
			off = append(off, "-c", "filter."+driver+"."+v)
		}
	}
	return off, nil
}

// boundedBuffer keeps at most max bytes; past it, it fails the write (so
// git sees a closed pipe and stops) or, with truncate, drops the rest. It
// does not embed bytes.Buffer: io.Copy would use the embedded ReadFrom
// and bypass the bound.
type boundedBuffer struct {
	buf      bytes.Buffer
	max      int
	truncate bool
	over     bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		if b.truncate {
			return len(p), nil
		}
		b.over = true
		return 0, errors.New("output limit reached")
	}
	return b.buf.Write(p)
}

func (b *boundedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *boundedBuffer) String() string { return b.buf.String() }

package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// gitRepo runs git against one shadow repository with the workspace as its
// work tree. Every call is a fresh process with a bounded lifetime and an
// environment built from nothing, so nothing of the server's environment or
// of the user's git configuration (hooks, filters, credential helpers,
// fsmonitor daemons, a core.excludesFile) takes part.
type gitRepo struct {
	bin     string
	gitDir  string
	ws      string
	timeout time.Duration
	env     []string
}

// committer is the identity of every checkpoint commit; the address is in
// the reserved .invalid domain so it can never reach anyone.
const (
	committerName  = "Caduceus"
	committerEmail = "checkpoints@caduceus.invalid"
)

func newGitRepo(bin, gitDir, ws string, timeout time.Duration) *gitRepo {
	env := []string{
		"GIT_DIR=" + gitDir,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=" + committerName,
		"GIT_AUTHOR_EMAIL=" + committerEmail,
		"GIT_COMMITTER_NAME=" + committerName,
		"GIT_COMMITTER_EMAIL=" + committerEmail,
		// HOME and XDG_CONFIG_HOME point into the shadow repository so no
		// ~/.gitconfig or ~/.config/git/{config,ignore,attributes} is read
		// even by a git that predates GIT_CONFIG_GLOBAL for some file.
		"HOME=" + gitDir,
		"XDG_CONFIG_HOME=" + gitDir,
		"LC_ALL=C",
	}
	// git finds its helpers (git-upload-pack etc. are not used, but gc runs
	// git-repack through PATH on some builds) on PATH.
	// git init refuses a work tree; every other call has one.
	if ws != "" {
		env = append(env, "GIT_WORK_TREE="+ws)
	}
	if p, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+p)
	}
	return &gitRepo{bin: bin, gitDir: gitDir, ws: ws, timeout: timeout, env: env}
}

// configArgs come before every subcommand: they win over the repository's
// own config, so a repository edited by hand still runs no hooks and never
// collects garbage on its own (Prune does, under the workspace lock).
var configArgs = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "core.fsmonitor=false",
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.quotePath=false",
	"-c", "commit.gpgSign=false",
}

// run executes git with args in the workspace and returns its stdout. A
// failure carries git's stderr, which names paths of the workspace but
// never a secret of the server: the environment holds none.
func (g *gitRepo) run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := g.runTo(ctx, stdin, &out, nil, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// runTo is run with the stdout given; extraEnv is added to the environment.
func (g *gitRepo) runTo(ctx context.Context, stdin io.Reader, stdout io.Writer, extraEnv []string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	full := make([]string, 0, len(configArgs)+len(args))
	full = append(full, configArgs...)
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, g.bin, full...)
	cmd.Dir = g.ws
	// A git outlives a process killed mid-checkpoint and keeps writing in
	// the shadow repository; it dies with its parent instead.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(g.env[:len(g.env):len(g.env)], extraEnv...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	// A git killed at the deadline may leave a child (pack-objects under
	// gc) holding the pipes; stop waiting for them soon after.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			// git was killed (a cancelled run, the timeout): the lock
			// files it held are ours (the caller holds the workspace's
			// lock, in memory and as an flock) and would stop
			// every later call of this workspace.
			g.removeLocks()
			return fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// limitedBuffer keeps the first max bytes written and drops the rest, so a
// chatty failure cannot grow memory without bound.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// lockFiles are the lock files a git call here can hold.
var lockFiles = []string{"index.lock", "packed-refs.lock", "refs/caduceus/latest.lock"}

func (g *gitRepo) removeLocks() {
	for _, name := range lockFiles {
		_ = os.Remove(filepath.Join(g.gitDir, name))
	}
}

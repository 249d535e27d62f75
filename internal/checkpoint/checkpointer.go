package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configure a Checkpointer.
type Options struct {
	// Dir holds one shadow repository per workspace (the server passes
	// <data-dir>/checkpoints). It must be on the host whose workspaces it
	// records: see the package doc.
	Dir string
	// Git is the git binary; "" finds "git" on PATH.
	Git string
	// Timeout bounds every git call; 0 means two minutes (a first
	// checkpoint of a large workspace hashes every file).
	Timeout time.Duration
	// MaxDiffBytes caps the unified diff kept per file by Changes; 0 means
	// 256 KiB.
	MaxDiffBytes int
	// Exclude lists directories never checkpointed when a workspace
	// contains them (the server passes its data dir: a workspace that is
	// the home directory holds it). Dir itself is always excluded, or
	// every checkpoint would hold the ones before it.
	Exclude []string
	Logger  *slog.Logger
}

// Checkpointer records, compares and restores checkpoints of workspaces.
// It is safe for concurrent use; calls on one workspace are serialised by a
// per-workspace lock, calls on different workspaces run in parallel.
type Checkpointer struct {
	dir          string
	git          string
	timeout      time.Duration
	maxDiffBytes int
	exclude      []string // absolute, symlinks resolved
	log          *slog.Logger

	mu    sync.Mutex
	locks map[string]chan struct{} // shadow repository dir → a one-slot semaphore
}

// New checks that git runs and that Dir can be created.
func New(opts Options) (*Checkpointer, error) {
	if opts.Dir == "" {
		return nil, errors.New("checkpoint: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	bin := opts.Git
	if bin == "" {
		bin = "git"
	}
	if bin, err = exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("checkpoint: the git binary is required: %w", err)
	}
	c := &Checkpointer{
		dir: dir, git: bin, timeout: opts.Timeout, maxDiffBytes: opts.MaxDiffBytes,
		log: opts.Logger, locks: make(map[string]chan struct{}),
	}
	if c.timeout <= 0 {
		c.timeout = 2 * time.Minute
	}
	if c.maxDiffBytes <= 0 {
		c.maxDiffBytes = 256 << 10
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range append([]string{dir}, opts.Exclude...) {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: exclude %s: %w", d, err)
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		c.exclude = append(c.exclude, abs)
	}
	return c, nil
}

// workspace is one workspace resolved to its shadow repository.
type workspace struct {
	path     string // absolute, symlinks resolved
	git      *gitRepo
	excluded []string // directories inside it never checkpointed, '/'-separated
}

// RepoDir returns the shadow repository of the workspace at ws: Dir/<first
// 16 bytes of sha256 of the workspace's absolute path, symlinks resolved>.
// Resolving symlinks makes two spellings of one directory share a history.
func (c *Checkpointer) RepoDir(ws string) (string, error) {
	abs, err := resolveWorkspace(ws)
	if err != nil {
		return "", err
	}
	return c.repoDir(abs), nil
}

func (c *Checkpointer) repoDir(abs string) string {
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".git")
}

func resolveWorkspace(ws string) (string, error) {
	if ws == "" {
		return "", refuse(CodeBadWorkspace, "no workspace given")
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", refuse(CodeBadWorkspace, err.Error())
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", refuse(CodeBadWorkspace, "workspace "+ws+" does not exist")
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", refuse(CodeBadWorkspace, "workspace "+ws+" is not a directory")
	}
	return abs, nil
}

// open resolves ws, takes its lock (honouring ctx) and makes sure its
// shadow repository exists. The caller must call the returned unlock.
func (c *Checkpointer) open(ctx context.Context, ws string) (*workspace, func(), error) {
	abs, err := resolveWorkspace(ws)
	if err != nil {
		return nil, nil, err
	}
	gitDir := c.repoDir(abs)
	unlock, err := c.lock(ctx, gitDir)
	if err != nil {
		return nil, nil, err
	}
	w := &workspace{path: abs, git: newGitRepo(c.git, gitDir, abs, c.timeout)}
	if err := c.ensureRepo(ctx, w); err != nil {
		unlock()
		return nil, nil, err
	}
	c.clearStaleLocks(gitDir)
	if err := c.writeExcludes(ctx, w); err != nil {
		unlock()
		return nil, nil, err
	}
	return w, unlock, nil
}

// writeExcludes records which excluded directories lie inside this
// workspace; stageWorkTree names them as excluded pathspecs, which no
// .gitignore of the workspace can undo (an info/exclude entry could be
// negated by one). When the list changes, what the index already tracks
// under them is dropped from it: git keeps a file it has once added.
func (c *Checkpointer) writeExcludes(ctx context.Context, w *workspace) error {
	var rels []string
	for _, d := range c.exclude {
		rel, err := filepath.Rel(w.path, d)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	w.excluded = rels
	want := strings.Join(rels, "\x00")
	p := filepath.Join(w.git.gitDir, "caduceus-excluded")
	have, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if string(have) == want {
		return nil
	}
	if len(rels) > 0 {
		args := append([]string{"rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--"}, rels...)
		if err := w.git.runTo(ctx, nil, io.Discard, []string{"GIT_LITERAL_PATHSPECS=1"}, args...); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// clearStaleLocks removes lock files left by a git killed with its process
// (a crash or a restart mid-checkpoint; a git killed by its context is
// cleaned up after at once): while one exists every later call that needs
// it fails. It removes those older than the timeout of a git call:
// no git call of a Checkpointer lives that long, so whoever made the file
// is gone. A younger one is left alone and the call fails with git's own
// message.
func (c *Checkpointer) clearStaleLocks(gitDir string) {
	for _, name := range lockFiles {
		p := filepath.Join(gitDir, name)
		fi, err := os.Lstat(p)
		if err != nil || time.Since(fi.ModTime()) <= c.timeout {
			continue
		}
		if err := os.Remove(p); err == nil {
			c.log.Warn("checkpoint: removed a stale git lock", "file", p, "age", time.Since(fi.ModTime()).Round(time.Second))
		}
	}
}

func (c *Checkpointer) lock(ctx context.Context, key string) (func(), error) {
	c.mu.Lock()
	sem, ok := c.locks[key]
	if !ok {
		sem = make(chan struct{}, 1)
		c.locks[key] = sem
	}
	c.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("checkpoint: waiting for the workspace lock: %w", ctx.Err())
	}
	// The semaphore orders this process's callers; the file lock orders
	// the processes of the host that share the directory.
	unlockFile, err := fileLock(ctx, key+".lock")
	if err != nil {
		<-sem
		return nil, err
	}
	return func() {
		unlockFile()
		<-sem
	}, nil
}

// attributes override every .gitattributes of the workspace (info/attributes
// wins over them): no end-of-line conversion, filter, ident or encoding, so
// a blob is the file's bytes and a restore writes back exactly what was
// there. Binary detection for diffs is git's own content sniffing and the
// workspace's "diff"/"binary" attributes still apply.
const attributes = "* -text -eol -filter -ident -working-tree-encoding\n"

// ensureRepo creates the shadow repository on first use. It is bare (no
// work tree of its own); every call names the workspace as GIT_WORK_TREE.
func (c *Checkpointer) ensureRepo(ctx context.Context, w *workspace) error {
	gitDir := w.git.gitDir
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// Build it beside and rename it into place, so a crash mid-way leaves
	// no half repository that later calls would trust.
	tmp, err := os.MkdirTemp(c.dir, ".init-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.RemoveAll(tmp)
	// --template= copies no sample hooks or description.
	if _, err := newGitRepo(c.git, tmp, "", w.git.timeout).run(ctx, nil, "init", "--quiet", "--bare", "--template=", tmp); err != nil {
		return fmt.Errorf("checkpoint: init: %w", err)
	}
	g := newGitRepo(c.git, tmp, w.path, w.git.timeout)
	for _, kv := range [][2]string{
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"core.hooksPath", "/dev/null"},
		{"core.logAllRefUpdates", "false"},
		{"core.autocrlf", "false"},
		{"core.untrackedCache", "true"},
		{"index.version", "4"},
		{"caduceus.workspace", w.path},
	} {
		if _, err := g.run(ctx, nil, "config", kv[0], kv[1]); err != nil {
			return fmt.Errorf("checkpoint: config %s: %w", kv[0], err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tmp, "info"), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "info", "attributes"), []byte(attributes), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, gitDir); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.log.Info("checkpoint repository created", "workspace", w.path, "repo", gitDir)
	return nil
}

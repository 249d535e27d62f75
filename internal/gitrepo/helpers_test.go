package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs the real git in dir for a test's setup, as a developer would,
// and returns its trimmed output.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Setup", "GIT_AUTHOR_EMAIL=setup@example.com",
		"GIT_COMMITTER_NAME=Setup", "GIT_COMMITTER_EMAIL=setup@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes an empty repository on branch main.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	return dir
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitAll stages everything and commits it with message.
func commitAll(t testing.TB, dir, message string) {
	t.Helper()
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--no-verify", "-m", message)
}

func openRepo(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runGit runs git in dir like git but returns the error, for setups that
// are meant to fail (a conflicting merge).
func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Setup", "GIT_AUTHOR_EMAIL=setup@example.com",
		"GIT_COMMITTER_NAME=Setup", "GIT_COMMITTER_EMAIL=setup@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

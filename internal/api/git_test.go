package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/gitrepo"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// withGit sets the Git panel's git options.
func withGit(o gitrepo.Options) envOpt { return func(c *envConfig) { c.git = o } }

// withGitDomain sets --git-email-domain.
func withGitDomain(d string) envOpt { return func(c *envConfig) { c.gitDomain = d } }

// gitCmd runs plain git in dir, isolated from the machine's config, and
// returns its trimmed output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeGitFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitSession creates a session whose workspace is a new repository on
// branch main with one commit of a.txt ("one\ntwo\n") and a branch other
// where a.txt differs.
func (e *env) gitSession(t *testing.T) (sessionJSON, string) {
	t.Helper()
	// Under the server's workspace: a session's workspace must lie under
	// an allowed root (--workspace-root, by default --workspace).
	dir, err := os.MkdirTemp(e.ws, "repo-")
	if err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "init", "-q", "-b", "main")
	writeGitFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\n")
	gitCmd(t, dir, "add", "a.txt")
	gitCmd(t, dir, "commit", "-q", "-m", "first")
	gitCmd(t, dir, "branch", "other")
	gitCmd(t, dir, "switch", "-q", "other")
	writeGitFile(t, filepath.Join(dir, "a.txt"), "one\nTWO\n")
	gitCmd(t, dir, "commit", "-q", "-am", "on other")
	gitCmd(t, dir, "switch", "-q", "main")
	b, _ := json.Marshal(map[string]string{"workspace": dir})
	r := e.req("POST", "/api/sessions", string(b))
	r.want(t, http.StatusCreated, "")
	var s sessionJSON
	r.decode(t, &s)
	return s, dir
}

type gitStatusJSON struct {
	Repository bool   `json:"repository"`
	Branch     string `json:"branch"`
	Detached   bool   `json:"detached"`
	Commit     string `json:"commit"`
	Ahead      int    `json:"ahead"`
	Behind     int    `json:"behind"`
	Staged     []struct {
		Path, Kind string
	} `json:"staged"`
	Unstaged []struct {
		Path, Kind string
	} `json:"unstaged"`
	Untracked  []string `json:"untracked"`
	Conflicted []struct {
		Path, Kind string
	} `json:"conflicted"`
}

func (e *env) gitStatus(t *testing.T, sid string) gitStatusJSON {
	t.Helper()
	r := e.req("GET", "/api/sessions/"+sid+"/git/status", "")
	r.want(t, http.StatusOK, "")
	var st gitStatusJSON
	r.decode(t, &st)
	return st
}

// gitChanges lists the paths of changes as "kind path".
func gitChanges(cs []struct{ Path, Kind string }) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Path)
	}
	return strings.Join(out, ", ")
}

// TestGitNotARepository: a plain workspace answers status with
// repository false, and every other route with 409 not_a_git_repository.
func TestGitNotARepository(t *testing.T) {
	e := newEnv(t)
	s := e.session(t) // the env's plain temp dir
	r := e.req("GET", "/api/sessions/"+s.ID+"/git/status", "")
	r.want(t, http.StatusOK, "")
	if got := strings.TrimSpace(string(r.body)); got != `{"repository":false}` {
		t.Errorf("status of a plain workspace: %s", got)
	}
	base := "/api/sessions/" + s.ID + "/git/"
	e.runErrCases(t, []errCase{
		{name: "diff", method: "GET", path: base + "diff", status: 409, code: "not_a_git_repository"},
		{name: "log", method: "GET", path: base + "log", status: 409, code: "not_a_git_repository"},
		{name: "branches", method: "GET", path: base + "branches", status: 409, code: "not_a_git_repository"},
		{name: "stage", method: "POST", path: base + "stage", body: `{"paths":["x"]}`, status: 409, code: "not_a_git_repository"},
		{name: "commit", method: "POST", path: base + "commit", body: `{"message":"m"}`, status: 409, code: "not_a_git_repository"},
		{name: "unknown session", method: "GET", path: "/api/sessions/ses_00000000000000000000000000/git/status", status: 404, code: "not_found"},
		{name: "malformed session", method: "GET", path: "/api/sessions/nope/git/status", status: 404, code: "not_found"},
	})

	// A repository above the workspace does not make it one.
	gitCmd(t, filepath.Dir(e.ws), "init", "-q")
	if st := e.gitStatus(t, s.ID); st.Repository {
		t.Errorf("a workspace inside another repository: %+v", st)
	}

	// A workspace deleted since the session was made.
	if err := os.RemoveAll(e.ws); err != nil {
		t.Fatal(err)
	}
	e.req("GET", base+"status", "").want(t, http.StatusConflict, "workspace_unavailable")
}

// TestGitPanelFlow: a change in the work tree shows in status and diff;
// staging, committing (journaled as git.committed) and the log follow;
// unstage, branches and switch do what they say.
func TestGitPanelFlow(t *testing.T) {
	e := newEnv(t)
	s, dir := e.gitSession(t)
	base := "/api/sessions/" + s.ID + "/git/"

	st := e.gitStatus(t, s.ID)
	if !st.Repository || st.Branch != "main" || st.Detached || len(st.Commit) != 40 ||
		len(st.Staged)+len(st.Unstaged)+len(st.Untracked)+len(st.Conflicted) != 0 {
		t.Fatalf("clean status: %+v", st)
	}

	writeGitFile(t, filepath.Join(dir, "a.txt"), "one\n2\nthree\n")
	writeGitFile(t, filepath.Join(dir, "new file.txt"), "fresh\n")
	st = e.gitStatus(t, s.ID)
	if gitChanges(st.Unstaged) != "modified a.txt" || strings.Join(st.Untracked, ",") != "new file.txt" || len(st.Staged) != 0 {
		t.Fatalf("status after changes: %+v", st)
	}

	var d struct {
		Staged bool `json:"staged"`
		Files  []struct {
			Path           string
			Added, Removed int
			Patch          string
		} `json:"files"`
		Added, Removed int
	}
	r := e.req("GET", base+"diff", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &d)
	if d.Staged || len(d.Files) != 1 || d.Files[0].Path != "a.txt" || d.Files[0].Added != 2 || d.Files[0].Removed != 1 ||
		!strings.Contains(d.Files[0].Patch, "-two\n+2\n+three\n") || d.Added != 2 || d.Removed != 1 {
		t.Fatalf("unstaged diff: %s", r.body)
	}

	r = e.req("POST", base+"stage", `{"paths":["a.txt","new file.txt"]}`)
	r.want(t, http.StatusOK, "")
	r.decode(t, &st)
	if gitChanges(st.Staged) != "modified a.txt, added new file.txt" || len(st.Unstaged) != 0 || len(st.Untracked) != 0 {
		t.Fatalf("status after stage: %s", r.body)
	}
	r = e.req("GET", base+"diff?staged=1&path="+url.QueryEscape("new file.txt"), "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &d)
	if !d.Staged || len(d.Files) != 1 || d.Files[0].Path != "new file.txt" || d.Files[0].Added != 1 {
		t.Fatalf("staged diff of one path: %s", r.body)
	}

	// Unstage one, commit the other.
	r = e.req("POST", base+"unstage", `{"paths":["new file.txt"]}`)
	r.want(t, http.StatusOK, "")
	r.decode(t, &st)
	if gitChanges(st.Staged) != "modified a.txt" || strings.Join(st.Untracked, ",") != "new file.txt" {
		t.Fatalf("status after unstage: %s", r.body)
	}

	before := e.lastID()
	r = e.req("POST", base+"commit", `{"message":"Count in digits\n\nand add a line"}`)
	r.want(t, http.StatusCreated, "")
	var c struct {
		Hash, Branch, Message string
		Author                struct{ Name, Email string }
	}
	r.decode(t, &c)
	if len(c.Hash) != 40 || c.Branch != "main" || c.Message != "Count in digits" ||
		c.Author.Name != "Caduceus" || c.Author.Email != "caduceus@localhost" {
		t.Fatalf("commit answer: %s", r.body)
	}
	if got := gitCmd(t, dir, "log", "-1", "--format=%H|%an <%ae>|%cn|%B"); got != c.Hash+"|Caduceus <caduceus@localhost>|Caduceus|Count in digits\n\nand add a line" {
		t.Errorf("the commit in the repository: %q", got)
	}

	// The journal: one git.committed of the session, of no run.
	evs, err := e.st.Events(e.ctx, store.EventQuery{SessionID: s.ID, AfterID: before})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != event.GitCommitted || evs[0].RunID != "" {
		t.Fatalf("events after the commit: %+v", evs)
	}
	var p event.GitCommittedPayload
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Hash != c.Hash || p.Message != "Count in digits" || p.Branch != "main" || p.By == nil || p.By.Kind != "local" {
		t.Errorf("git.committed payload: %s", evs[0].Payload)
	}

	// The log, paged.
	var lg struct {
		Commits []struct{ Hash, Author, Subject string }
		Next    string
	}
	r = e.req("GET", base+"log?limit=1", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &lg)
	if len(lg.Commits) != 1 || lg.Commits[0].Hash != c.Hash || lg.Commits[0].Subject != "Count in digits" || lg.Commits[0].Author != "Caduceus" || lg.Next == "" {
		t.Fatalf("log page 1: %s", r.body)
	}
	r = e.req("GET", base+"log?limit=1&cursor="+url.QueryEscape(lg.Next), "")
	r.want(t, http.StatusOK, "")
	lg.Next = ""
	r.decode(t, &lg)
	if len(lg.Commits) != 1 || lg.Commits[0].Subject != "first" || lg.Next != "" {
		t.Fatalf("log page 2: %s", r.body)
	}

	// Nothing staged now: 409, and nothing journaled.
	before = e.lastID()
	e.req("POST", base+"commit", `{"message":"again"}`).want(t, http.StatusConflict, "nothing_to_commit")
	if e.lastID() != before {
		t.Error("a refused commit was journaled")
	}

	// Branches and switching. The work tree's a.txt differs from other's
	// after the commit, and an untracked file rides along.
	var bs struct {
		Branches []struct {
			Name    string
			Current bool
		}
	}
	r = e.req("GET", base+"branches", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &bs)
	if len(bs.Branches) != 2 || bs.Branches[0].Name != "main" || !bs.Branches[0].Current || bs.Branches[1].Name != "other" || bs.Branches[1].Current {
		t.Fatalf("branches: %s", r.body)
	}
	r = e.req("POST", base+"switch", `{"branch":"other"}`)
	r.want(t, http.StatusOK, "")
	r.decode(t, &st)
	if st.Branch != "other" || strings.Join(st.Untracked, ",") != "new file.txt" {
		t.Fatalf("status after switch: %s", r.body)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\nTWO\n" {
		t.Errorf("a.txt on other: %q", b)
	}

	// A local change switching would overwrite: refused, the file kept.
	writeGitFile(t, filepath.Join(dir, "a.txt"), "mine\n")
	e.req("POST", base+"switch", `{"branch":"main"}`).want(t, http.StatusConflict, "local_changes_would_be_overwritten")
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "mine\n" {
		t.Errorf("a.txt after a refused switch: %q", b)
	}
	if st := e.gitStatus(t, s.ID); st.Branch != "other" {
		t.Errorf("branch after a refused switch: %q", st.Branch)
	}
}

// TestGitBadInput: paths out of the workspace (however spelled), bad
// bodies and parameters are refused with stable codes, and change neither
// the index nor the journal.
func TestGitBadInput(t *testing.T) {
	e := newEnv(t)
	s, dir := e.gitSession(t)
	base := "/api/sessions/" + s.ID + "/git/"
	outside := t.TempDir()
	writeGitFile(t, filepath.Join(outside, "secret.txt"), "outside\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	writeGitFile(t, filepath.Join(dir, "a.txt"), "changed\n")
	index := func() string {
		return gitCmd(t, dir, "ls-files", "--stage") + "|" + gitCmd(t, dir, "diff", "--cached", "--name-only")
	}
	before := index()

	cases := []errCase{
		{name: "dot-dot", method: "POST", path: base + "stage", body: `{"paths":["../x"]}`, status: 400, code: "path_outside_repository"},
		{name: "dot-dot inside", method: "POST", path: base + "stage", body: `{"paths":["a.txt","sub/../../x"]}`, status: 400, code: "path_outside_repository"},
		{name: "absolute", method: "POST", path: base + "stage", body: `{"paths":["` + filepath.Join(outside, "secret.txt") + `"]}`, status: 400, code: "path_outside_repository"},
		{name: "into .git", method: "POST", path: base + "stage", body: `{"paths":[".git/config"]}`, status: 400, code: "path_outside_repository"},
		{name: "symlink out", method: "POST", path: base + "stage", body: `{"paths":["link/secret.txt"]}`, status: 400, code: "path_outside_repository"},
		{name: "backslash", method: "POST", path: base + "stage", body: `{"paths":["..\\x"]}`, status: 400, code: "invalid_path"},
		{name: "empty path", method: "POST", path: base + "stage", body: `{"paths":[""]}`, status: 400, code: "invalid_path"},
		{name: "no paths", method: "POST", path: base + "stage", body: `{"paths":[]}`, status: 400, code: "no_paths"},
		{name: "missing path", method: "POST", path: base + "stage", body: `{"paths":["nope.txt"]}`, status: 404, code: "path_not_found"},
		{name: "unknown field", method: "POST", path: base + "stage", body: `{"paths":["a.txt"],"force":true}`, status: 400, code: "invalid_input"},
		{name: "not json", method: "POST", path: base + "stage", body: `paths=a.txt`, header: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "too many paths", method: "POST", path: base + "stage", body: `{"paths":[` + strings.Repeat(`"a.txt",`, 1000) + `"a.txt"]}`, status: 400, code: "invalid_input"},
		{name: "unstage out", method: "POST", path: base + "unstage", body: `{"paths":["../a.txt"]}`, status: 400, code: "path_outside_repository"},
		{name: "diff dot-dot, encoded", method: "GET", path: base + "diff?path=%2e%2e%2fx", status: 400, code: "path_outside_repository"},
		{name: "diff absolute", method: "GET", path: base + "diff?path=%2Fetc%2Fpasswd", status: 400, code: "path_outside_repository"},
		{name: "diff symlink out", method: "GET", path: base + "diff?path=link%2Fsecret.txt", status: 400, code: "path_outside_repository"},
		{name: "diff staged=yes", method: "GET", path: base + "diff?staged=yes", status: 400, code: "invalid_input"},
		{name: "log limit 0", method: "GET", path: base + "log?limit=0", status: 400, code: "invalid_input"},
		{name: "log limit huge", method: "GET", path: base + "log?limit=501", status: 400, code: "invalid_input"},
		{name: "log cursor", method: "GET", path: base + "log?cursor=HEAD~1.0", status: 400, code: "invalid_cursor"},
		{name: "empty message", method: "POST", path: base + "commit", body: `{"message":"  \n "}`, status: 400, code: "empty_commit_message"},
		{name: "nothing staged", method: "POST", path: base + "commit", body: `{"message":"m"}`, status: 409, code: "nothing_to_commit"},
		{name: "option as branch", method: "POST", path: base + "switch", body: `{"branch":"--orphan=x"}`, status: 400, code: "invalid_branch_name"},
		{name: "bad branch", method: "POST", path: base + "switch", body: `{"branch":"a..b"}`, status: 400, code: "invalid_branch_name"},
		{name: "no such branch", method: "POST", path: base + "switch", body: `{"branch":"nope"}`, status: 404, code: "no_such_branch"},
		{name: "switch overwrites", method: "POST", path: base + "switch", body: `{"branch":"other"}`, status: 409, code: "local_changes_would_be_overwritten"},
	}
	e.runErrCases(t, cases)
	if after := index(); after != before {
		t.Errorf("the index changed:\n%s\n->\n%s", before, after)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "changed\n" {
		t.Errorf("a.txt: %q", b)
	}
	if st := e.gitStatus(t, s.ID); st.Branch != "main" {
		t.Errorf("branch: %q", st.Branch)
	}
}

// TestGitCommitRunsNoHook: hooks planted in .git/hooks (and a hooksPath in
// the repository's config) do not run when the panel commits; the same
// hooks do run under plain git, so the test can fail.
func TestGitCommitRunsNoHook(t *testing.T) {
	e := newEnv(t)
	s, dir := e.gitSession(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\necho \"$0\" >> " + marker + "\n"
	hooks := filepath.Join(dir, ".git", "hooks")
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change", "post-checkout", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := "/api/sessions/" + s.ID + "/git/"
	writeGitFile(t, filepath.Join(dir, "a.txt"), "hooked?\n")
	e.req("POST", base+"stage", `{"paths":["a.txt"]}`).want(t, http.StatusOK, "")
	e.req("POST", base+"commit", `{"message":"no hooks"}`).want(t, http.StatusCreated, "")
	e.req("POST", base+"switch", `{"branch":"other"}`).want(t, http.StatusOK, "")
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a hook ran on the panel's commit: %s", b)
	}
	if got := gitCmd(t, dir, "log", "-1", "--format=%s", "main"); got != "no hooks" {
		t.Fatalf("the commit: %q", got)
	}

	// The same hooks, run by plain git.
	gitCmd(t, dir, "commit", "-q", "--allow-empty", "-m", "plain")
	if b, err := os.ReadFile(marker); err != nil || !strings.Contains(string(b), "pre-commit") {
		t.Fatalf("plain git did not run the planted hook (%v): the test proves nothing", err)
	}
}

// TestGitRoles: a viewer reads the panel but stages, commits and switches
// nothing; a signed-in operator commits as themselves.
func TestGitRoles(t *testing.T) {
	e := newEnv(t, withGitDomain("example.org"))
	s, dir := e.gitSession(t)
	base := "/api/sessions/" + s.ID + "/git/"
	writeGitFile(t, filepath.Join(dir, "a.txt"), "changed\n")
	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.addPerson("olga", auth.RoleOperator)
	opSess := e.login(op)

	viewer.req("GET", base+"status", "").want(t, http.StatusOK, "")
	viewer.req("GET", base+"log", "").want(t, http.StatusOK, "")
	before := e.lastID()
	for _, w := range []struct{ path, body string }{
		{"stage", `{"paths":["a.txt"]}`}, {"unstage", `{"paths":["a.txt"]}`},
		{"commit", `{"message":"m"}`}, {"switch", `{"branch":"other"}`},
	} {
		viewer.req("POST", base+w.path, w.body).want(t, http.StatusForbidden, "forbidden")
	}
	if got := gitCmd(t, dir, "diff", "--cached", "--name-only"); got != "" || e.lastID() != before {
		t.Fatalf("a viewer changed something: staged %q", got)
	}

	opSess.req("POST", base+"stage", `{"paths":["a.txt"]}`).want(t, http.StatusOK, "")
	opSess.req("POST", base+"commit", `{"message":"by olga"}`).want(t, http.StatusCreated, "")
	if got := gitCmd(t, dir, "log", "-1", "--format=%an <%ae> / %cn <%ce>"); got != "olga <olga@example.org> / olga <olga@example.org>" {
		t.Errorf("author: %q", got)
	}
	// A read-scoped token of the operator reads only.
	tok := e.addToken(op, auth.ScopeRead)
	e.req("POST", base+"commit", `{"message":"m"}`, bearer(tok)...).want(t, http.StatusForbidden, "forbidden")
}

// TestGitTimeout: a git that does not finish in time is killed and
// answered 504 git_timeout.
func TestGitTimeout(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "git")
	writeGitFile(t, slow, "#!/bin/sh\nexec sleep 30\n")
	if err := os.Chmod(slow, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withGit(gitrepo.Options{Git: slow, Timeout: 200 * time.Millisecond}))
	s := e.session(t)
	start := time.Now()
	e.req("GET", "/api/sessions/"+s.ID+"/git/status", "").want(t, http.StatusGatewayTimeout, "git_timeout")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the answer took %s", d)
	}
}

// TestGitWritesSerialised: clicks on one workspace at once all succeed;
// run side by side, git's index.lock would refuse all but one.
func TestGitWritesSerialised(t *testing.T) {
	e := newEnv(t)
	s, dir := e.gitSession(t)
	const n = 12
	for i := range n {
		writeGitFile(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), "x\n")
	}
	codes := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.req("POST", "/api/sessions/"+s.ID+"/git/stage", fmt.Sprintf(`{"paths":["f%02d.txt"]}`, i))
			codes <- fmt.Sprintf("%d %s", r.code, r.errCode())
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != "200 " {
			t.Errorf("a concurrent stage answered %s", c)
		}
	}
	if st := e.gitStatus(t, s.ID); len(st.Staged) != n {
		t.Errorf("%d files staged, want %d", len(st.Staged), n)
	}
}

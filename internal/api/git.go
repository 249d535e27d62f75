package api

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/gitrepo"
	"github.com/caduceus-dev/caduceus/internal/identity"
)

// The Git panel: git status, diff, log, branches, stage, unstage, commit
// and switch in the session's workspace, through internal/gitrepo (which
// runs git without hooks, filters, fsmonitor, signing or a shell). The web
// tier runs git itself, so it must see the workspace (one host or a
// shared mount).

// The author of commits made by nobody signed in (an open loopback server
// or the server token).
const (
	DefaultGitAuthorName  = "Caduceus"
	DefaultGitAuthorEmail = "caduceus@localhost"
)

// Stable codes of the Git panel besides gitrepo's own.
const (
	// CodeWorkspaceUnavailable: the session's workspace directory is gone
	// or unreadable.
	CodeWorkspaceUnavailable = "workspace_unavailable"
)

// maxGitPaths bounds the paths of one stage or unstage.
const maxGitPaths = 1000

// gitStatusOf maps gitrepo's stable codes to HTTP statuses.
func gitStatusOf(code string) int {
	switch code {
	case "path_not_found", "no_such_branch":
		return http.StatusNotFound
	case "nothing_to_commit", "local_changes_would_be_overwritten", "unmerged_paths", "not_a_git_repository":
		return http.StatusConflict
	case "git_timeout":
		return http.StatusGatewayTimeout
	case "git_failed", "git_output_too_large":
		return http.StatusBadGateway
	}
	return http.StatusBadRequest
}

// gitMessage is the plain words of a refusal whose error text is git's
// (kept in details.git); "" for the others.
func gitMessage(code string) string {
	switch code {
	case "not_a_git_repository":
		return "the session's workspace is not a git repository"
	case "nothing_to_commit":
		return "nothing is staged: stage changes before committing"
	case "local_changes_would_be_overwritten":
		return "switching would overwrite changes in the work tree: commit or undo them first; nothing was changed"
	case "unmerged_paths":
		return "the work tree has unresolved conflicts: resolve and stage them first"
	case "git_timeout":
		return "git did not finish in time and was stopped"
	}
	return ""
}

// gitFail answers a gitrepo error with its stable code; anything else
// goes to fail.
func (a *API) gitFail(w http.ResponseWriter, r *http.Request, err error) {
	code := gitrepo.Code(err)
	if code == "" || r.Context().Err() != nil {
		a.fail(w, r, err)
		return
	}
	msg := strings.TrimPrefix(err.Error(), code+": ")
	var details map[string]any
	var ge *gitrepo.GitError
	switch {
	case gitMessage(code) != "":
		if msg != code && code != "not_a_git_repository" {
			details = map[string]any{"git": msg}
		}
		msg = gitMessage(code)
	case errors.As(err, &ge):
		// git's own words help a person (a stale index.lock, say); the
		// arguments are ours and say nothing new.
		msg = "git " + ge.Args[0] + " failed: " + ge.Stderr
	}
	writeError(w, gitStatusOf(code), code, msg, details)
}

// gitRepo opens the session's workspace as a repository. found is false
// when an answer was written: an unknown session, a missing workspace,
// or (unless notRepoOK) a workspace that is not a repository. With
// notRepoOK, a plain workspace returns a nil Repo.
func (a *API) gitRepo(w http.ResponseWriter, r *http.Request, notRepoOK bool) (repo *gitrepo.Repo, sessionID string, found bool) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return nil, "", false
	}
	sess, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return nil, "", false
	}
	repo, err = gitrepo.Open(r.Context(), sess.Workspace, a.opt.Git)
	switch {
	case err == nil:
		return repo, sid, true
	case errors.Is(err, gitrepo.ErrNotRepo) && notRepoOK:
		return nil, sid, true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		writeError(w, http.StatusConflict, CodeWorkspaceUnavailable, "the session's workspace directory is missing or unreadable", nil)
		return nil, "", false
	}
	a.gitFail(w, r, err)
	return nil, "", false
}

// gitStatusView is the status answer: repository false and nothing else
// for a plain workspace, so the panel can say so.
type gitStatusView struct {
	Repository bool `json:"repository"`
	*gitrepo.Status
}

func (a *API) gitStatus(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := a.gitRepo(w, r, true)
	if !ok {
		return
	}
	if repo == nil {
		writeJSON(w, http.StatusOK, gitStatusView{})
		return
	}
	st, err := repo.Status(r.Context())
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, gitStatusView{Repository: true, Status: &st})
}

// gitDiff answers ?staged=1 (index against HEAD) or the unstaged changes,
// optionally for ?path= only.
func (a *API) gitDiff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	staged, ok := gitFlagParam(w, q.Get("staged"), "staged")
	if !ok {
		return
	}
	repo, _, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	d, err := repo.Diff(r.Context(), staged, q.Get("path"))
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Staged bool `json:"staged"`
		gitrepo.Diff
	}{staged, d})
}

// gitFlagParam reads a boolean query parameter: "", 0, false or 1, true.
func gitFlagParam(w http.ResponseWriter, v, name string) (bool, bool) {
	switch v {
	case "", "0", "false":
		return false, true
	case "1", "true":
		return true, true
	}
	writeError(w, http.StatusBadRequest, control.CodeInvalidInput, name+" must be 1 or 0", nil)
	return false, false
}

func (a *API) gitLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := gitrepo.DefaultLogLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > gitrepo.MaxLogLimit {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput,
				"limit must be an integer from 1 to "+strconv.Itoa(gitrepo.MaxLogLimit), nil)
			return
		}
		limit = n
	}
	repo, _, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	page, err := repo.Log(r.Context(), limit, q.Get("cursor"))
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (a *API) gitBranches(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	bs, err := repo.Branches(r.Context())
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"branches": bs})
}

func (a *API) gitStage(w http.ResponseWriter, r *http.Request) {
	a.gitPaths(w, r, (*gitrepo.Repo).Stage)
}

func (a *API) gitUnstage(w http.ResponseWriter, r *http.Request) {
	a.gitPaths(w, r, (*gitrepo.Repo).Unstage)
}

// gitPaths stages or unstages {paths}; it answers with the new status.
// gitrepo checks every path before git runs, so one bad path changes
// nothing.
func (a *API) gitPaths(w http.ResponseWriter, r *http.Request, op func(*gitrepo.Repo, context.Context, []string) error) {
	var in struct {
		Paths []string `json:"paths"`
	}
	if !decode(w, r, &in) {
		return
	}
	if len(in.Paths) > maxGitPaths {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "at most "+strconv.Itoa(maxGitPaths)+" paths at once", nil)
		return
	}
	repo, _, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	unlock := a.gitLocks.lock(repo.Dir())
	defer unlock()
	if err := op(repo, r.Context(), in.Paths); err != nil {
		a.gitFail(w, r, err)
		return
	}
	a.writeGitStatus(w, r, repo)
}

func (a *API) writeGitStatus(w http.ResponseWriter, r *http.Request, repo *gitrepo.Repo) {
	st, err := repo.Status(r.Context())
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, gitStatusView{Repository: true, Status: &st})
}

// gitCommit commits what is staged, as the person asking (gitAuthor), and
// journals git.committed.
func (a *API) gitCommit(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message string `json:"message"`
	}
	if !decode(w, r, &in) {
		return
	}
	repo, sid, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	name, email := a.gitAuthor(r)
	unlock := a.gitLocks.lock(repo.Dir())
	hash, err := repo.Commit(r.Context(), in.Message, name, email)
	var branch string
	if err == nil {
		var h gitrepo.Head
		if h, err = repo.Head(r.Context()); err == nil {
			branch = h.Branch
		}
	}
	unlock()
	if err != nil {
		a.gitFail(w, r, err)
		return
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(in.Message), "\n")
	subject = strings.TrimSpace(subject)
	// The commit is made; a journal that cannot take the event now must
	// not turn it into an error the person would retry.
	if err := a.svc.GitCommitted(r.Context(), sid, event.GitCommittedPayload{Hash: hash, Message: subject, Branch: branch, By: actor(r)}); err != nil {
		a.log.Error("git.committed not journaled", "session", sid, "commit", hash, "err", err)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"hash": hash, "branch": branch, "message": subject,
		"author": map[string]string{"name": name, "email": email}})
}

// gitAuthor is who a commit is by: a signed-in person (or their token) as
// "<name> <name@domain>" (an account name that is an address already is
// used as it is); nobody signed in as DefaultGitAuthorName.
func (a *API) gitAuthor(r *http.Request) (name, email string) {
	p, ok := principal(r)
	if !ok || (p.Kind != identity.KindUser && p.Kind != identity.KindToken) || p.Name == "" {
		return DefaultGitAuthorName, DefaultGitAuthorEmail
	}
	if strings.Contains(p.Name, "@") {
		return p.Name, p.Name
	}
	domain := a.opt.GitEmailDomain
	if domain == "" {
		domain = "localhost"
	}
	return p.Name, p.Name + "@" + domain
}

func (a *API) gitSwitch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Branch string `json:"branch"`
	}
	if !decode(w, r, &in) {
		return
	}
	repo, _, ok := a.gitRepo(w, r, false)
	if !ok {
		return
	}
	unlock := a.gitLocks.lock(repo.Dir())
	defer unlock()
	if err := repo.Switch(r.Context(), in.Branch); err != nil {
		a.gitFail(w, r, err)
		return
	}
	a.writeGitStatus(w, r, repo)
}

// gitWriteLocks is one mutex per key, dropped when nobody holds or waits
// for it: two clicks on one workspace would otherwise race for git's
// index.lock and one would fail.
type gitWriteLocks struct {
	mu sync.Mutex
	m  map[string]*gitWriteLock
}

type gitWriteLock struct {
	mu   sync.Mutex
	refs int
}

func newGitWriteLocks() *gitWriteLocks { return &gitWriteLocks{m: map[string]*gitWriteLock{}} }

// lock locks key and returns its unlock.
func (k *gitWriteLocks) lock(key string) func() {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &gitWriteLock{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

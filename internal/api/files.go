package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/workspace"
)

// Files for people: the Files panel's routes over internal/workspace. The
// web tier reads and writes the session's workspace on its own filesystem,
// so it must see the workspaces the runners work in (one host, or a
// shared mount).

// EditCheckpointer records a checkpoint of a workspace before a person's
// edit is written, so the edit can be rolled back like the agent's.
type EditCheckpointer interface {
	BeforeEdit(ctx context.Context, sessionID, workspace, path string, by *event.Actor) error
}

// MaxViewBytes is the largest file the viewer and editor get as text; a
// larger one is offered raw or as a download. It matches the request body
// limit, so every file the editor opens can be saved back.
const MaxViewBytes = httpguard.DefaultMaxBodyBytes

// File error codes of the API itself (the workspace package has the rest).
const (
	CodePreconditionRequired = "precondition_required"
	CodeCheckpointFailed     = "checkpoint_failed"
)

// fileStatus maps the workspace package's stable codes to HTTP statuses.
func fileStatus(code string) int {
	switch code {
	case workspace.ErrNotFound.Error():
		return http.StatusNotFound
	case workspace.ErrConflict.Error():
		return http.StatusPreconditionFailed
	case workspace.ErrTooLarge.Error():
		return http.StatusRequestEntityTooLarge
	case workspace.ErrBinary.Error():
		return http.StatusUnsupportedMediaType
	}
	return http.StatusBadRequest
}

// failFile writes a workspace error with its stable code, or fails as any
// other error.
func (a *API) failFile(w http.ResponseWriter, r *http.Request, err error) {
	code := workspace.Code(err)
	if code == "" {
		a.fail(w, r, err)
		return
	}
	var details map[string]any
	var ce *workspace.ConflictError
	if errors.As(err, &ce) {
		details = map[string]any{"path": ce.Path, "etag": ce.ETag}
		if ce.ETag != "" {
			w.Header().Set("ETag", ce.ETag)
		}
	}
	var te *workspace.TooLargeError
	if errors.As(err, &te) {
		details = map[string]any{"path": te.Path, "size": te.Size, "limit": te.Limit}
	}
	writeError(w, fileStatus(code), code, err.Error(), details)
}

// openWorkspace opens the workspace of the session in the request's path.
// The caller closes it.
func (a *API) openWorkspace(w http.ResponseWriter, r *http.Request) (*workspace.Workspace, string, bool) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return nil, "", false
	}
	s, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return nil, "", false
	}
	ws, err := workspace.Open(s.Workspace)
	if err != nil {
		a.log.Warn("session workspace unavailable", "session", sid, "err", err)
		writeError(w, http.StatusConflict, "workspace_unavailable",
			"the session's workspace directory cannot be opened on this server", nil)
		return nil, "", false
	}
	return ws, sid, true
}

// intParam reads a non-negative integer query parameter; 0 when absent.
func intParam(w http.ResponseWriter, r *http.Request, name string) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, name+" must be a non-negative integer", nil)
		return 0, false
	}
	return n, true
}

// listFiles is GET /api/sessions/{id}/files?path=&cursor=&limit=.
func (a *API) listFiles(w http.ResponseWriter, r *http.Request) {
	limit, ok := intParam(w, r, "limit")
	if !ok {
		return
	}
	ws, _, ok := a.openWorkspace(w, r)
	if !ok {
		return
	}
	defer ws.Close()
	q := r.URL.Query()
	p := q.Get("path")
	page, err := ws.List(r.Context(), p, q.Get("cursor"), limit)
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": cleanDir(p), "entries": page.Entries, "next": page.Next})
}

// cleanDir is the listed directory as the answer names it ("" for the
// workspace itself). Only called once the workspace accepted p.
func cleanDir(p string) string {
	if c := path.Clean(p); c != "." {
		return c
	}
	return ""
}

// fileView is GET .../files/content's JSON answer.
type fileView struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	MIME    string    `json:"mime"`
	// Text is the content when the file is text no larger than
	// MaxViewBytes; ETag is its validator for a PUT's If-Match.
	Text *string `json:"text,omitempty"`
	ETag string  `json:"etag,omitempty"`
	// Binary and TooLarge say why there is no text; RawURL and
	// DownloadURL fetch the bytes either way.
	Binary      bool   `json:"binary"`
	TooLarge    bool   `json:"too_large"`
	RawURL      string `json:"raw_url"`
	DownloadURL string `json:"download_url"`
}

// getFileContent is GET /api/sessions/{id}/files/content?path=[&raw=1|&download=1].
func (a *API) getFileContent(w http.ResponseWriter, r *http.Request) {
	ws, sid, ok := a.openWorkspace(w, r)
	if !ok {
		return
	}
	defer ws.Close()
	q := r.URL.Query()
	p := q.Get("path")
	if q.Get("raw") == "1" || q.Get("download") == "1" {
		a.streamFile(w, r, ws, p, q.Get("download") == "1")
		return
	}
	base := "/api/sessions/" + sid + "/files/content?path=" + url.QueryEscape(p)
	f, err := ws.Read(p, MaxViewBytes)
	var te *workspace.TooLargeError
	if errors.As(err, &te) {
		e, mt, err := ws.Stat(p)
		if err != nil {
			a.failFile(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, fileView{Path: e.Path, Size: e.Size, ModTime: e.ModTime, MIME: mt, TooLarge: true,
			RawURL: base + "&raw=1", DownloadURL: base + "&download=1"})
		return
	}
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	v := fileView{Path: f.Path, Size: f.Size, ModTime: f.ModTime, MIME: f.MIME, Binary: f.Binary,
		RawURL: base + "&raw=1", DownloadURL: base + "&download=1"}
	if !f.Binary {
		text := string(f.Content)
		v.Text, v.ETag = &text, f.ETag
		w.Header().Set("ETag", f.ETag)
	}
	writeJSON(w, http.StatusOK, v)
}

// inlineTypes are the types a raw answer keeps so the browser renders them
// (the image preview). Everything else goes out as text/plain or
// application/octet-stream: an HTML or SVG file of the workspace served
// from the workbench's own origin could otherwise run script there.
func inlineType(mt string) string {
	base, _, _ := mime.ParseMediaType(mt)
	switch base {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon":
		return base
	}
	if strings.HasPrefix(base, "text/") || strings.HasSuffix(mt, "charset=utf-8") {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// streamFile sends the file's bytes whatever their size: raw for the
// preview, or as an attachment. Ranges and If-Modified-Since work through
// http.ServeContent.
func (a *API) streamFile(w http.ResponseWriter, r *http.Request, ws *workspace.Workspace, p string, download bool) {
	_, mt, err := ws.Stat(p)
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	f, fi, err := ws.Open(p)
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	defer f.Close()
	h := w.Header()
	// Whatever the file holds, it runs nothing and is not sniffed into
	// something that does.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "no-store")
	if download {
		h.Set("Content-Type", "application/octet-stream")
		cd := mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(p)})
		if cd == "" { // a name the header cannot carry: the browser picks one
			cd = "attachment"
		}
		h.Set("Content-Disposition", cd)
	} else {
		h.Set("Content-Type", inlineType(mt))
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// putFileContent is PUT /api/sessions/{id}/files/content?path=: the body is
// the new content. An existing file needs If-Match with the ETag the
// editor read; a new one is created only without it (or with
// If-None-Match: *).
func (a *API) putFileContent(w http.ResponseWriter, r *http.Request) {
	ws, sid, ok := a.openWorkspace(w, r)
	if !ok {
		return
	}
	defer ws.Close()
	p := r.URL.Query().Get("path")
	ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
	if strings.HasPrefix(ifMatch, "W/") || ifMatch == "*" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "If-Match takes the file's strong ETag as the viewer gave it", nil)
		return
	}
	// The current version decides between create and replace and refuses
	// a stale edit before a checkpoint is taken for it; Write checks again
	// under its lock.
	cur, err := ws.Read(p, MaxViewBytes)
	var te *workspace.TooLargeError
	switch {
	case errors.Is(err, workspace.ErrNotFound):
		if ifMatch != "" {
			a.failFile(w, r, &workspace.ConflictError{Path: path.Clean(p)})
			return
		}
	case errors.As(err, &te):
		a.failFile(w, r, err)
		return
	case err != nil:
		a.failFile(w, r, err)
		return
	case ifMatch == "":
		w.Header().Set("ETag", cur.ETag)
		writeError(w, http.StatusPreconditionRequired, CodePreconditionRequired,
			"the file exists: send If-Match with the ETag you read, so a change made since is not overwritten",
			map[string]any{"path": cur.Path, "etag": cur.ETag})
		return
	case ifMatch != cur.ETag:
		a.failFile(w, r, &workspace.ConflictError{Path: cur.Path, ETag: cur.ETag})
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if httpguard.IsBodyTooLarge(err) {
			writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge, "request body is too large", nil)
			return
		}
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "could not read the request body", nil)
		return
	}
	if a.opt.Checkpoints != nil {
		if err := a.opt.Checkpoints.BeforeEdit(r.Context(), sid, ws.Dir(), path.Clean(p), actor(r)); err != nil {
			a.failCheckpoint(w, r, err)
			return
		}
	}
	etag, err := ws.Write(p, body, ifMatch)
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	status := http.StatusOK
	if ifMatch == "" {
		status = http.StatusCreated
	}
	w.Header().Set("ETag", etag)
	writeJSON(w, status, map[string]any{"path": path.Clean(p), "etag": etag, "size": len(body)})
}

// failCheckpoint refuses a save whose checkpoint failed: writing without
// one would leave an edit nobody can roll back.
func (a *API) failCheckpoint(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	code := CodeCheckpointFailed
	var coded interface{ Code() string }
	if errors.As(err, &coded) && coded.Code() != "" {
		code = coded.Code()
	} else if ce, ok := control.AsError(err); ok {
		code = ce.Code
	}
	a.log.Error("checkpoint before a person's edit failed; nothing written", "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, code,
		"the checkpoint before this edit failed, so nothing was written; see the server log", nil)
}

// searchFiles is GET /api/sessions/{id}/files/search?q=&kind=name|content&path=&limit=.
func (a *API) searchFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opts := workspace.SearchOptions{Dir: q.Get("path"), CaseSensitive: q.Get("case") == "1", IncludeIgnored: q.Get("ignored") == "1"}
	switch q.Get("kind") {
	case "", "all":
	case "name":
		opts.NamesOnly = true
	case "content":
		opts.ContentOnly = true
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "kind is name, content or all", nil)
		return
	}
	var ok bool
	if opts.Limit, ok = intParam(w, r, "limit"); !ok {
		return
	}
	ws, _, ok := a.openWorkspace(w, r)
	if !ok {
		return
	}
	defer ws.Close()
	res, err := ws.Search(r.Context(), q.Get("q"), opts)
	if err != nil {
		a.failFile(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// resolveFile is GET /api/sessions/{id}/files/resolve?path=a.go:12: a file
// reference from the agent's text, checked against the workspace.
func (a *API) resolveFile(w http.ResponseWriter, r *http.Request) {
	ws, _, ok := a.openWorkspace(w, r)
	if !ok {
		return
	}
	defer ws.Close()
	p := r.URL.Query().Get("path")
	if strings.TrimSpace(p) == "" {
		writeError(w, http.StatusBadRequest, workspace.ErrInvalidPath.Error(), "path is required", nil)
		return
	}
	ref, err := ws.Resolve(p)
	switch {
	case errors.Is(err, workspace.ErrNotFound):
		// Most mentions the UI asks about are not files: a plain answer,
		// not an error (a browser logs every 404).
		writeJSON(w, http.StatusOK, resolved{Exists: false})
		return
	case err != nil:
		a.failFile(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolved{Exists: true, Ref: &ref})
}

// resolved is GET .../files/resolve's answer.
type resolved struct {
	Exists bool `json:"exists"`
	*workspace.Ref
}

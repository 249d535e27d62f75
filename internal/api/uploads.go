package api

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/workspace"
)

// UploadLimits bound what the composer may attach.
type UploadLimits struct {
	MaxFileBytes    int64 // one file
	MaxRequestBytes int64 // one upload request, all its files and framing
}

// Default upload bounds, for an API given none.
const (
	defaultUploadFile    = 20 << 20
	defaultUploadRequest = 50 << 20
)

func (l UploadLimits) withDefaults() UploadLimits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = defaultUploadFile
	}
	if l.MaxRequestBytes <= 0 {
		l.MaxRequestBytes = defaultUploadRequest
	}
	return l
}

// ImageInput says whether a model takes image input.
type ImageInput interface {
	// AcceptsImages resolves ref as a run would ("" is the default model)
	// and reports the "provider/model" it names and whether it takes
	// images.
	AcceptsImages(ref string) (model string, ok bool, err error)
}

// Stable codes of attachments.
const (
	CodeUploadTooLarge     = "upload_too_large" // one file over the per-file limit
	CodeUploadTypeMismatch = "upload_type_mismatch"
	CodeInvalidMultipart   = "invalid_multipart"
	CodeNoFiles            = "no_files"
	CodeInvalidAttachment  = "invalid_attachment"
	CodeModelLacksImages   = "model_lacks_image_input"
)

// imageTypes are the image types every image-capable provider takes;
// anything else (SVG, TIFF, HEIC) is attached as a file.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageExts map an image extension to the type its content must sniff
// as: a file named like an image that is something else is refused rather
// than shown or sent under a false name.
var imageExts = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp"}

// attachmentView is an attachment as the API returns it.
type attachmentView struct {
	Path   string `json:"path"`
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
}

// uploadsPattern is the one route allowed a body larger than the JSON
// routes' cap.
const uploadsPattern = "POST /api/sessions/{id}/uploads"

// BodyLimit is httpguard's Config.BodyLimit for this API: the uploads
// route gets limits.MaxRequestBytes, every other request the guard's own
// cap. Matching uses the mux's own patterns, so it is exactly the route
// the handler serves.
func BodyLimit(limits UploadLimits) func(*http.Request) int64 {
	limits = limits.withDefaults()
	mux := http.NewServeMux()
	mux.Handle(uploadsPattern, http.NotFoundHandler())
	mux.Handle(importPattern, http.NotFoundHandler())        // issue 15, import
	mux.Handle(skillsInstallPattern, http.NotFoundHandler()) // h16-skills
	return func(r *http.Request) int64 {
		switch _, p := mux.Handler(r); p {
		case uploadsPattern:
			return limits.MaxRequestBytes
		case importPattern:
			return MaxImportBytes
		case skillsInstallPattern: // h16-skills
			return skill.MaxInstallRequestBytes
		}
		return 0
	}
}

// uploadFiles saves the files of a multipart request under the session
// workspace's .caduceus/uploads/ and describes them for a message to
// attach. Parts without a file name are ignored. All or nothing: when one
// file is refused, the ones saved before it are removed.
func (a *API) uploadFiles(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	sess, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	lim := a.opt.Uploads.withDefaults()
	r.Body = http.MaxBytesReader(w, r.Body, lim.MaxRequestBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidMultipart, "send the files as multipart/form-data", nil)
		return
	}
	ws, err := workspace.Open(sess.Workspace)
	if err != nil {
		a.fail(w, r, fmt.Errorf("uploads: %w", err))
		return
	}
	defer ws.Close()
	var saved []attachmentView
	undo := func() {
		root, err := os.OpenRoot(sess.Workspace)
		if err != nil {
			return
		}
		defer root.Close()
		for _, s := range saved {
			_ = root.Remove(s.Path)
		}
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			undo()
			a.uploadFailed(w, r, err, lim)
			return
		}
		if part.FileName() == "" {
			part.Close()
			continue
		}
		if len(saved) == control.MaxAttachments {
			part.Close()
			undo()
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput,
				fmt.Sprintf("at most %d files per upload", control.MaxAttachments), nil)
			return
		}
		v, err := saveUpload(ws, part, lim.MaxFileBytes)
		part.Close()
		if err != nil {
			undo()
			// The rest of the body is read (MaxBytesReader bounds it) so
			// the browser, still sending, gets the answer rather than a
			// reset connection.
			_, _ = io.Copy(io.Discard, r.Body)
			a.uploadFailed(w, r, err, lim)
			return
		}
		saved = append(saved, v)
	}
	if len(saved) == 0 {
		writeError(w, http.StatusBadRequest, CodeNoFiles, "the request carries no file (a form part with a file name)", nil)
		return
	}
	a.log.Info("files uploaded", "session", sid, "files", len(saved), "by", actorName(r))
	writeJSON(w, http.StatusCreated, map[string]any{"attachments": saved})
}

// typeMismatch is a file whose name promises an image its content is not.
type typeMismatch struct{ name, want, got string }

func (e *typeMismatch) Error() string {
	return fmt.Sprintf("%s is named like %s but its content is %s", e.name, e.want, e.got)
}

// saveUpload stores one part, sniffing its type from its first bytes (the
// type the browser declared is not trusted) and hashing it on the way.
func saveUpload(ws *workspace.Workspace, part *multipart.Part, limit int64) (attachmentView, error) {
	br := bufio.NewReaderSize(part, 512)
	head, err := br.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return attachmentView{}, err
	}
	name := workspace.SanitizeName(part.FileName())
	if want, ok := imageExts[strings.ToLower(path.Ext(name))]; ok {
		if got := http.DetectContentType(head); got != want {
			return attachmentView{}, &typeMismatch{name: name, want: want, got: got}
		}
	}
	h := sha256.New()
	up, err := ws.SaveUpload(name, io.TeeReader(br, h), limit)
	if err != nil {
		return attachmentView{}, err
	}
	return viewOf(up.Path, up.MIME, up.Size, h), nil
}

func viewOf(p, mimeType string, size int64, h hash.Hash) attachmentView {
	kind := event.AttachFile
	if imageTypes[mimeType] {
		kind = event.AttachImage
	}
	return attachmentView{Path: p, Name: path.Base(p), MIME: mimeType, Size: size, SHA256: hex.EncodeToString(h.Sum(nil)), Kind: kind}
}

// uploadFailed reports why an upload was refused.
func (a *API) uploadFailed(w http.ResponseWriter, r *http.Request, err error, lim UploadLimits) {
	var tm *typeMismatch
	var tl *workspace.TooLargeError
	switch {
	case httpguard.IsBodyTooLarge(err):
		writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge,
			fmt.Sprintf("the upload is larger than the limit of %d bytes per request; nothing was saved", lim.MaxRequestBytes),
			map[string]any{"limit_bytes": lim.MaxRequestBytes})
	case errors.As(err, &tl):
		writeError(w, http.StatusRequestEntityTooLarge, CodeUploadTooLarge,
			fmt.Sprintf("%s is larger than the limit of %d bytes per file; nothing was saved", tl.Path, lim.MaxFileBytes),
			map[string]any{"name": tl.Path, "limit_bytes": lim.MaxFileBytes})
	case errors.As(err, &tm):
		writeError(w, http.StatusUnsupportedMediaType, CodeUploadTypeMismatch, tm.Error()+"; nothing was saved",
			map[string]any{"name": tm.name, "sniffed": tm.got})
	case workspace.Code(err) != "":
		writeError(w, http.StatusBadRequest, workspace.Code(err), "the workspace refused the upload: "+workspace.Code(err), nil)
	case r.Context().Err() != nil:
	default:
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			writeError(w, http.StatusRequestTimeout, CodeRequestTimeout, "the upload did not arrive within the server's read timeout; nothing was saved", nil)
			return
		}
		if isMultipartError(err) {
			writeError(w, http.StatusBadRequest, CodeInvalidMultipart, "the multipart body is malformed; nothing was saved", nil)
			return
		}
		a.fail(w, r, err)
	}
}

// isMultipartError tells a malformed body from a server failure: the
// multipart reader's errors are plain, so anything that is not an I/O
// error of the server's own (a file system path error) is the client's.
func isMultipartError(err error) bool {
	var pe *os.PathError
	var le *os.LinkError
	return !errors.As(err, &pe) && !errors.As(err, &le)
}

// getUpload serves a file saved by an upload, for the transcript's
// thumbnails. Images are shown inline; anything else downloads, and
// nothing served here may run script (CSP sandbox).
func (a *API) getUpload(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	sess, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	if name == "" || name != workspace.SanitizeName(name) {
		writeError(w, http.StatusBadRequest, workspace.ErrInvalidPath.Error(), "not the name of an upload", nil)
		return
	}
	ws, err := workspace.Open(sess.Workspace)
	if err != nil {
		a.fail(w, r, fmt.Errorf("uploads: %w", err))
		return
	}
	defer ws.Close()
	p := workspace.UploadDir + "/" + name
	_, mimeType, err := ws.Stat(p)
	if err != nil {
		a.workspaceFailed(w, r, err)
		return
	}
	f, fi, err := ws.Open(p)
	if err != nil {
		a.workspaceFailed(w, r, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'")
	h.Set("Cache-Control", "private, no-cache")
	if imageTypes[mimeType] {
		h.Set("Content-Type", mimeType)
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// workspaceFailed reports a workspace error with its stable code.
func (a *API) workspaceFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch code := workspace.Code(err); code {
	case "":
		a.fail(w, r, err)
	case workspace.ErrNotFound.Error():
		writeError(w, http.StatusNotFound, code, "no such file in the workspace", nil)
	default:
		writeError(w, http.StatusBadRequest, code, "the workspace refused the path: "+code, nil)
	}
}

// attachmentRef is an attachment as a message names it.
type attachmentRef struct {
	Path string `json:"path"`
}

// attachmentError is a message's attachment refused, with its code.
type attachmentError struct {
	status  int
	code    string
	message string
	details map[string]any
}

func (e *attachmentError) Error() string { return e.message }

// checkAttachments resolves the attachments of a message inside the
// session's workspace: each must be a regular file there (read through
// os.Root: no escape), is typed by its content and hashed, so the runner
// can tell later whether it is still the file the person attached. A
// message with an image for a model without image input is refused here,
// before any run is queued.
func (a *API) checkAttachments(ctx context.Context, sess store.Session, model string, refs []attachmentRef) ([]event.Attachment, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if len(refs) > control.MaxAttachments {
		return nil, &attachmentError{http.StatusBadRequest, control.CodeInvalidInput,
			fmt.Sprintf("a message carries at most %d attachments", control.MaxAttachments), nil}
	}
	ws, err := workspace.Open(sess.Workspace)
	if err != nil {
		return nil, fmt.Errorf("attachments: %w", err)
	}
	defer ws.Close()
	lim := a.opt.Uploads.withDefaults()
	out := make([]event.Attachment, 0, len(refs))
	images := 0
	for _, ref := range refs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f, err := ws.Read(ref.Path, lim.MaxFileBytes)
		if err != nil {
			code := workspace.Code(err)
			if code == "" {
				return nil, err
			}
			return nil, &attachmentError{http.StatusBadRequest, CodeInvalidAttachment,
				fmt.Sprintf("attachment %q cannot be attached: %s", ref.Path, code), map[string]any{"path": ref.Path, "reason": code}}
		}
		sum := sha256.Sum256(f.Content)
		kind := event.AttachFile
		if imageTypes[f.MIME] {
			kind = event.AttachImage
			images++
		}
		out = append(out, event.Attachment{Path: f.Path, Name: path.Base(f.Path), MIME: f.MIME, Size: f.Size,
			SHA256: hex.EncodeToString(sum[:]), Kind: kind})
	}
	if images > 0 {
		if model == "" {
			model = sess.Model
		}
		if a.opt.Images == nil {
			return nil, &attachmentError{http.StatusBadRequest, CodeModelLacksImages, "this server knows of no model that takes image input", nil}
		}
		ref, ok, err := a.opt.Images.AcceptsImages(model)
		if err != nil {
			return nil, &attachmentError{http.StatusBadRequest, control.CodeInvalidInput, err.Error(), nil}
		}
		if !ok {
			return nil, &attachmentError{http.StatusBadRequest, CodeModelLacksImages,
				fmt.Sprintf("the model %s does not take image input: choose a model that does, or remove the image", ref),
				map[string]any{"model": ref}}
		}
	}
	return out, nil
}

// attachments checks a message's attachments and writes the refusal when
// they are refused.
func (a *API) attachments(w http.ResponseWriter, r *http.Request, sid, model string, refs []attachmentRef) ([]event.Attachment, bool) {
	if len(refs) == 0 {
		return nil, true
	}
	sess, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return nil, false
	}
	atts, err := a.checkAttachments(r.Context(), sess, model, refs)
	var ae *attachmentError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.code, ae.message, ae.details)
		return nil, false
	case err != nil:
		a.fail(w, r, err)
		return nil, false
	}
	return atts, true
}

// actorName names who asks, for the log.
func actorName(r *http.Request) string {
	if a := actor(r); a != nil {
		return a.Name
	}
	return ""
}

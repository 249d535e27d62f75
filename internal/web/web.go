// Package web serves the browser workbench: the bundle that `make ui`
// builds from ui/ into dist, committed and embedded so that `go build` and
// `go run` need no Node. The API lives under /api and is not this
// package's concern; the page talks to it like any other client.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed dist
var embedded embed.FS

// contentSecurityPolicy keeps agent output inert even if a sanitiser bug
// let markup through: scripts only from this origin, no plugins, no
// framing, no connections elsewhere. Inline style attributes stay allowed
// because KaTeX and the highlighter position glyphs with them.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'; frame-src 'none'; worker-src 'self'"

// Handler serves index.html for the app's pages and the bundle's files
// under /assets/. Files are served from memory with strong ETags, so a
// browser revalidates cheaply and never runs a stale bundle after an
// upgrade.
type Handler struct {
	files map[string]file
	index file
}

type file struct {
	body  []byte
	gz    []byte // gzipped body, when that is smaller
	ctype string
	etag  string
}

// New loads the embedded bundle.
func New() (*Handler, error) {
	return newFromFS(embedded, "dist")
}

func newFromFS(fsys fs.FS, root string) (*Handler, error) {
	h := &Handler{files: map[string]file{}}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.files[strings.TrimPrefix(p, root+"/")] = file{body: b, gz: gzipped(b), ctype: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load web bundle: %w", err)
	}
	idx, ok := h.files["index.html"]
	if !ok {
		return nil, fmt.Errorf("load web bundle: %s/index.html is missing (run `make ui`)", root)
	}
	h.index = idx
	return h, nil
}

// Register adds the workbench's routes to mux: / and /s/{session} serve
// the page (a session URL can be bookmarked or reloaded), /assets/ the
// bundle.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /s/{id}", h.page)
	mux.HandleFunc("GET /assets/{path...}", h.asset)
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, h.index)
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	f, ok := h.files[name]
	if !ok || name == "index.html" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.serve(w, r, f)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, f file) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("Cache-Control", "no-cache") // revalidate: the ETag makes that a 304
	hd.Set("Content-Type", f.ctype)
	hd.Add("Vary", "Accept-Encoding")
	body, etag := f.body, f.etag
	if f.gz != nil && acceptsGzip(r) {
		body, etag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// gzipped compresses b once at start-up, so no request pays for it; it
// returns nil when compression does not help (fonts, tiny files).
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	if zw.Close() != nil || buf.Len() >= len(b)*9/10 {
		return nil
	}
	return buf.Bytes()
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// File is a regular file's content as the viewer and editor get it.
type File struct {
	Path    string
	Content []byte
	// ETag is a strong validator: the quoted SHA-256 of Content. Write
	// takes it back as ifMatch.
	ETag    string
	Size    int64
	ModTime time.Time
	Mode    fs.FileMode
	// MIME is sniffed from the content, refined by the extension for
	// text (a .go file is text/x-go rather than text/plain).
	MIME string
	// Binary is set when the content holds a NUL byte in its first 8000
	// bytes, git's own test: no editor, no search.
	Binary bool
}

// binaryProbe is how much of a file the binary test looks at, as git.
const binaryProbe = 8000

// Read returns the file at p with its validator. A file over maxBytes is
// refused with a *TooLargeError; the API streams such files through Open.
func (w *Workspace) Read(p string, maxBytes int64) (File, error) {
	n, err := name(p)
	if err != nil {
		return File{}, err
	}
	f, fi, err := w.openRegular(p, n)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	if fi.Size() > maxBytes {
		return File{}, &TooLargeError{Path: n, Size: fi.Size(), Limit: maxBytes}
	}
	content, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return File{}, pathErr(p, err)
	}
	if int64(len(content)) > maxBytes { // it grew since the Stat
		return File{}, &TooLargeError{Path: n, Size: int64(len(content)), Limit: maxBytes}
	}
	bin := isBinary(content)
	return File{
		Path: n, Content: content, ETag: etagOf(content), Size: int64(len(content)),
		ModTime: fi.ModTime(), Mode: fi.Mode(), MIME: sniff(n, content, bin), Binary: bin,
	}, nil
}

// Open opens the regular file at p for streaming (download, image
// preview) whatever its size. The caller closes it.
func (w *Workspace) Open(p string) (*os.File, fs.FileInfo, error) {
	n, err := name(p)
	if err != nil {
		return nil, nil, err
	}
	return w.openRegular(p, n)
}

// ETag returns the validator of content, as Read and Write give it.
func ETag(content []byte) string { return etagOf(content) }

func etagOf(content []byte) string {
	sum := sha256.Sum256(content)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// etagReader hashes what passes through it and keeps the first
// binaryProbe bytes, so a file's validator and binary test cost one read.
type etagReader struct {
	h    hash.Hash
	head []byte
}

func (e *etagReader) Write(b []byte) (int, error) {
	if room := binaryProbe - len(e.head); room > 0 {
		e.head = append(e.head, b[:min(room, len(b))]...)
	}
	return e.h.Write(b)
}

func (e *etagReader) etag() string { return `"` + hex.EncodeToString(e.h.Sum(nil)) + `"` }

// fileETag reads an open file through and returns its validator and
// whether it is binary.
func fileETag(f io.Reader) (string, bool, error) {
	e := &etagReader{h: sha256.New()}
	if _, err := io.Copy(e, f); err != nil {
		return "", false, err
	}
	return e.etag(), isBinary(e.head), nil
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0
}

// textTypes refine http.DetectContentType's text/plain by extension, for
// the viewer's highlighting and the browser's handling. Only text content
// gets them: a binary .json stays application/octet-stream.
var textTypes = map[string]string{
	".go": "text/x-go", ".md": "text/markdown", ".markdown": "text/markdown",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
	".jsx": "text/jsx", ".ts": "text/x-typescript", ".tsx": "text/x-typescript",
	".json": "application/json", ".css": "text/css", ".html": "text/html", ".htm": "text/html",
	".xml": "text/xml", ".svg": "image/svg+xml", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".py": "text/x-python", ".rb": "text/x-ruby", ".rs": "text/x-rust",
	".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++",
	".java": "text/x-java", ".kt": "text/x-kotlin", ".swift": "text/x-swift", ".sh": "text/x-shellscript",
	".bash": "text/x-shellscript", ".sql": "application/sql", ".csv": "text/csv", ".txt": "text/plain",
	".ini": "text/plain", ".conf": "text/plain", ".log": "text/plain", ".diff": "text/x-diff",
	".patch": "text/x-diff", ".proto": "text/plain", ".mod": "text/plain", ".sum": "text/plain",
}

// sniff returns the MIME type of content named n.
func sniff(n string, content []byte, binary bool) string {
	ct := http.DetectContentType(content)
	if binary {
		return ct
	}
	t, ok := textTypes[strings.ToLower(path.Ext(n))]
	if !ok {
		return ct
	}
	if (strings.HasPrefix(t, "text/") || strings.HasSuffix(t, "json") || strings.HasSuffix(t, "xml")) && utf8.Valid(content) {
		t += "; charset=utf-8"
	}
	return t
}

// Stat describes the regular file at p without reading it all: size,
// time, validator-free type sniffed from its head. The API uses it to
// decide between Read and a streamed download.
func (w *Workspace) Stat(p string) (Entry, string, error) {
	n, err := name(p)
	if err != nil {
		return Entry{}, "", err
	}
	f, fi, err := w.openRegular(p, n)
	if err != nil {
		return Entry{}, "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	k, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Entry{}, "", fmt.Errorf("workspace: %q: %w", p, err)
	}
	head = head[:k]
	e := Entry{Name: path.Base(n), Path: n, Kind: KindFile, Size: fi.Size(), ModTime: fi.ModTime()}
	return e, sniff(n, head, isBinary(head)), nil
}

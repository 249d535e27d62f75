package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode"
)

// UploadDir is where SaveUpload puts files, relative to the workspace.
const UploadDir = ".caduceus/uploads"

// maxUploadName bounds a saved name, in bytes; maxUploadExt the part of it
// kept as the extension when a long name is cut.
const (
	maxUploadName = 100
	maxUploadExt  = 16
	// maxCollisions bounds the -1, -2, ... suffixes tried.
	maxCollisions = 1000
)

// Upload is a file SaveUpload stored.
type Upload struct {
	// Path is relative to the workspace: what the message tells the agent.
	Path string `json:"path"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
}

// SaveUpload stores what r yields under UploadDir with a sanitised form of
// name (SanitizeName); a name already taken gets -1, -2, ... before its
// extension. More than limit bytes is refused with a *TooLargeError.
// The content goes to a temporary file first and is linked to its name
// only when complete, so a failure leaves nothing behind and no reader
// sees half a file.
func (w *Workspace) SaveUpload(name string, r io.Reader, limit int64) (Upload, error) {
	base := SanitizeName(name)
	if err := w.root.MkdirAll(UploadDir, 0o755); err != nil {
		return Upload{}, pathErr(UploadDir, err)
	}
	d, err := w.openDir(UploadDir, UploadDir)
	if err != nil {
		return Upload{}, err
	}
	d.Close()

	tmp := path.Join(UploadDir, ".upload-"+randomHex()+".part")
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Upload{}, pathErr(tmp, err)
	}
	defer w.root.Remove(tmp) // linked under its name by then, or abandoned
	head := &headWriter{}
	size, err := io.Copy(io.MultiWriter(f, head), io.LimitReader(r, limit+1))
	if err == nil && size > limit {
		err = &TooLargeError{Path: base, Size: size, Limit: limit}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if Code(err) != "" {
			return Upload{}, err
		}
		return Upload{}, fmt.Errorf("workspace: upload %q: %w", base, err)
	}

	stem, ext := splitExt(base)
	for i := 0; i <= maxCollisions; i++ {
		cand := base
		if i > 0 {
			cand = stem + "-" + strconv.Itoa(i) + ext
		}
		p := path.Join(UploadDir, cand)
		err := w.root.Link(tmp, p)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return Upload{}, pathErr(p, err)
		}
		return Upload{Path: p, MIME: sniff(cand, head.b, isBinary(head.b)), Size: size}, nil
	}
	return Upload{}, fmt.Errorf("workspace: upload %q: %d files of that name already", base, maxCollisions)
}

// headWriter keeps the first 512 bytes written, what type sniffing reads.
type headWriter struct{ b []byte }

func (h *headWriter) Write(p []byte) (int, error) {
	if room := 512 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// SanitizeName turns a name a browser sent into a safe file name: its last
// path element (either slash), without control characters or invalid
// UTF-8, without leading dots, dashes or spaces (no hidden files, nothing
// a command reads as an option) or trailing dots and spaces, at most
// maxUploadName bytes with its extension kept. What is left of nothing is
// "upload".
func SanitizeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, name)
	name = strings.TrimLeft(name, ". -")
	name = strings.TrimRight(name, ". ")
	if len(name) > maxUploadName {
		stem, ext := splitExt(name)
		if len(ext) > maxUploadExt {
			stem, ext = name, ""
		}
		stem = truncateUTF8(stem, maxUploadName-len(ext))
		name = strings.TrimRight(stem, ". ") + ext
	}
	if name == "" {
		return "upload"
	}
	return name
}

// splitExt splits "a.tar.gz" into "a.tar" and ".gz"; a name without a dot
// after its first character has no extension.
func splitExt(name string) (string, string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return name, ""
	}
	return name[:i], name[i:]
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

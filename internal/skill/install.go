package skill

import (
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Limits on an installed skill: the whole of it is held in memory while
// it is checked, so nothing is written before every file passed.
const (
	// MaxInstallFiles bounds the files of an installed skill.
	MaxInstallFiles = MaxFiles
	// MaxInstallBytes bounds the unpacked size of an installed skill.
	MaxInstallBytes = 8 << 20
	// MaxInstallRequestBytes bounds an install request's body.
	MaxInstallRequestBytes = MaxInstallBytes + 1<<20
)

// Upload is one file of a skill sent as a folder's files.
type Upload struct {
	// Path is relative, with forward slashes, as the browser gives a
	// folder's files (webkitRelativePath: "<folder>/SKILL.md").
	Path string
	Data []byte
}

// InstallZip installs the skill a .zip holds: SKILL.md at its top or in
// its one top-level folder (whose name must then be the skill's).
func (d *Dir) InstallZip(data []byte) (Meta, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Meta{}, refuse(CodeBadArchive, "the upload is not a readable .zip file: %v", err)
	}
	var files []Upload
	var total int64
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || ignoredEntry(f.Name) {
			continue
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return Meta{}, refuse(CodeUnsafePath, "%q is a symbolic link; a skill holds only regular files", f.Name)
		}
		if !f.Mode().IsRegular() {
			return Meta{}, refuse(CodeUnsafePath, "%q is not a regular file", f.Name)
		}
		if len(files) == MaxInstallFiles {
			return Meta{}, refuse(CodeTooLarge, "the skill has more than %d files", MaxInstallFiles)
		}
		rc, err := f.Open()
		if err != nil {
			return Meta{}, refuse(CodeBadArchive, "cannot read %q in the .zip: %v", f.Name, err)
		}
		// The sizes a zip declares are not trusted: at most what is left of
		// the budget is read, whatever the header says.
		b, err := io.ReadAll(io.LimitReader(rc, MaxInstallBytes-total+1))
		rc.Close()
		if err != nil {
			return Meta{}, refuse(CodeBadArchive, "cannot read %q in the .zip: %v", f.Name, err)
		}
		if total += int64(len(b)); total > MaxInstallBytes {
			return Meta{}, refuse(CodeTooLarge, "the skill unpacks to more than %d MiB", MaxInstallBytes>>20)
		}
		files = append(files, Upload{Path: f.Name, Data: b})
	}
	return d.InstallFiles(files)
}

// ignoredEntry reports archive litter that is not part of a skill.
func ignoredEntry(name string) bool {
	return strings.HasPrefix(name, "__MACOSX/") || path.Base(name) == ".DS_Store"
}

// InstallFiles installs the skill made of files: SKILL.md at the top or
// in one top-level folder holding all of them, whose name must be the
// skill's. Every path must stay inside the skill's folder. Nothing is
// written unless every check passes.
func (d *Dir) InstallFiles(files []Upload) (Meta, error) {
	if len(files) == 0 {
		return Meta{}, refuse(CodeInvalid, "the upload holds no files")
	}
	if len(files) > MaxInstallFiles {
		return Meta{}, refuse(CodeTooLarge, "the skill has more than %d files", MaxInstallFiles)
	}
	clean := make([]string, len(files))
	var total int64
	for i, f := range files {
		p, err := localPath(f.Path)
		if err != nil {
			return Meta{}, err
		}
		clean[i] = p
		if total += int64(len(f.Data)); total > MaxInstallBytes {
			return Meta{}, refuse(CodeTooLarge, "the skill is larger than %d MiB", MaxInstallBytes>>20)
		}
	}
	// Strip the one top-level folder when SKILL.md is not at the top.
	folder := ""
	if !slices.Contains(clean, File) {
		top, _, _ := strings.Cut(clean[0], "/")
		for _, p := range clean {
			if !strings.HasPrefix(p, top+"/") {
				return Meta{}, refuse(CodeInvalid, "no %s at the top of the upload or of its one top-level folder", File)
			}
		}
		folder = top
		for i := range clean {
			clean[i] = strings.TrimPrefix(clean[i], top+"/")
		}
	}
	out := make(map[string][]byte, len(files))
	for i, f := range files {
		if _, dup := out[clean[i]]; dup {
			return Meta{}, refuse(CodeInvalid, "%q is in the upload twice", clean[i])
		}
		out[clean[i]] = f.Data
	}
	content, ok := out[File]
	if !ok {
		return Meta{}, refuse(CodeInvalid, "no %s at the top of the upload or of its one top-level folder", File)
	}
	meta, err := check(string(content), folder)
	if err != nil {
		return meta, err
	}
	return meta, d.install(meta.Name, out)
}

// localPath checks that an archive or upload path names a file inside the
// skill's folder and returns it cleaned: no absolute path or drive
// letter, no backslash (a separator on Windows), no NUL, no "..".
func localPath(p string) (string, error) {
	switch {
	case p == "":
		return "", refuse(CodeUnsafePath, "a file has an empty name")
	case strings.ContainsAny(p, "\\\x00"):
		return "", refuse(CodeUnsafePath, "%q: a path may not hold a backslash or NUL", p)
	case strings.HasPrefix(p, "/") || len(p) > 1 && p[1] == ':':
		return "", refuse(CodeUnsafePath, "%q is an absolute path", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", refuse(CodeUnsafePath, "%q leaves the skill's folder", p)
		}
	}
	c := path.Clean(p)
	if c == "." || !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", refuse(CodeUnsafePath, "%q leaves the skill's folder", p)
	}
	return c, nil
}

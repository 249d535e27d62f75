// Package workspace is a person's view of a session's workspace: the Files
// panel's listing, viewer, editor, search, uploads and the checks behind
// the file references in the agent's text. The agent's own file tools live
// in internal/tool; this package serves people, who get a different
// contract — strong validators for conflict-free editing, paging, stable
// error codes for the API.
//
// Every name is resolved through an os.Root opened on the workspace, so
// confinement holds by construction: the kernel resolves each component
// relative to the workspace's descriptor and os.Root refuses any step out
// of it, even through a symlink swapped in between a check and an open.
// Before that, names are checked by spelling: a path is relative,
// slash-separated, without ".." segments, NUL bytes or backslashes, and
// never inside .git (which holds remotes' credentials and the hooks git
// runs). Only regular files are read or written; device files, FIFOs and
// sockets are refused, and files are opened non-blocking so a FIFO swapped
// in after the check cannot hang a request.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Errors, each with a stable code (its text) for the API to report; Code
// finds it in a wrapped error.
var (
	ErrOutside     = errors.New("path_outside_workspace")
	ErrInvalidPath = errors.New("invalid_path")
	ErrNotFound    = errors.New("not_found")
	ErrNotRegular  = errors.New("not_regular_file")
	ErrNotDir      = errors.New("not_a_directory")
	ErrTooLarge    = errors.New("file_too_large")
	ErrBinary      = errors.New("binary_file")
	ErrConflict    = errors.New("edit_conflict")
	ErrBadCursor   = errors.New("invalid_cursor")
	ErrBadQuery    = errors.New("invalid_query")
)

var codes = []error{ErrOutside, ErrInvalidPath, ErrNotFound, ErrNotRegular, ErrNotDir,
	ErrTooLarge, ErrBinary, ErrConflict, ErrBadCursor, ErrBadQuery}

// Code returns the stable code of err, or "" when it has none (an I/O
// failure the caller reports as internal).
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return ""
}

// ConflictError is a write refused because the file is not the version
// the writer read. ETag is the current version ("" when the file does not
// exist), for the writer to fetch and merge.
type ConflictError struct {
	Path string
	ETag string
}

func (e *ConflictError) Error() string {
	if e.ETag == "" {
		return fmt.Sprintf("%s: %s no longer exists", ErrConflict, e.Path)
	}
	return fmt.Sprintf("%s: %s was changed (now %s)", ErrConflict, e.Path, e.ETag)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// TooLargeError is a file or upload over the caller's limit.
type TooLargeError struct {
	Path  string
	Size  int64 // the size seen; for an upload, more than Limit
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %s is %d bytes, more than the limit of %d", ErrTooLarge, e.Path, e.Size, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Workspace is one workspace directory opened for people. It holds a
// descriptor: Close it. It keeps no other state, so several may be open
// on the same directory (writes still serialise, see Write).
type Workspace struct {
	root *os.Root
	// dir is the workspace as given, made absolute; real has its symlinks
	// resolved. Resolve accepts absolute paths in either spelling.
	dir, real string
}

// Open opens dir as a workspace.
func Open(dir string) (*Workspace, error) {
	root, abs, real, err := OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Workspace{root: root, dir: abs, real: real}, nil
}

// OpenRoot opens dir as an os.Root on its real path and returns the root,
// dir made absolute and dir with its symlinks resolved (a path given in
// either spelling is the workspace's). The agent's tools and people's
// views of a workspace open it the same way. The caller closes the root.
func OpenRoot(dir string) (root *os.Root, abs, real string, err error) {
	if dir == "" {
		return nil, "", "", errors.New("workspace: no directory given")
	}
	abs, err = filepath.Abs(dir)
	if err != nil {
		return nil, "", "", fmt.Errorf("workspace: %w", err)
	}
	real, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, "", "", fmt.Errorf("workspace: %w", err)
	}
	root, err = os.OpenRoot(real)
	if err != nil {
		return nil, "", "", fmt.Errorf("workspace: %w", err)
	}
	return root, abs, real, nil
}

// Close releases the workspace's descriptor.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir is the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// name checks a workspace-relative path by its spelling and returns it
// clean; "" and "." are the workspace itself.
func name(p string) (string, error) {
	switch {
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%w: the path contains a NUL byte", ErrInvalidPath)
	case strings.ContainsRune(p, '\\'):
		return "", fmt.Errorf("%w: %q contains a backslash; use / between names", ErrInvalidPath, p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: %q is absolute; paths are relative to the workspace", ErrOutside, p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			return "", fmt.Errorf("%w: %q has a .. segment", ErrOutside, p)
		case ".git":
			return "", fmt.Errorf("%w: %q is inside .git, which the workspace view does not show", ErrOutside, p)
		}
	}
	if p == "" {
		return ".", nil
	}
	return path.Clean(p), nil
}

// pathErr turns a failure of the root into the package's errors, naming
// the path as the caller gave it.
func pathErr(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case escapes(err):
		return fmt.Errorf("%w: %q leads out of the workspace through a symlink", ErrOutside, p)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %q", ErrNotFound, p)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%w: %q: too many levels of symbolic links", ErrNotRegular, p)
	}
	return fmt.Errorf("workspace: %q: %w", p, err)
}

// escapes reports whether err is os.Root's refusal of a step out of the
// root. The sentinel is unexported (os.errPathEscapes), so its text is
// matched, as internal/tool does.
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// openRegular opens a regular file (following symlinks that stay inside)
// for reading. It opens non-blocking, so a FIFO or device swapped in after
// the Stat cannot block, and checks the open file again.
func (w *Workspace) openRegular(p, n string) (*os.File, fs.FileInfo, error) {
	fi, err := w.root.Stat(n)
	if err != nil {
		return nil, nil, pathErr(p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %q is a %s", ErrNotRegular, p, kindOf(fi.Mode()))
	}
	f, err := w.root.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, pathErr(p, err)
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, pathErr(p, err)
		}
		return nil, nil, fmt.Errorf("%w: %q is a %s", ErrNotRegular, p, kindOf(fi.Mode()))
	}
	if w.viaGit(f) {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %q leads into .git through a symlink", ErrOutside, p)
	}
	return f, fi, nil
}

// openDir opens the directory at n. O_DIRECTORY makes anything else fail
// at once (a FIFO opened plainly would block), and the directory must not
// be .git reached through a symlink.
func (w *Workspace) openDir(p, n string) (*os.File, error) {
	f, err := w.root.OpenFile(n, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w: %q", ErrNotDir, p)
	}
	if err != nil {
		return nil, pathErr(p, err)
	}
	if w.viaGit(f) {
		f.Close()
		return nil, fmt.Errorf("%w: %q leads into .git through a symlink", ErrOutside, p)
	}
	return f, nil
}

// Kind is what a directory entry is.
type Kind string

const (
	KindFile    Kind = "file"
	KindDir     Kind = "dir"
	KindSymlink Kind = "symlink"
	// KindOther is a device file, FIFO or socket: listed, never opened.
	KindOther Kind = "other"
)

func kindOf(m fs.FileMode) Kind {
	switch {
	case m.IsRegular():
		return KindFile
	case m.IsDir():
		return KindDir
	case m&fs.ModeSymlink != 0:
		return KindSymlink
	}
	return KindOther
}

// viaGit reports whether the open file f lies inside a .git directory,
// reached through a symlink whose spelling passed name's check (a link
// "notes" -> ".git/config"). The kernel's name for the descriptor says
// where it really is; without /proc the check is skipped, and os.Root
// still keeps the file inside the workspace.
func (w *Workspace) viaGit(f *os.File) bool {
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(w.real, target)
	if err != nil {
		return false
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if seg == ".git" {
			return true
		}
	}
	return false
}

package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// PathError reports a path that would leave the workspace. Tools turn it
// into a "denied" result; every other path failure is an ordinary error.
type PathError struct {
	// Path is the path as the caller gave it.
	Path string
	// ViaSymlink is set when the path looks inside but a symlink leads out.
	ViaSymlink bool
}

func (e *PathError) Error() string {
	if e.ViaSymlink {
		return fmt.Sprintf("path %q is outside the workspace (a symlink leads out of it)", e.Path)
	}
	return fmt.Sprintf("path %q is outside the workspace", e.Path)
}

// maxSymlinkHops bounds symlink chains we follow by hand, like the kernel's
// ELOOP limit, so a link cycle cannot spin forever.
const maxSymlinkHops = 40

// Resolve confines p (relative to the workspace, or absolute) to the
// workspace and returns its absolute path. The check is made on real paths:
// symlinks of the longest existing prefix are resolved, so a file that does
// not exist yet under a symlinked directory is checked as well. A path that
// leaves the workspace yields a *PathError.
//
// The returned path keeps the caller's spelling (a symlinked directory inside
// the workspace stays a symlink in it) so results can name it the way the
// model did.
func Resolve(workspace, p string) (string, error) {
	if workspace == "" {
		return "", errors.New("no workspace configured")
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}

	var abs string
	switch {
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
		// An absolute path may name the workspace by either spelling.
		if !within(ws, abs) && !within(realWS, abs) {
			return "", &PathError{Path: p}
		}
	default:
		abs = filepath.Join(ws, p)
		if !within(ws, abs) {
			return "", &PathError{Path: p}
		}
	}

	real, err := realPath(abs)
	if err != nil {
		return "", err
	}
	if !within(realWS, real) {
		return "", &PathError{Path: p, ViaSymlink: true}
	}
	return abs, nil
}

// within reports whether p is root or below it; both must be clean and
// absolute.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// realPath resolves every symlink in the existing part of p and appends the
// rest unchanged. A dangling symlink is followed by hand: otherwise a later
// write through it would land wherever it points.
func realPath(p string) (string, error) {
	rest := ""
	cur := p
	for hops := 0; hops <= maxSymlinkHops; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				// The parent exists (Lstat found cur), so it resolves.
				dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
				if err != nil {
					return "", err
				}
				target = filepath.Join(dir, target)
			}
			cur = filepath.Clean(target)
			hops++
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(cur, rest), nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	return "", fmt.Errorf("path %q: too many levels of symbolic links", p)
}

// relPath names abs relative to the workspace with forward slashes, the
// form people and the viewer use; "." is the workspace itself.
func relPath(workspace, abs string) string {
	if ws, err := filepath.Abs(workspace); err == nil {
		if rel, err := filepath.Rel(ws, abs); err == nil && within(ws, abs) {
			return filepath.ToSlash(rel)
		}
		if realWS, err := filepath.EvalSymlinks(ws); err == nil && within(realWS, abs) {
			if rel, err := filepath.Rel(realWS, abs); err == nil {
				return filepath.ToSlash(rel)
			}
		}
	}
	return filepath.ToSlash(abs)
}

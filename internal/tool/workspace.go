package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	workspaces "github.com/caduceus-dev/caduceus/internal/workspace"
)

// PathError reports a path that would leave the workspace. Tools turn it
// into a "denied" result; every other path failure is an ordinary error.
type PathError struct {
	// Path is the path as the caller gave it.
	Path string
	// ViaSymlink is set when the path looks inside but a symlink leads out.
	ViaSymlink bool
	// Proc is set for a path under /proc, refused even in a workspace
	// that contains it (the filesystem root).
	Proc bool
}

func (e *PathError) Error() string {
	if e.Proc {
		return fmt.Sprintf("path %q is under /proc, which holds the environment and memory of processes: tools do not read it", e.Path)
	}
	if e.ViaSymlink {
		return fmt.Sprintf("path %q is outside the workspace (a symlink leads out of it)", e.Path)
	}
	return fmt.Sprintf("path %q is outside the workspace", e.Path)
}

// maxSymlinkHops bounds the symlink chains resolve follows, like the
// kernel's ELOOP limit, so a link cycle cannot spin forever.
const maxSymlinkHops = 40

// workspaceFS is a session's workspace opened as an os.Root. Every file a
// tool reads, writes, lists or searches is opened through it, so
// confinement holds by construction: the kernel resolves each name
// component relative to the workspace's descriptor and os.Root refuses any
// step out of it, even when a symlink is swapped in between a check and
// the open that follows.
//
// The checks made before (resolve) give clear answers — which path, and
// whether a symlink leads out — and let writes go through a symlink that
// stays inside; the Root is what makes them safe.
type workspaceFS struct {
	root *os.Root
	// dir is the workspace as configured, made absolute; real is dir with
	// its symlinks resolved. An absolute path may use either spelling.
	dir, real string
}

// openWorkspace opens dir as a workspace. The caller closes it.
func openWorkspace(dir string) (*workspaceFS, error) {
	if dir == "" {
		return nil, errors.New("no workspace configured")
	}
	root, abs, real, err := workspaces.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &workspaceFS{root: root, dir: abs, real: real}, nil
}

func (w *workspaceFS) Close() error { return w.root.Close() }

// name turns a path as the model gave it (relative to the workspace, or
// absolute) into a clean, slash-separated name relative to the root; "."
// is the workspace itself. It looks at the spelling only: a path that
// leaves the workspace lexically yields a *PathError. Symlinks are
// resolve's business. The name keeps the caller's spelling (a symlinked
// directory inside the workspace stays in it), so results name a file the
// way the model did.
func (w *workspaceFS) name(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if filepath.IsAbs(p) {
		abs := filepath.Clean(p)
		for _, base := range []string{w.dir, w.real} {
			if rel, ok := relWithin(base, abs); ok {
				return rel, nil
			}
		}
		return "", &PathError{Path: p}
	}
	n := path.Clean(filepath.ToSlash(p))
	if n == ".." || strings.HasPrefix(n, "../") {
		return "", &PathError{Path: p}
	}
	return n, nil
}

// resolve returns both names of p: rel as the caller spelt it (see name),
// for results, and real, the file p refers to relative to the root with
// every symlink along the way followed, so that it holds none (at the time
// of the call). A symlink leading out of the workspace — absolute or
// relative, dangling or not, anywhere along the path — yields a
// *PathError. Components that do not exist yet are kept as given, so a
// file about to be created under a symlinked directory is resolved too.
func (w *workspaceFS) resolve(p string) (rel, real string, err error) {
	rel, err = w.name(p)
	if err != nil {
		return "", "", err
	}
	real, err = w.follow(p, rel)
	if err != nil {
		return "", "", err
	}
	if w.procfs(real) {
		return "", "", &PathError{Path: p, Proc: true}
	}
	return rel, real, nil
}

// procfs reports whether the resolved name real lies in /proc, where the
// environment and memory of the server and of every other process can be
// read. Only a workspace at the filesystem root (or inside /proc) holds
// such a name; confinement keeps every other one out already.
func (w *workspaceFS) procfs(real string) bool {
	p := filepath.Join(w.real, filepath.FromSlash(real))
	return p == "/proc" || strings.HasPrefix(p, "/proc/")
}

// follow resolves the symlinks of n, the name of p.
func (w *workspaceFS) follow(p, n string) (string, error) {
	var (
		done    []string // resolved components, none of them a symlink
		todo    = splitName(n)
		hops    int
		missing bool // a component does not exist; the rest is kept lexically
	)
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			// Only a symlink's target brings ".." here: name cleaned the
			// caller's path.
			if len(done) == 0 {
				return "", &PathError{Path: p, ViaSymlink: true}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, c)...)
		if missing {
			done = append(done, c)
			continue
		}
		fi, err := w.root.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			missing = true
			done = append(done, c)
			continue
		case escapes(err):
			return "", &PathError{Path: p, ViaSymlink: true}
		case err != nil:
			return "", fmt.Errorf("path %q: %w", p, bareErr(err))
		case fi.Mode()&fs.ModeSymlink == 0:
			done = append(done, c)
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", fmt.Errorf("path %q: too many levels of symbolic links", p)
		}
		target, err := w.root.Readlink(cur)
		if err != nil {
			return "", fmt.Errorf("path %q: %w", p, bareErr(err))
		}
		if filepath.IsAbs(target) {
			// os.Root refuses absolute links; one that points inside the
			// workspace is followed here as the name it stands for.
			rel, ok := relWithin(w.dir, filepath.Clean(target))
			if !ok {
				if rel, ok = relWithin(w.real, filepath.Clean(target)); !ok {
					return "", &PathError{Path: p, ViaSymlink: true}
				}
			}
			done = nil
			target = rel
		}
		todo = append(splitName(filepath.ToSlash(target)), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

// splitName splits a slash-separated name into its components.
func splitName(n string) []string {
	return strings.FieldsFunc(n, func(r rune) bool { return r == '/' })
}

// relWithin returns p relative to base, slash-separated, when p is base or
// below it; both must be clean and absolute.
func relWithin(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// abs is the absolute path of a root-relative name in the caller's
// spelling of the workspace, for the few places that need one (a
// command's working directory).
func (w *workspaceFS) abs(name string) string {
	return filepath.Join(w.dir, filepath.FromSlash(name))
}

// escapes reports whether err is os.Root's refusal of a step out of the
// workspace. The sentinel is unexported (os.errPathEscapes), so its text
// is matched; a root operation returns it only when a name or a symlink
// met on the way leaves the root, typically one swapped in after resolve
// looked.
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// confined turns os.Root's refusal to leave the workspace into the
// *PathError tools deny with; other errors pass unchanged.
func confined(err error, p string) error {
	if escapes(err) {
		return &PathError{Path: p, ViaSymlink: true}
	}
	return err
}

// openRead opens the file real (a resolved name) for reading. Only a
// regular file is opened: for anything else f is nil and fi says what it
// is, because opening a FIFO or a device could block or have effects. The
// type is checked before the open, for the common case, and again on the
// open descriptor, which is what counts if the file was swapped meanwhile;
// O_NONBLOCK keeps that open from hanging on a FIFO swapped in.
func (w *workspaceFS) openRead(real string) (f *os.File, fi fs.FileInfo, err error) {
	if fi, err = w.root.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return nil, fi, err
	}
	if f, err = w.root.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

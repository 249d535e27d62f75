package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// Write replaces the file at p with content, atomically (a temporary file
// in the same directory, synced, then renamed over it, with the old
// file's mode), and returns the new ETag. It writes only when the file is
// the version the writer read: ifMatch is its ETag, or "" for a file that
// must not exist yet (its directories are created). Otherwise it returns a
// *ConflictError carrying the current ETag and writes nothing, so of two
// people saving over the same version the second is told, and neither
// edit is silently lost.
//
// Writers of one directory serialise on an flock of the directory, so the
// check and the rename are one step for every Workspace in any process on
// this machine. The agent's own tools do not take it: against them the
// check narrows the window to the rename, it does not close it.
//
// Binary files and content are refused with ErrBinary (the editor is for
// text; uploads bring binaries in), symlinks and other non-regular files
// with ErrNotRegular (a rename would replace the link itself).
func (w *Workspace) Write(p string, content []byte, ifMatch string) (string, error) {
	n, err := name(p)
	if err != nil {
		return "", err
	}
	if n == "." {
		return "", fmt.Errorf("%w: the workspace itself is a directory", ErrNotRegular)
	}
	if isBinary(content) {
		return "", fmt.Errorf("%w: the new content of %q holds NUL bytes", ErrBinary, p)
	}
	dir := path.Dir(n)
	if ifMatch == "" && dir != "." {
		if err := w.mkdirs(p, dir); err != nil {
			return "", err
		}
	}
	d, err := w.openDir(p, dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	if err := flock(d); err != nil {
		return "", fmt.Errorf("workspace: lock %q: %w", dir, err)
	}
	// Closing d (deferred above) releases the lock.

	mode, err := w.checkVersion(p, n, ifMatch)
	if err != nil {
		return "", err
	}
	if err := w.replace(d, n, content, mode); err != nil {
		return "", pathErr(p, err)
	}
	return etagOf(content), nil
}

// mkdirs creates dir and its missing parents, after checking that the
// deepest one that exists is not .git reached through a symlink (MkdirAll
// follows links that stay inside the workspace).
func (w *Workspace) mkdirs(p, dir string) error {
	existing := dir
	for existing != "." {
		if _, err := w.root.Stat(existing); err == nil {
			break
		}
		existing = path.Dir(existing)
	}
	d, err := w.openDir(p, existing)
	if err != nil {
		return err
	}
	d.Close()
	if err := w.root.MkdirAll(dir, 0o755); err != nil {
		return pathErr(p, err)
	}
	return nil
}

// checkVersion compares the file at n with ifMatch and returns the mode
// the new file gets.
func (w *Workspace) checkVersion(p, n, ifMatch string) (fs.FileMode, error) {
	fi, err := w.root.Lstat(n)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ifMatch != "" {
			return 0, &ConflictError{Path: n}
		}
		return 0o644, nil
	case err != nil:
		return 0, pathErr(p, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// Say where the link leads when that is out of bounds.
		if f, _, err := w.openRegular(p, n); err != nil && !errors.Is(err, ErrNotRegular) {
			return 0, err
		} else if err == nil {
			f.Close()
		}
		return 0, fmt.Errorf("%w: %q is a symlink; edit the file it points to", ErrNotRegular, p)
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("%w: %q is a %s", ErrNotRegular, p, kindOf(fi.Mode()))
	}
	f, _, err := w.openRegular(p, n)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cur, bin, err := fileETag(f)
	if err != nil {
		return 0, pathErr(p, err)
	}
	if cur != ifMatch {
		return 0, &ConflictError{Path: n, ETag: cur}
	}
	if bin {
		return 0, fmt.Errorf("%w: %q is binary", ErrBinary, p)
	}
	return fi.Mode().Perm(), nil
}

// replace writes content to a temporary file next to n and renames it
// over n. Nothing is left behind on failure.
func (w *Workspace) replace(dir *os.File, n string, content []byte, mode fs.FileMode) (err error) {
	tmp := path.Join(path.Dir(n), "."+path.Base(n)+"."+randomHex()+".caduceus-tmp")
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			w.root.Remove(tmp)
		}
	}()
	if _, err = f.Write(content); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = w.root.Rename(tmp, n); err != nil {
		return err
	}
	// The rename is durable once the directory is; a failure here leaves
	// the new content in place, so it is not reported.
	_ = dir.Sync()
	return nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

package delegate

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/caduceus-dev/caduceus/internal/tool"
)

// scratch copies the workspace src to ScratchDir/<session id> and returns
// the copy's path. Regular files, directories and symlinks are copied (a
// link is copied as a link, never followed, so a copy cannot reach out of
// the workspace); nothing is ever merged back. A workspace larger than
// ScratchMaxBytes is refused, and a half-made copy removed.
func (s *Service) scratch(src, sessionID string) (string, error) {
	if s.cfg.ScratchDir == "" {
		return "", &tool.DelegateError{Msg: "scratch workspaces are not configured on this server; use workspace \"shared\""}
	}
	dst := filepath.Join(s.cfg.ScratchDir, sessionID)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", fmt.Errorf("delegate: scratch dir: %w", err)
	}
	var total int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			if total += info.Size(); total > s.cfg.ScratchMaxBytes {
				return &tool.DelegateError{Msg: fmt.Sprintf("the workspace is larger than %d bytes: too large for a scratch copy", s.cfg.ScratchMaxBytes)}
			}
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // sockets, devices, pipes: not workspace content
	})
	if err != nil {
		_ = os.RemoveAll(dst)
		if _, ok := err.(*tool.DelegateError); ok {
			return "", err
		}
		return "", fmt.Errorf("delegate: scratch copy: %w", err)
	}
	return dst, nil
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

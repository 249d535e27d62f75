package sqlite_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// A data directory that cannot take the database is reported with its
// path and what to do, not as the driver's "unable to open database file".
func TestOpenUnwritableDataDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	notDir := filepath.Join(base, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(base, "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		root      bool // the case needs a non-root user: root writes anywhere
	}{
		{"a file where the directory should be", notDir, false},
		{"a missing directory", filepath.Join(base, "missing"), false},
		{"a read-only directory", readOnly, true},
		{"a read-only file system", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() == 0 {
				t.Skip("root writes to a read-only directory")
			}
			if tc.dir == "" {
				tc.dir = mountTmpfs(t, "ro,size=1m")
			}
			_, err := sqlite.Open(context.Background(), filepath.Join(tc.dir, "caduceus.db"))
			if !errors.Is(err, sqlite.ErrDataDir) || !strings.Contains(err.Error(), tc.dir) || !strings.Contains(err.Error(), "--data-dir") {
				t.Fatalf("Open: %v", err)
			}
		})
	}
}

// mountTmpfs mounts a tmpfs with opts for the test (root only; skips when
// mounting is not allowed here).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

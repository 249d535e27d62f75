package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// FileName is the database file in the data directory.
const FileName = "caduceus.db"

// ErrBackupExists is a backup refused because its destination exists.
var ErrBackupExists = errors.New("the backup file already exists")

// Backup writes a consistent copy of the database at src to dest while
// other processes keep writing it, and returns the copy's size. The copy
// is made with VACUUM INTO, a read transaction: in WAL mode it sees one
// committed state of the database however long it takes, and never
// blocks the writers (nor they it). The copy is compact, checked with
// PRAGMA integrity_check, synced, and only then linked to dest, so dest
// never holds half a backup; an existing dest is refused, never replaced.
func Backup(ctx context.Context, src, dest string) (int64, error) {
	if _, err := os.Lstat(dest); err == nil {
		return 0, fmt.Errorf("%s: %w", dest, ErrBackupExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("backup destination: %w", err)
	}
	if _, err := os.Stat(src); err != nil {
		return 0, fmt.Errorf("no database to back up: %w", err)
	}
	// VACUUM INTO wants a file that does not exist or is empty; an empty
	// temporary file next to dest reserves a name on the same file system.
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".partial-*")
	if err != nil {
		return 0, fmt.Errorf("backup destination: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // after the link, dest keeps the copy

	if err := vacuumInto(ctx, src, tmpName); err != nil {
		return 0, err
	}
	if err := check(ctx, tmpName); err != nil {
		return 0, err
	}
	if err := syncFile(tmpName); err != nil {
		return 0, err
	}
	// A link, unlike a rename, fails when dest appeared meanwhile.
	if err := os.Link(tmpName, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("%s: %w", dest, ErrBackupExists)
		}
		return 0, fmt.Errorf("backup destination: %w", err)
	}
	if err := syncFile(filepath.Dir(dest)); err != nil {
		return 0, err
	}
	fi, err := os.Stat(dest)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	return fi.Size(), nil
}

// vacuumInto copies src into the empty file dest.
func vacuumInto(ctx context.Context, src, dest string) error {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	// mode=rw: a missing database is an error, not a new empty one.
	q.Set("mode", "rw")
	db, err := sql.Open("sqlite", "file:"+src+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}

// check runs SQLite's integrity check on the copy.
func check(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return fmt.Errorf("open the copy: %w", err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("check the copy: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("the copy failed its integrity check: %s", res)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// A backup taken while another connection keeps inserting sessions is a
// database of its own holding a prefix of them: at least those committed
// before it began, never half a write.
func TestBackupWhileWriting(t *testing.T) {
	db, path := openDB(t)
	for i := range 50 {
		addSession(t, db, fmt.Sprintf("s%03d", i), at(i))
	}
	ctx := context.Background()
	var wrote atomic.Int64
	wrote.Store(50)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 50; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s := store.Session{ID: fmt.Sprintf("s%03d", i), Workspace: "/ws", CreatedAt: at(i), UpdatedAt: at(i)}
			if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertSession(ctx, s) }); err != nil {
				t.Error(err)
				return
			}
			wrote.Add(1)
		}
	}()
	dest := filepath.Join(t.TempDir(), "copy.db")
	n, err := sqlite.Backup(ctx, path, dest)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil || fi.Size() != n || n == 0 {
		t.Fatalf("backup size %d, file %v, %v", n, fi, err)
	}
	cp := openPath(t, dest)
	got, _, err := cp.ListSessions(ctx, store.SessionPage{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the copy holds %d sessions of %d written", len(got), wrote.Load())
	if len(got) < 50 || int64(len(got)) > wrote.Load() {
		t.Fatalf("the copy holds %d sessions; 50 were there before it began and %d at the end", len(got), wrote.Load())
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".*partial*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestBackupRefuses(t *testing.T) {
	db, path := openDB(t)
	addSession(t, db, "s1", at(0))
	ctx := context.Background()
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src, dest string
		want            error
	}{
		{"an existing file", path, existing, sqlite.ErrBackupExists},
		{"a missing database", filepath.Join(dir, "none.db"), filepath.Join(dir, "a.db"), os.ErrNotExist},
		{"a missing directory", path, filepath.Join(dir, "no", "a.db"), os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sqlite.Backup(ctx, tc.src, tc.dest)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Fatalf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing database was created: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("files left in %s: %v", dir, ents)
	}
}

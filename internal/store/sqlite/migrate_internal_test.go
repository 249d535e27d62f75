package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// A migration that fails part-way leaves nothing behind, not even the
// migrations before it in the same run (only goose's version table, with
// version 0): the run is one transaction, and the next start tries again
// from where the database was.
func TestFailedMigrationLeavesNothing(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	good := &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE a (x INTEGER);\n")}
	bad := fstest.MapFS{
		"0001_a.sql": good,
		"0002_b.sql": {Data: []byte("-- +goose Up\nCREATE TABLE b (x INTEGER);\nINSERT INTO nowhere VALUES (1);\n")},
	}
	if err := applyMigrations(ctx, db, bad, 2); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("applying a broken migration: %v", err)
	}
	var n int
	var names string
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(group_concat(name), '') FROM sqlite_master WHERE type = 'table' AND name IN ('a', 'b')`).Scan(&n, &names); err != nil || n != 0 {
		t.Fatalf("tables %q left by the failed run (%v), want none", names, err)
	}
	var v int64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM `+versionTable).Scan(&v); err != nil || v != 0 {
		t.Fatalf("version %d after the failed run (%v), want 0", v, err)
	}
	fixed := fstest.MapFS{
		"0001_a.sql": good,
		"0002_b.sql": {Data: []byte("-- +goose Up\nCREATE TABLE b (x INTEGER);\n")},
	}
	if err := applyMigrations(ctx, db, fixed, 2); err != nil {
		t.Fatalf("after the fix: %v", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('a', 'b')`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d tables after the fixed run (%v), want 2", n, err)
	}
}

// SchemaVersion is the newest embedded migration.
func TestSchemaVersionIsNewestMigration(t *testing.T) {
	files, err := migrationFS.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	last := files[len(files)-1].Name()
	if want := strings.SplitN(last, "_", 2)[0]; strings.TrimLeft(want, "0") != strconv.Itoa(SchemaVersion) {
		t.Fatalf("SchemaVersion %d, newest migration %s", SchemaVersion, last)
	}
}

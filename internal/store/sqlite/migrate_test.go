package sqlite_test

// Migrations: goose applies them on open, several processes opening one
// file at once apply each exactly once, and a data dir made by the
// migrator before goose (its schema_migrations table) upgrades in place.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// legacyDB builds at path what the migrator before goose left after
// applying versions 1..upTo: the same SQL files (goose's annotations are
// comments to SQLite) and its schema_migrations table. The caller closes
// the returned handle.
func legacyDB(t *testing.T, path string, upTo int) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(files) < upTo {
		t.Fatalf("migrations: %v %v", files, err)
	}
	slices.Sort(files)
	for v, f := range files[:upTo] {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, 1700000000000)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

func tableExists(t *testing.T, path, name string) bool {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// A data dir of the current schema made by the migrator before goose keeps
// its data: sessions, runs, events and their seqs, requests, rules,
// runners; goose records versions 1..SchemaVersion and the old table goes.
func TestLegacyDataDirUpgradesInPlace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "caduceus.db")
	raw := legacyDB(t, path, 6) // the old migrator never went past 6
	for _, q := range []string{
		`INSERT INTO sessions (id, title, workspace, created_at_ms, updated_at_ms, last_seq) VALUES ('s1', 'old', '/ws', 1, 2, 1)`,
		`INSERT INTO runs (id, session_id, status, input, created_at_ms, last_seq, max_retries) VALUES ('r1', 's1', 'awaiting_approval', 'hi', 1, 2, 2)`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES ('', 's1', 1, 'session.created', 1, '{}'),
			('r1', 's1', 1, 'run.queued', 1, '{}'), ('r1', 's1', 2, 'approval.requested', 1, '{"tool":"bash"}')`,
		`INSERT INTO requests (id, run_id, session_id, kind, status, tool_call_id, prompt_json, created_at_ms) VALUES ('q1', 'r1', 's1', 'approval', 'pending', 'tc1', '{}', 1)`,
		`INSERT INTO approval_rules (id, tool, pattern, scope, created_at_ms) VALUES ('rule1', 'bash', 'ls', 'always', 1)`,
		`INSERT INTO runners (id, host, pid, version, started_at_ms, heartbeat_at_ms) VALUES ('runner-1', 'h', 7, 'v', 1, 1)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	for i := range 2 { // the second open finds goose's table and changes nothing
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if got := migrationRows(t, path); !slices.Equal(got, allVersions()) {
			t.Fatalf("open %d: versions %v, want %v", i, got, allVersions())
		}
		if tableExists(t, path, "schema_migrations") {
			t.Fatalf("open %d: schema_migrations is still there", i)
		}
		if s, err := db.GetSession(ctx, "s1"); err != nil || s.Title != "old" {
			t.Fatalf("open %d: session %+v, %v", i, s, err)
		}
		if r := getRun(t, db, "r1"); r.LastSeq != 2+int64(i) || r.MaxRetries != 2 {
			t.Fatalf("open %d: run %+v", i, r)
		}
		if q, err := db.GetRequest(ctx, "q1"); err != nil || q.Status != store.RequestPending {
			t.Fatalf("open %d: request %+v, %v", i, q, err)
		}
		if rules, _ := db.ListRules(ctx); len(rules) != 1 {
			t.Fatalf("open %d: rules %v", i, rules)
		}
		if rs, _ := db.ListRunners(ctx); len(rs) != 1 {
			t.Fatalf("open %d: runners %v", i, rs)
		}
		out := appendEvents(t, db, "", draft("s1", "r1", event.MessageDelta, nil))
		if out[0].Seq != 3+int64(i) {
			t.Fatalf("open %d: appended seq %d", i, out[0].Seq)
		}
		checkStreamSeqs(t, allEvents(t, db, store.EventQuery{}))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func migrationRows(t *testing.T, path string) []int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT version_id FROM goose_db_version WHERE is_applied AND version_id > 0 ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigrationsAppliedOnceAndReopen(t *testing.T) {
	ctx := context.Background()
	db, path := openDB(t)
	if got := migrationRows(t, path); !slices.Equal(got, allVersions()) {
		t.Fatalf("versions after first open = %v, want %v", got, allVersions())
	}
	addSessionRun(t, db, "s1", "r1")
	first := appendEvents(t, db, "", draft("s1", "r1", "message.user", nil))
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	// Re-open twice: migrations must not run again and data must survive.
	for i := range 2 {
		db2, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if got := migrationRows(t, path); !slices.Equal(got, allVersions()) {
			t.Fatalf("reopen %d: versions = %v", i, got)
		}
		if _, err := db2.GetSession(ctx, "s1"); err != nil {
			t.Fatalf("reopen %d: session lost: %v", i, err)
		}
		if r := getRun(t, db2, "r1"); r.LastSeq != int64(i+1) {
			t.Fatalf("reopen %d: last_seq = %d, want %d", i, r.LastSeq, i+1)
		}
		evs := appendEvents(t, db2, "", draft("s1", "r1", "message.delta", nil))
		if evs[0].ID <= first[0].ID || evs[0].Seq != int64(i+2) {
			t.Fatalf("reopen %d: appended id %d seq %d after id %d", i, evs[0].ID, evs[0].Seq, first[0].ID)
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	db, path := openDB(t)
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, sqlite.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err := sqlite.Open(context.Background(), path); err == nil {
		db.Close()
		t.Fatal("open of a database with a newer schema succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("unexpected error: %v", err)
	}
}

// allVersions are the versions of the migration files: while features
// are built in parallel, their numbers may have gaps.
func allVersions() []int {
	ents, err := os.ReadDir("migrations")
	if err != nil {
		panic(err)
	}
	var v []int
	for _, e := range ents {
		n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err == nil {
			v = append(v, n)
		}
	}
	return v
}

// A web process and a runner started together open a fresh file at the same
// moment: each migration is applied exactly once and both opens succeed.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	// 6: the newest layout a data dir of the old migrator can have (the
	// files are numbered without gaps up to there).
	for _, legacy := range []int{0, 2, 6} {
		t.Run(fmt.Sprintf("legacy=%d", legacy), func(t *testing.T) { concurrentOpen(t, legacy) })
	}
}

// concurrentOpen opens one file from several handles at once; legacy > 0
// makes it a data dir of the migrator before goose at that version first.
func concurrentOpen(t *testing.T, legacy int) {
	path := filepath.Join(t.TempDir(), "c.db")
	if legacy > 0 {
		legacyDB(t, path, legacy).Close()
	}
	const n = 4
	errs := make(chan error, n)
	dbs := make(chan *sqlite.DB, n)
	for range n {
		go func() {
			db, err := sqlite.Open(context.Background(), path)
			errs <- err
			dbs <- db
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("open: %v", err)
		}
		if db := <-dbs; db != nil {
			t.Cleanup(func() { db.Close() })
		}
	}
	if got := migrationRows(t, path); !slices.Equal(got, allVersions()) {
		t.Fatalf("versions = %v, want %v", got, allVersions())
	}
	if tableExists(t, path, "schema_migrations") {
		t.Fatal("schema_migrations is still there")
	}
}

// A database of the previous schema, with journaled runs, migrates: its
// runs' seqs go on and sessions start their own count.
func TestMigrationToSessionEvents(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := legacyDB(t, path, 2)
	for _, q := range []string{
		`INSERT INTO sessions (id, workspace, created_at_ms, updated_at_ms) VALUES ('s1', '/ws', 1, 1)`,
		`INSERT INTO runs (id, session_id, status, input, created_at_ms, last_seq) VALUES ('r1', 's1', 'completed', 'hi', 1, 2)`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES ('r1', 's1', 1, 'run.queued', 1, '{}'), ('r1', 's1', 2, 'message.user', 1, '{}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open the old database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	out := appendEvents(t, db, "", draft("s1", "r1", event.MessageDelta, nil), sessionDraft("s1", event.SessionUpdated))
	if out[0].Seq != 3 || out[1].Seq != 1 || out[1].ID <= out[0].ID {
		t.Fatalf("after migration: %+v", out)
	}
	checkStreamSeqs(t, allEvents(t, db, store.EventQuery{}))
	// The database itself still refuses a seq twice, per run and per
	// session.
	raw, err = sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES ('r1', 's1', 2, 'message.delta', 1, '{}')`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES ('', 's1', 1, 'session.updated', 1, '{}')`,
	} {
		if _, err := raw.Exec(q); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
			t.Errorf("%s: err = %v, want a UNIQUE violation", q, err)
		}
	}
}

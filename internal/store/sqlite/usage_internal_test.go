package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Migration 19 rolls up the usage the journal already holds: a database
// written before it reports the same usage once upgraded.
func TestUsageMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	old := fstest.MapFS{}
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "0019_") {
			break
		}
		b, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		old[e.Name()] = &fstest.MapFile{Data: b}
	}
	if err := applyMigrations(ctx, raw, old, 18); err != nil {
		t.Fatal(err)
	}
	const base = 1_699_999_200_000 // a bucket's start
	for _, q := range []string{
		`INSERT INTO sessions (id, workspace, created_at_ms, updated_at_ms) VALUES ('s1', '/ws', 1, 1)`,
		`INSERT INTO runs (id, session_id, status, input, model, created_at_ms, last_seq) VALUES ('r1', 's1', 'completed', 'hi', 'm-run', 1, 3), ('r2', 's1', 'running', 'hi', 'm-run', 1, 1)`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES
			('r1', 's1', 1, 'run.started', 1699999201000, '{"model":"m-a","provider":"p"}'),
			('r1', 's1', 2, 'usage', 1699999201000, '{"turn":{"input_tokens":10,"output_tokens":1,"cost_usd":0.5}}'),
			('r1', 's1', 3, 'usage', 1699999201000 + 2 * 900000, '{"turn":{"input_tokens":20,"output_tokens":2}}'),
			('r2', 's1', 1, 'usage', 1699999201000 + 2 * 900000, '{"turn":{"input_tokens":5,"cached_tokens":3}}')`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByBucket})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsageRow{
		{Start: fromMS(base), Usage: event.UsageTotals{InputTokens: 10, OutputTokens: 1, CostUSD: 0.5}, Runs: 1, Calls: 1},
		{Start: fromMS(base + 2*900_000), Usage: event.UsageTotals{InputTokens: 25, OutputTokens: 2, CachedTokens: 3}, Runs: 1, Calls: 2},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("buckets = %+v, want %+v", got, want)
	}
	models, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByModel})
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].Key != "m-a" || models[0].Usage.InputTokens != 30 || models[0].Runs != 1 ||
		models[1].Key != "m-run" || models[1].Usage.InputTokens != 5 || models[1].Runs != 1 {
		t.Fatalf("models = %+v", models)
	}
	// And the triggers carry on from there.
	err = db.Write(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: "r2", SessionID: "s1", Type: event.Usage,
			Payload: event.UsagePayload{Turn: event.UsageTotals{InputTokens: 1}}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	models, err = db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByModel})
	if err != nil || len(models) != 2 || models[1].Usage.InputTokens != 6 || models[1].Runs != 1 || models[1].Calls != 2 {
		t.Fatalf("after an append: %+v, %v", models, err)
	}
}

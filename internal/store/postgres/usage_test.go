package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// Migration 19 rolls up the usage the journal already holds: a database
// written before it reports the same usage once upgraded, and the triggers
// carry on from there.
func TestUsageMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	url := pg.Database(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := postgres.MigrateDownTo(ctx, url, 18); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	const base = 1_699_999_200_000 // a bucket's start
	for _, q := range []string{
		`INSERT INTO sessions (id, workspace, created_at_ms, updated_at_ms) VALUES ('s1', '/ws', 1, 1)`,
		`INSERT INTO runs (id, session_id, status, input, model, created_at_ms, last_seq) VALUES
			('r1', 's1', 'completed', 'hi', 'm-run', 1, 3), ('r2', 's1', 'running', 'hi', 'm-run', 1, 1)`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload) VALUES
			('r1', 's1', 1, 'run.started', 1699999201000, '{"model":"m-a","provider":"p"}'),
			('r1', 's1', 2, 'usage', 1699999201000, '{"turn":{"input_tokens":10,"output_tokens":1,"cost_usd":0.5}}'),
			('r1', 's1', 3, 'usage', 1699999201000 + 2 * 900000, '{"turn":{"input_tokens":20,"output_tokens":2}}'),
			('r2', 's1', 1, 'usage', 1699999201000 + 2 * 900000, '{"turn":{"input_tokens":5,"cached_tokens":3}}')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)

	db = openURL(t, url)
	got, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByBucket})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsageRow{
		{Usage: event.UsageTotals{InputTokens: 10, OutputTokens: 1, CostUSD: 0.5}, Runs: 1, Calls: 1},
		{Usage: event.UsageTotals{InputTokens: 25, OutputTokens: 2, CachedTokens: 3}, Runs: 1, Calls: 2},
	}
	if len(got) != 2 || got[0].Start.UnixMilli() != base || got[1].Start.UnixMilli() != base+2*900_000 {
		t.Fatalf("buckets = %+v", got)
	}
	for i := range want {
		if got[i].Usage != want[i].Usage || got[i].Runs != want[i].Runs || got[i].Calls != want[i].Calls {
			t.Fatalf("bucket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	models, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByModel})
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].Key != "m-a" || models[0].Usage.InputTokens != 30 || models[0].Runs != 1 ||
		models[1].Key != "m-run" || models[1].Usage.InputTokens != 5 || models[1].Runs != 1 {
		t.Fatalf("models = %+v", models)
	}
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

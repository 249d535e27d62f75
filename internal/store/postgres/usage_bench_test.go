package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkUsage is the SQLite store's benchmark of the same name on
// PostgreSQL: the usage query at 1,000, 10,000 and 100,000 runs against a
// plain count of the runs and a sum over the usage events, in the same run.
func BenchmarkUsage(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000, 100_000} {
		url := pg.Database(b)
		db := openURL(b, url)
		storetest.SeedUsage(b, db, n)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close(context.Background()) })
		if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		for _, base := range []struct{ name, query string }{
			{"baseline=count_runs", `SELECT count(*) FROM runs`},
			{"baseline=scan_usage_events", `SELECT sum((payload::jsonb -> 'turn' ->> 'input_tokens')::bigint)::bigint FROM events WHERE type = 'usage'`},
		} {
			b.Run(fmt.Sprintf("runs=%d/%s", n, base.name), func(b *testing.B) {
				for b.Loop() {
					var v int64
					if err := conn.QueryRow(ctx, base.query).Scan(&v); err != nil || v == 0 {
						b.Fatalf("%d, %v", v, err)
					}
				}
			})
		}
		for _, g := range []string{store.UsageByBucket, store.UsageByModel, store.UsageBySession} {
			b.Run(fmt.Sprintf("runs=%d/by=%s", n, g), func(b *testing.B) {
				for b.Loop() {
					rows, err := db.Usage(ctx, store.UsageQuery{GroupBy: g})
					if err != nil || len(rows) == 0 {
						b.Fatalf("%d rows, %v", len(rows), err)
					}
				}
			})
		}
	}
}

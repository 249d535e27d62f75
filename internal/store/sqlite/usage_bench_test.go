package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkUsage reads GET /api/usage's store query at 1,000, 10,000 and
// 100,000 runs (storetest.SeedUsage: 6 events a run, two of them usage),
// every run in the period, against two baselines of the same run: a plain
// count of the runs (the floor: one row read per run) and the sum the
// report would be without the rollup, over the journal's usage events.
func BenchmarkUsage(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000, 100_000} {
		db, path := openDB(b)
		storetest.SeedUsage(b, db, n)
		raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close() })
		for _, base := range []struct{ name, query string }{
			{"baseline=count_runs", `SELECT count(*) FROM runs`},
			{"baseline=scan_usage_events", `SELECT sum(json_extract(payload, '$.turn.input_tokens')) FROM events WHERE type = 'usage'`},
		} {
			b.Run(fmt.Sprintf("runs=%d/%s", n, base.name), func(b *testing.B) {
				for b.Loop() {
					var v int64
					if err := raw.QueryRowContext(ctx, base.query).Scan(&v); err != nil || v == 0 {
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

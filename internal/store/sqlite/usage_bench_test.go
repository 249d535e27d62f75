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

// BenchmarkUsageAppend is what migration 19's triggers add to an append:
// one op writes 100 runs of 6 events (storetest.SeedUsage's shape: a
// run.started, two usage events, three streamed fragments) in one
// transaction, into a store with the triggers and, the baseline of the
// same run, into one whose triggers were dropped.
func BenchmarkUsageAppend(b *testing.B) {
	for _, c := range []struct {
		name     string
		triggers bool
	}{{"baseline=no_triggers", false}, {"triggers", true}} {
		b.Run(c.name, func(b *testing.B) {
			db, path := openDB(b)
			if !c.triggers {
				raw, err := sql.Open("sqlite", "file:"+path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := raw.Exec(`DROP TRIGGER events_usage_insert; DROP TRIGGER events_usage_started`); err != nil {
					b.Fatal(err)
				}
				raw.Close()
			}
			n := 0
			for b.Loop() {
				storetest.SeedUsageFrom(b, db, n, 100)
				n += 100
			}
		})
	}
}

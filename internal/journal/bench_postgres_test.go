package journal

// The journal on PostgreSQL against a plain INSERT into the same server,
// in the same run (docs/BENCHMARKS.md). Under -test.bench pgtest's server
// is durable (fsync on), so commits cost what they cost in production on
// this disk.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func BenchmarkPostgres(b *testing.B) {
	b.Run("BaselinePlainInsert", func(b *testing.B) { benchPlainInsert(b, 1) })
	b.Run("JournalAppendSerial", benchPostgresAppendSerial)
	b.Run("BaselinePlainInsertParallel", func(b *testing.B) { benchPlainInsert(b, 16) })
	b.Run("JournalAppendParallel", benchPostgresAppendParallel)
}

// benchPlainInsert is the floor: one INSERT of a ~200-byte row into a bare
// two-column table, in its own transaction (autocommit: one round trip),
// from parallelism goroutines per CPU on a pool of as many connections.
func benchPlainInsert(b *testing.B, parallelism int) {
	ctx := context.Background()
	url := pg.Database(b)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = int32(max(4, parallelism*2))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE bare (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	body := string(benchPayload)
	insert := func() {
		if _, err := pool.Exec(ctx, `INSERT INTO bare (body) VALUES ($1)`, body); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	if parallelism == 1 {
		for range b.N {
			insert()
		}
	} else {
		b.SetParallelism(parallelism)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				insert()
			}
		})
	}
	b.StopTimer()
	reportRate(b, b.N, "events/s")
}

// benchPostgresAppendSerial is BenchmarkJournalAppendSerial on PostgreSQL:
// every append waits for its own commit.
func benchPostgresAppendSerial(b *testing.B) {
	e := newEnv(b, envOpts{open: storetest.Postgres(pg), noHub: true})
	e.seed(b, "s1", "r1")
	ctx := context.Background()
	op := appendOp(benchDraft("s1", "r1"))
	b.ResetTimer()
	for range b.N {
		if err := e.w.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRate(b, b.N, "events/s")
}

// benchPostgresAppendParallel is BenchmarkJournalAppendParallel on
// PostgreSQL: 16 goroutines per CPU, each on its own run, group commit.
func benchPostgresAppendParallel(b *testing.B) {
	cs := &countingStore{}
	e := newEnv(b, envOpts{open: storetest.Postgres(pg), noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	const maxRuns = 256
	runs := make([]string, maxRuns)
	for i := range runs {
		runs[i] = fmt.Sprintf("r%d", i)
	}
	e.seed(b, "s1", runs...)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		op := appendOp(benchDraft("s1", runs[next.Add(1)%maxRuns]))
		for pb.Next() {
			if err := e.w.Do(ctx, op); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportRate(b, b.N, "events/s")
	if sizes := cs.batchSizes(); len(sizes) > 0 {
		total := 0
		for _, n := range sizes {
			total += n
		}
		b.ReportMetric(float64(total)/float64(len(sizes)), "ops/commit")
	}
}

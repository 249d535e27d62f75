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
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func BenchmarkPostgres(b *testing.B) {
	b.Run("BaselinePlainInsert", func(b *testing.B) { benchPlainInsert(b, 1) })
	b.Run("JournalAppendSerial", func(b *testing.B) { benchPostgresAppendSerial(b, false) })
	b.Run("JournalSubmitAppendSerial", func(b *testing.B) { benchPostgresAppendSerial(b, true) })
	b.Run("Interleaved", func(b *testing.B) { benchPostgresInterleaved(b, false) })
	b.Run("InterleavedSubmitAppend", func(b *testing.B) { benchPostgresInterleaved(b, true) })
	b.Run("BaselinePlainInsertParallel", func(b *testing.B) { benchPlainInsert(b, 16) })
	b.Run("JournalAppendParallel", func(b *testing.B) { benchPostgresAppendParallel(b, false) })
	b.Run("JournalSubmitAppendParallel", func(b *testing.B) { benchPostgresAppendParallel(b, true) })
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

// benchPostgresInterleaved alternates one plain INSERT and one journal
// append per iteration, timing each, so that both meet the same load of a
// shared machine; it reports both and their ratio (journal rate / plain
// rate). The append is an Op (Writer.Do), or with submit a
// Writer.SubmitAppend, as the runner appends.
func benchPostgresInterleaved(b *testing.B, submit bool) {
	ctx := context.Background()
	e := newEnv(b, envOpts{open: storetest.Postgres(pg), noHub: true})
	e.seed(b, "s1", "r1")
	pool, err := pgxpool.New(ctx, pg.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE bare (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	body := string(benchPayload)
	dr := benchDraft("s1", "r1")
	op := appendOp(dr)
	var plain, journal time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := pool.Exec(ctx, `INSERT INTO bare (body) VALUES ($1)`, body); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := appendOnce(ctx, e.w, submit, dr, op); err != nil {
			b.Fatal(err)
		}
		plain, journal = plain+t1.Sub(t0), journal+time.Since(t1)
	}
	b.StopTimer()
	b.ReportMetric(float64(plain.Microseconds())/float64(b.N), "plain-µs/op")
	b.ReportMetric(float64(journal.Microseconds())/float64(b.N), "journal-µs/op")
	b.ReportMetric(plain.Seconds()/journal.Seconds(), "journal/plain-rate")
}

// appendOnce appends dr and waits for its commit: as op with Do, or with
// SubmitAppend.
func appendOnce(ctx context.Context, w *Writer, submit bool, dr event.Draft, op Op) error {
	if submit {
		return <-w.SubmitAppend("", func() event.Draft { return dr })
	}
	return w.Do(ctx, op)
}

// benchPostgresAppendSerial is BenchmarkJournalAppendSerial on PostgreSQL:
// every append waits for its own commit.
func benchPostgresAppendSerial(b *testing.B, submit bool) {
	e := newEnv(b, envOpts{open: storetest.Postgres(pg), noHub: true})
	e.seed(b, "s1", "r1")
	ctx := context.Background()
	dr := benchDraft("s1", "r1")
	op := appendOp(dr)
	b.ResetTimer()
	for range b.N {
		if err := appendOnce(ctx, e.w, submit, dr, op); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRate(b, b.N, "events/s")
}

// benchPostgresAppendParallel is BenchmarkJournalAppendParallel on
// PostgreSQL: 16 goroutines per CPU, each on its own run, group commit;
// merged, each appends with SubmitAppend (as the runner streams deltas),
// so the appends of a commit are one statement.
func benchPostgresAppendParallel(b *testing.B, merged bool) {
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
		dr := benchDraft("s1", runs[next.Add(1)%maxRuns])
		op := appendOp(dr)
		for pb.Next() {
			var err error
			if merged {
				err = <-e.w.SubmitAppend("", func() event.Draft { return dr })
			} else {
				err = e.w.Do(ctx, op)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportRate(b, b.N, "events/s")
	if sizes := cs.batchSizes(); len(sizes) > 0 {
		// Per commit, not per body: merged appends are one body.
		b.ReportMetric(float64(b.N)/float64(len(sizes)), "appends/commit")
	}
}

package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// BenchmarkAppendLock is what the append lock costs: one-event appends
// (SubmitAppend, as a runner streams), each goroutine on its own run, from
// several processes at once (stores=N, each a pool with its journal
// writer, as a process has; 8 goroutines each), with every write transaction taking the lock and
// without it (the design that skips late commits,
// TestLateCommitWithoutAppendLock). Under -test.bench the server is
// durable (fsync on). docs/BENCHMARKS.md has numbers.
func BenchmarkAppendLock(b *testing.B) {
	for _, stores := range []int{1, 4} {
		for _, lock := range []bool{true, false} {
			name := fmt.Sprintf("stores=%d/lock=%v", stores, lock)
			b.Run(name, func(b *testing.B) { benchAppendLock(b, stores, lock) })
		}
	}
}

func benchAppendLock(b *testing.B, n int, lock bool) {
	ctx := context.Background()
	url := pg.Database(b)
	open := postgres.Open
	if !lock {
		open = postgres.OpenWithoutAppendLock
	}
	sts := make([]*postgres.DB, n)
	ws := make([]*journal.Writer, n)
	for i := range sts {
		st, err := open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		sts[i] = st
		ws[i] = journal.NewWriter(st, nil, slog.New(slog.DiscardHandler))
		ws[i].Start()
		defer ws[i].Close()
	}
	const runs = 256
	err := sts[0].Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws"}); err != nil {
			return err
		}
		for i := range runs {
			if err := tx.InsertRun(ctx, store.Run{ID: fmt.Sprintf("r%d", i), SessionID: "s", Status: "running", Input: "x"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	payload := map[string]string{"delta": "a ~200-byte delta ..................................................................................................................................................."}
	var next atomic.Int64
	b.SetParallelism(4 * n) // 8 goroutines per store on 2 CPUs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1)
		w := ws[int(i)%n]
		d := event.Draft{SessionID: "s", RunID: fmt.Sprintf("r%d", i%runs), Type: event.MessageDelta, Payload: payload}
		for pb.Next() {
			if err := <-w.SubmitAppend("", func() event.Draft { return d }); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "events/s")
	}
}

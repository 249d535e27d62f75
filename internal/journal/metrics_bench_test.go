package journal

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/telemetry"
)

// BenchmarkJournalMetrics is the cost of the journal's metrics (an
// append-latency observation per Op, a commit-duration observation per
// transaction, both into the process's Prometheus registry) against the
// same appends with no observer, in the same run: serial appends (one
// fsync each) and parallel ones (group commit, where the per-Op work of
// the writer goroutine weighs most).
func BenchmarkJournalMetrics(b *testing.B) {
	for _, mode := range []string{"serial", "parallel"} {
		for _, metrics := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/metrics=%v", mode, metrics), func(b *testing.B) {
				e := newEnv(b, envOpts{noHub: true})
				if metrics {
					// The env's writer has no observer: replace it.
					e.w.Close()
					tel, err := telemetry.New(telemetry.Config{Log: discard})
					if err != nil {
						b.Fatal(err)
					}
					e.w = NewWriter(e.db, nil, discard, WithObserver(tel))
					e.w.Start()
					b.Cleanup(e.w.Close)
				}
				const maxRuns = 256
				runs := make([]string, maxRuns)
				for i := range runs {
					runs[i] = fmt.Sprintf("r%d", i)
				}
				e.seed(b, "s1", runs...)
				ctx := context.Background()
				b.ResetTimer()
				if mode == "serial" {
					op := appendOp(benchDraft("s1", "r1"))
					for range b.N {
						if err := e.w.Do(ctx, op); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					var next atomic.Int64
					b.SetParallelism(16)
					b.RunParallel(func(pb *testing.PB) {
						op := appendOp(benchDraft("s1", runs[next.Add(1)%maxRuns]))
						for pb.Next() {
							if err := e.w.Do(ctx, op); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.StopTimer()
				reportRate(b, b.N, "events/s")
			})
		}
	}
}

// BenchmarkObserveAppend is what one Op's metrics cost the writer
// goroutine, without the database: the two observations of a one-Op
// commit.
func BenchmarkObserveAppend(b *testing.B) {
	tel, err := telemetry.New(telemetry.Config{Log: discard})
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		tel.Committed(300_000, nil)
		tel.Appended(310_000)
	}
}

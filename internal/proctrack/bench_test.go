//go:build linux

package proctrack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"
)

// BenchmarkSweep is what every watchdog sweep (every lease/3) costs a
// runner: an empty registry is the baseline; with records of live
// processes of a live runner (the steady state), each costs a read of the
// record and of /proc/<runner>/stat, and nothing is killed.
func BenchmarkSweep(b *testing.B) {
	for _, n := range []int{0, 1, 16} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			r, err := Open(b.TempDir(), "rnr_bench", slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				// This process stands for the tracked one: alive, and
				// never killed because its runner (also this process) is.
				if err := r.Track(Process{ProcessID: fmt.Sprintf("proc_%d", i), PID: os.Getpid(),
					Command: "sleep 300", StartedAt: time.Now(), Deadline: time.Now().Add(time.Hour)}); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			for b.Loop() {
				r.Sweep(ctx)
			}
			if recs, _ := r.Records(); len(recs) != n {
				b.Fatalf("%d records left of %d: the sweep removed live ones", len(recs), n)
			}
		})
	}
}

package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Benchmarks of the store's share of a journal commit. Commits are fsync
// bound, so ns/op mostly measures the disk; usr-µs/op (user CPU of the whole
// process per op) is the number that shows the store's own work.

var benchPayload = json.RawMessage(`{"id":"msg_01J8Z3","delta":"` + strings.Repeat("x", 170) + `"}`)

func rusage() (user, total time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func measureCPU(b *testing.B, fn func()) {
	b.ResetTimer()
	u0, t0 := rusage()
	fn()
	u1, t1 := rusage()
	b.StopTimer()
	b.ReportMetric(float64((u1-u0).Microseconds())/float64(b.N), "usr-µs/op")
	b.ReportMetric(float64((t1-t0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkAppendCommit is one transaction per op: ops bodies of drafts
// events each, every body on its own run, as the journal writer batches
// them.
func BenchmarkAppendCommit(b *testing.B) {
	for _, c := range []struct{ ops, drafts int }{{1, 1}, {16, 1}, {1, 100}} {
		b.Run(fmt.Sprintf("ops=%d/drafts=%d", c.ops, c.drafts), func(b *testing.B) {
			ctx := context.Background()
			db, _ := openDB(b)
			fns := make([]func(store.Tx) error, c.ops)
			for i := range fns {
				rid := fmt.Sprintf("r%d", i)
				addSessionRun(b, db, "s"+rid, rid)
				drafts := make([]event.Draft, c.drafts)
				for j := range drafts {
					drafts[j] = draft("s"+rid, rid, event.MessageDelta, benchPayload)
				}
				fns[i] = func(tx store.Tx) error {
					_, err := tx.AppendEvents(ctx, "runner-1", drafts...)
					return err
				}
			}
			measureCPU(b, func() {
				for range b.N {
					errs, err := db.WriteBatch(ctx, fns)
					if err != nil {
						b.Fatal(err)
					}
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		})
	}
}

// BenchmarkEventsTail is the hub's read after each commit: the one event
// after its cursor.
func BenchmarkEventsTail(b *testing.B) {
	ctx := context.Background()
	db, _ := openDB(b)
	addSessionRun(b, db, "s1", "r1")
	drafts := make([]event.Draft, 1000)
	for i := range drafts {
		drafts[i] = draft("s1", "r1", event.MessageDelta, benchPayload)
	}
	evs := appendEvents(b, db, "", drafts...)
	after := evs[len(evs)-2].ID
	measureCPU(b, func() {
		for range b.N {
			got, err := db.Events(ctx, store.EventQuery{AfterID: after, Limit: 1000})
			if err != nil || len(got) != 1 {
				b.Fatal(len(got), err)
			}
		}
	})
}

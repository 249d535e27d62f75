package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkRunWaiting is the cost of saying what a queued run waits for
// (GET /api/runs/{id} reads every unfinished run and the pending requests)
// as the queue grows, against the same GET of a running run, which reads
// no queue: the baseline of the same handler in the same run.
func BenchmarkRunWaiting(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		url, queued, running := benchQueue(b, n)
		for _, c := range []struct{ name, runID string }{{"running", running}, {"queued", queued}} {
			b.Run(fmt.Sprintf("%s/queue=%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					res, err := http.Get(url + "/api/runs/" + c.runID)
					if err != nil || res.StatusCode != http.StatusOK {
						b.Fatal(err, res.StatusCode)
					}
					res.Body.Close()
				}
			})
		}
	}
}

// benchQueue serves the API over a store with n queued runs, one per
// session, and one running run; it returns the newest queued run.
func benchQueue(b *testing.B, n int) (url, queued, running string) {
	b.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	j := journaltest.Start(b, storetest.SQLite)
	st, w := j.Store, j.Writer
	now := time.Now().UTC()
	for done := 0; done < n; {
		batch := min(1000, n-done)
		err := w.Do(ctx, func(tx store.Tx) error {
			for i := 0; i < batch; i++ {
				sid := id.New("ses")
				if err := tx.InsertSession(ctx, store.Session{ID: sid, CreatedAt: now, UpdatedAt: now}); err != nil {
					return err
				}
				queued = id.New("run")
				r := store.Run{ID: queued, SessionID: sid, Status: run.Queued, Input: "x", CreatedAt: now.Add(time.Duration(done+i) * time.Millisecond)}
				if err := tx.InsertRun(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
	err := w.Do(ctx, func(tx store.Tx) error {
		sid := id.New("ses")
		if err := tx.InsertSession(ctx, store.Session{ID: sid, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		running = id.New("run")
		return tx.InsertRun(ctx, store.Run{ID: running, SessionID: sid, Status: run.Running, RunnerID: "rnr_x",
			LeaseExpiresAt: now.Add(time.Hour), CreatedAt: now, StartedAt: now})
	})
	if err != nil {
		b.Fatal(err)
	}
	svc := control.NewService(st, w, b.TempDir(), control.RetryPolicy{})
	srv := httptest.NewServer(api.New(st, svc, j.Hub, api.Info{Version: "bench"}, api.Options{}, log).Handler())
	b.Cleanup(func() {
		j.StopHub()
		srv.Close()
	})
	return srv.URL, queued, running
}

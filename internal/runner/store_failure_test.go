package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// sqliteErr looks like the SQLite driver's errors: a result code.
type sqliteErr struct{ code int }

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error %d", e.code) }
func (e sqliteErr) Code() int     { return e.code }

// failingStore refuses every write while failing is set, as a full disk
// or a database locked by another process does.
type failingStore struct {
	store.Store
	failing atomic.Bool
	code    int
}

func (f *failingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	if f.failing.Load() {
		return sqliteErr{f.code}
	}
	return f.Store.Write(ctx, fn)
}

func (f *failingStore) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	if f.failing.Load() {
		return nil, sqliteErr{f.code}
	}
	return f.Store.WriteBatch(ctx, fns)
}

// A store that refuses writes for a while mid-run (disk full, database
// locked) never leaves a run running for ever or ends it failed: once the
// store answers again the run is recovering and completes on its retry.
// The refusals are made up above the store, so one store kind is enough.
func TestStoreFailureMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		code int
	}{{"disk full", 13}, {"database locked", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var steps []demo.Step
			for i := range 40 {
				steps = append(steps, text(fmt.Sprintf("w%02d ", i)), demo.Step{Kind: demo.KindDelay, DelayMS: 25})
			}
			e := newEnv(t, storetest.SQLite, script(turn(steps...)), control.RetryPolicy{Max: 2, Backoff: 50 * time.Millisecond})
			fs := &failingStore{Store: e.st, code: tc.code}
			log := slog.New(slog.DiscardHandler)
			w := journal.NewWriter(fs, e.hub.Poke, log)
			w.Start()
			t.Cleanup(w.Close)
			reg := models.New(models.File{}, func(string) string { return "" }, nil, demo.New(e.script))
			r := runner.New(runner.Config{Lease: 600 * time.Millisecond, ApprovalMode: "manual"}, fs, w, e.hub,
				tool.NewRegistry(tool.NewRunCommand(tool.Config{})), reg, log)
			ctx, cancel := context.WithCancel(e.ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			ru := e.send("talk")
			e.wait(ru.ID, "streaming", func(x store.Run) bool { return x.Status == run.Running && x.LastSeq > 6 })
			fs.failing.Store(true)
			time.Sleep(1500 * time.Millisecond) // the run's writes fail, its execution ends
			fs.failing.Store(false)
			got := e.wait(ru.ID, "the run to complete after the store came back", func(x store.Run) bool { return x.Status.Terminal() })
			if got.Status != run.Completed {
				t.Fatalf("run ended %s (%s: %s), want completed after a retry", got.Status, got.ErrorCode, got.ErrorMessage)
			}
			evs := e.events(ru.ID)
			recovering := false
			for _, ev := range evs {
				if ev.Type == event.RunStatus && strings.Contains(string(ev.Payload), `"recovering"`) {
					recovering = true
				}
			}
			if !recovering {
				t.Errorf("the run never went recovering: %d events", len(evs))
			}
		})
	}
}

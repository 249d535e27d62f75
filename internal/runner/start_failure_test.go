package runner_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// The store failing as a runner starts (the database restarting; on
// PostgreSQL, the session of a runner frozen inside its first heartbeat
// ended by the server) is as passing as it is later: the runner keeps
// trying and then claims work. Run used to return the error, leaving a
// `caduceus runner` process alive that claimed nothing (found by
// e2e/cluster's BenchmarkClaimThroughput, whose runners are SIGSTOPped).
func TestStoreFailureAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.SQLite, script(turn(text("ok"))), control.RetryPolicy{})
	fs := &failingStore{Store: e.st, code: 5}
	fs.failing.Store(true)
	log := slog.New(slog.DiscardHandler)
	w := journal.NewWriter(fs, e.hub.Poke, log)
	w.Start()
	t.Cleanup(w.Close)
	reg := models.New(models.File{}, func(string) string { return "" }, nil, demo.New(e.script))
	r := runner.New(runner.Config{Lease: 300 * time.Millisecond, ApprovalMode: "manual"}, fs, w, e.hub,
		tool.NewRegistry(tool.NewRunCommand(tool.Config{})), reg, log)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ru := e.send("hi")
	select {
	case err := <-done:
		done <- err // for the cleanup
		t.Fatalf("the runner gave up while the store failed: %v", err)
	case <-time.After(time.Second):
	}
	fs.failing.Store(false)
	got := e.wait(ru.ID, "the run to complete once the store answers", func(x store.Run) bool { return x.Status.Terminal() })
	if got.Status != run.Completed || got.RunnerID != "" && got.RunnerID != r.ID() {
		t.Fatalf("run ended %s on %q, want completed", got.Status, got.RunnerID)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the runner's stop: %v", err)
	}
	done <- nil
}

package runner

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// BenchmarkGuardStep measures what the budget guard adds to one step of a
// run (a model call's usage, then a tool call), on SQLite with the
// journal writer: "no-limits" checks in memory and queues the day's
// counter without waiting; "day-limit" waits for the counter to commit
// and reads the day back, as it must to enforce a server-wide limit;
// "baseline" is the same step with no guard at all (nothing to do).
func BenchmarkGuardStep(b *testing.B) {
	for _, bc := range []struct {
		name  string
		guard bool
		day   budget.Limits
	}{{"baseline", false, budget.Limits{}}, {"no-limits", true, budget.Limits{}}, {"day-limit", true, budget.Limits{MaxTokens: 1 << 40}}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w := journal.NewWriter(st, nil, log)
			w.Start()
			defer w.Close()
			svc := control.NewService(st, w, b.TempDir(), control.RetryPolicy{})
			sess, err := svc.CreateSession(ctx, control.NewSession{Title: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			ru, err := svc.Send(ctx, sess.ID, control.Message{Content: "go"})
			if err != nil {
				b.Fatal(err)
			}
			if !bc.day.Zero() {
				if _, err := svc.SetBudget(ctx, budget.ScopeDay, "", bc.day); err != nil {
					b.Fatal(err)
				}
			}
			hub := journal.NewHub(st, 0, log)
			r := New(Config{StuckRepeats: -1, HealthEvery: -1}, st, w, hub, tool.NewRegistry(), nil, log)
			g, err := r.newGuard(ctx, newHost(r, ru), ru, sess, store.Profile{}, false)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if !bc.guard {
					continue
				}
				if err := g.check(ctx, agent.Step{Turn: event.UsageTotals{InputTokens: 100, OutputTokens: 10}, Turns: i + 1}); err != nil {
					b.Fatal(err)
				}
				if err := g.check(ctx, agent.Step{Turns: i + 1, Tool: "read_file", Args: []byte(`{"path":"a"}`), ToolDone: event.ToolOK}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
		})
	}
}

package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// BenchmarkAppendSessionEvent is what project events (migration 15) cost
// the appends that share their statement: one session.updated appended in
// a transaction of its own by the statement that also reserves projects'
// seqs, and by the same statement without that part (the baseline).
// docs/BENCHMARKS.md has numbers.
func BenchmarkAppendSessionEvent(b *testing.B) {
	base := postgres.AppendSQLSessionsOnly
	if !strings.Contains(base, "coalesce(r.base, s.base) IS NOT NULL") || strings.Contains(base, "projects") {
		b.Fatalf("the baseline did not come out of the append statement:\n%s", base)
	}
	ctx := context.Background()
	st, err := postgres.Open(ctx, pg.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws"}); err != nil {
			return err
		}
		return tx.InsertProject(ctx, store.Project{ID: "p", Name: "p"})
	}); err != nil {
		b.Fatal(err)
	}
	d := event.Draft{SessionID: "s", Type: event.SessionUpdated, Payload: map[string]string{"id": "s"}}
	for _, c := range []struct{ name, sql string }{{"sql=sessions-only", base}, {"sql=sessions-and-projects", postgres.AppendSQL}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				n, err := st.ExecAppend(ctx, c.sql, d)
				if err != nil {
					b.Fatal(err)
				}
				if n != 1 {
					b.Fatalf("appended %d rows, want 1", n)
				}
			}
		})
	}
}

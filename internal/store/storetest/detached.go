package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// testWriteBatchIgnoresBodyCancel: a body's statements run whatever the
// context it passes them says (see store.Tx). A body whose caller gave up
// still writes all it meant to, and its batch mates are untouched.
func testWriteBatchIgnoresBodyCancel(t *testing.T, open Open) {
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithDeadline(context.Background(), t0)
	defer stop()
	body := func(ctx context.Context, sid string) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := tx.InsertSession(ctx, store.Session{ID: sid, Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			if _, err := tx.GetSession(ctx, sid); err != nil {
				return err
			}
			_, err := tx.AppendEvents(ctx, "runner-1", draft("s1", "r1", event.MessageDelta, nil))
			return err
		}
	}
	tests := []struct {
		name string
		ctxs []context.Context
	}{
		{"alone, cancelled", []context.Context{cancelled}},
		{"between live bodies, cancelled", []context.Context{context.Background(), cancelled, context.Background()}},
		{"deadline passed", []context.Context{expired, context.Background()}},
	}
	n := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fns := make([]func(store.Tx) error, len(tc.ctxs))
			ids := make([]string, len(tc.ctxs))
			for i, ctx := range tc.ctxs {
				n++
				ids[i] = fmt.Sprintf("b%d", n)
				fns[i] = body(ctx, ids[i])
			}
			errs, err := db.WriteBatch(context.Background(), fns)
			if err != nil {
				t.Fatalf("batch: %v", err)
			}
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("bodies: %v", err)
			}
			for _, id := range ids {
				if _, err := db.GetSession(context.Background(), id); err != nil {
					t.Fatalf("session %s: %v", id, err)
				}
			}
		})
	}
	evs, err := db.Events(context.Background(), store.EventQuery{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n {
		t.Fatalf("%d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("seq %d at %d", ev.Seq, i)
		}
	}
}

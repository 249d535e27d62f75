package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// changeReporter is what the journal writer asks of a store while writes
// fail: whether a committed batch changed a row.
type changeReporter interface {
	WriteBatchChanges(ctx context.Context, fns []func(store.Tx) error) ([]error, bool, error)
}

// WriteBatchChanges says whether a committed batch changed a row: on a full
// disk a batch that changed nothing still commits, so the journal writer
// trusts only one that changed something to show that writes work again.
func testWriteBatchChanges(t *testing.T, open Open) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	insert := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.InsertSession(ctx, store.Session{ID: id, Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0})
		}
	}
	appendOne := func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", draft("base", "base-run", event.MessageDelta, nil))
		return err
	}
	read := func(tx store.Tx) error {
		_, err := tx.LastEventID(ctx)
		return err
	}
	fail := func(store.Tx) error { return errBoom }
	insertThenFail := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := insert(id)(tx); err != nil {
				return err
			}
			return errBoom
		}
	}
	tests := []struct {
		name string
		fns  []func(store.Tx) error
		want bool
	}{
		{"one write", []func(store.Tx) error{insert("a")}, true},
		{"an append", []func(store.Tx) error{appendOne}, true},
		{"a read", []func(store.Tx) error{read}, false},
		{"a body that does nothing", []func(store.Tx) error{func(store.Tx) error { return nil }}, false},
		{"a failing body", []func(store.Tx) error{fail}, false},
		{"a write rolled back", []func(store.Tx) error{insertThenFail("a")}, false},
		{"a constraint failure", []func(store.Tx) error{insert("base")}, false},
		{"writes all rolled back", []func(store.Tx) error{insertThenFail("a"), insertThenFail("b")}, false},
		{"reads and a failure", []func(store.Tx) error{read, fail, read}, false},
		{"a write among failures", []func(store.Tx) error{fail, insert("a"), insertThenFail("b")}, true},
		{"appends among reads", []func(store.Tx) error{read, appendOne, appendOne}, true},
		{"empty batch", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fresh(t, open)
			cr, ok := db.(changeReporter)
			if !ok {
				t.Fatalf("%T has no WriteBatchChanges", db)
			}
			// Changes made before the batch are not the batch's.
			addSessionRun(t, db, "base", "base-run")
			errs, changed, err := cr.WriteBatchChanges(ctx, tc.fns)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != len(tc.fns) {
				t.Fatalf("%d errors for %d bodies", len(errs), len(tc.fns))
			}
			if changed != tc.want {
				t.Fatalf("changed = %v, want %v (errs %v)", changed, tc.want, errs)
			}
			if _, err := db.GetSession(ctx, "a"); tc.want && errors.Is(err, store.ErrNotFound) &&
				getRun(t, db, "base-run").LastSeq == 0 {
				t.Fatalf("a batch that changed rows committed none")
			}
		})
	}
}

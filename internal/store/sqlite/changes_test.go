package sqlite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// WriteBatchChanges says whether a committed batch changed a row: the
// journal writer trusts only such a commit to show that writes work again.
func TestWriteBatchChanges(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	insert := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.InsertSession(ctx, store.Session{ID: id, Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0})
		}
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
		{"a read", []func(store.Tx) error{read}, false},
		{"a body that does nothing", []func(store.Tx) error{func(store.Tx) error { return nil }}, false},
		{"a failing body", []func(store.Tx) error{fail}, false},
		{"a write rolled back", []func(store.Tx) error{insertThenFail("a")}, false},
		{"writes all rolled back", []func(store.Tx) error{insertThenFail("a"), insertThenFail("b")}, false},
		{"reads and a failure", []func(store.Tx) error{read, fail, read}, false},
		{"a write among failures", []func(store.Tx) error{fail, insert("a"), insertThenFail("b")}, true},
		{"empty batch", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := openDB(t)
			// Changes made before the batch are not the batch's.
			write(t, db, insert("before"))
			errs, changed, err := db.WriteBatchChanges(ctx, tc.fns)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != len(tc.fns) {
				t.Fatalf("%d errors for %d bodies", len(errs), len(tc.fns))
			}
			if changed != tc.want {
				t.Fatalf("changed = %v, want %v (errs %v)", changed, tc.want, errs)
			}
		})
	}
}

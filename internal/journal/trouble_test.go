package journal

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// diskFullErr looks like the SQLite driver's SQLITE_FULL.
type diskFullErr struct{}

func (diskFullErr) Error() string { return "database or disk is full (13)" }
func (diskFullErr) Code() int     { return 13 }

// fullDisk behaves as a SQLite file on a full disk: a transaction that
// changes rows fails, one that changes nothing commits.
type fullDisk struct {
	*sqlite.DB
	full atomic.Bool
}

func (f *fullDisk) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	errs, _, err := f.WriteBatchChanges(ctx, fns)
	return errs, err
}

func (f *fullDisk) WriteBatchChanges(ctx context.Context, fns []func(store.Tx) error) ([]error, bool, error) {
	errs, changed, err := f.DB.WriteBatchChanges(ctx, fns)
	if err == nil && changed && f.full.Load() {
		return nil, false, fmt.Errorf("commit: %w", diskFullErr{})
	}
	return errs, changed, err
}

// While the disk is full, a commit that changed nothing does not make the
// trouble go away; the first commit that changes something does.
func TestTroubleOutlivesEmptyCommits(t *testing.T) {
	ctx := context.Background()
	n := 0
	insert := func(tx store.Tx) error {
		n++
		return tx.InsertSession(ctx, store.Session{ID: fmt.Sprintf("s%d", n), Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0})
	}
	tests := []struct {
		name  string
		empty Op
	}{
		{"a body that writes nothing", func(store.Tx) error { return nil }},
		{"a body that fails", func(store.Tx) error { return store.ErrConflict }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fd *fullDisk
			e := newEnv(t, envOpts{noHub: true, wrap: func(st store.Store) store.Store {
				fd = &fullDisk{DB: st.(*sqlite.DB)}
				return fd
			}})
			fd.full.Store(true)
			if err := e.w.Do(ctx, insert); !store.Full(err) {
				t.Fatalf("write on a full disk: %v", err)
			}
			tr := e.w.Trouble()
			if tr == nil || !store.Full(tr.Err) {
				t.Fatalf("trouble after a failed write = %+v", tr)
			}
			if err := e.w.Do(ctx, tc.empty); err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("empty commit: %v", err)
			}
			if got := e.w.Trouble(); got != tr {
				t.Fatalf("trouble after an empty commit = %+v, want the one since %s", got, tr.Since)
			}
			fd.full.Store(false)
			if err := e.w.Do(ctx, tc.empty); err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("empty commit: %v", err)
			}
			if e.w.Trouble() == nil {
				t.Fatal("an empty commit cleared the trouble: it proves nothing")
			}
			if err := e.w.Do(ctx, insert); err != nil {
				t.Fatalf("write once space returned: %v", err)
			}
			if got := e.w.Trouble(); got != nil {
				t.Fatalf("trouble after a successful write = %+v", got)
			}
		})
	}
}

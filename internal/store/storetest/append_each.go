package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// appendEacher is a store that writes many appends at once
// (postgres.DB.AppendEach); the journal writer uses it when it has one.
type appendEacher interface {
	AppendEach(ctx context.Context, appends []store.Append) ([]error, error)
}

// AppendEach writes each draft as a WriteBatch of one AppendEvents body per
// draft would: what cannot be written fails alone with AppendEvents' error,
// the rest commit in order with gap-free seqs.
func testAppendEach(t *testing.T, open Open) {
	ctx := context.Background()
	delta := func(rid string) event.Draft { return draft("s1", rid, event.MessageDelta, nil) }
	done := func(rid string) event.Draft { return draft("s1", rid, event.RunDone, nil) }
	a := func(fence string, d event.Draft) store.Append { return store.Append{Fence: fence, Draft: d} }
	tests := []struct {
		name    string
		appends []store.Append
		want    []error // nil: appended
		events  map[string]int
	}{
		{"one", []store.Append{a("runner-1", delta("r1"))}, []error{nil}, map[string]int{"r1": 1}},
		{"several runs, fences mixed",
			[]store.Append{a("runner-1", delta("r1")), a("runner-1", delta("r2")), a("runner-1", delta("r1")),
				a("", delta("r3")), a("runner-1", delta("r2"))},
			[]error{nil, nil, nil, nil, nil}, map[string]int{"r1": 2, "r2": 2, "r3": 1}},
		{"fenced out among others",
			[]store.Append{a("runner-1", delta("r1")), a("runner-1", delta("r3")), a("runner-1", delta("r1")), a("runner-2", delta("r3"))},
			[]error{nil, store.ErrLeaseLost, nil, nil}, map[string]int{"r1": 2, "r3": 1}},
		{"a missing run",
			[]store.Append{a("", delta("nope")), a("", delta("r1"))},
			[]error{store.ErrNotFound, nil}, map[string]int{"r1": 1}},
		{"a draft that does not fit",
			[]store.Append{a("runner-1", draft("s1", "", event.SessionUpdated, nil)), a("runner-1", delta("r1"))},
			[]error{store.ErrConflict, nil}, map[string]int{"r1": 1}},
		{"a second terminal event",
			[]store.Append{a("runner-1", delta("r1")), a("runner-1", done("r2")), a("runner-1", done("r2")), a("runner-1", delta("r2"))},
			[]error{nil, nil, store.ErrConflict, nil}, map[string]int{"r1": 1, "r2": 2}},
		{"a session event", []store.Append{a("", draft("s1", "", event.SessionUpdated, nil)), a("", delta("r1"))},
			[]error{nil, nil}, map[string]int{"": 1, "r1": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fresh(t, open)
			ae, ok := db.(appendEacher)
			if !ok {
				t.Skipf("%T appends through WriteBatch only", db)
			}
			addSessionRun(t, db, "s1", "r1")
			addRun(t, db, store.Run{ID: "r2", SessionID: "s1", Status: run.Running, RunnerID: "runner-1", LeaseExpiresAt: at(60_000)})
			addRun(t, db, store.Run{ID: "r3", SessionID: "s1", Status: run.Running, RunnerID: "runner-2", LeaseExpiresAt: at(60_000)})
			errs, err := ae.AppendEach(ctx, tc.appends)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("%d errors for %d appends", len(errs), len(tc.want))
			}
			for i, want := range tc.want {
				if (want == nil) != (errs[i] == nil) || want != nil && !errors.Is(errs[i], want) {
					t.Errorf("append %d: err %v, want %v", i, errs[i], want)
				}
			}
			// The written drafts, in the order given, with gap-free seqs.
			var wantOrder []string
			for i, ap := range tc.appends {
				if tc.want[i] == nil {
					wantOrder = append(wantOrder, ap.Draft.RunID+"/"+string(ap.Draft.Type))
				}
			}
			evs := allEvents(t, db, store.EventQuery{SessionID: "s1"})
			var got []string
			perRun := map[string]int{}
			for _, e := range evs {
				if e.Type == event.SessionCreated {
					continue
				}
				got = append(got, e.RunID+"/"+string(e.Type))
				perRun[e.RunID]++
				if e.Seq != int64(perRun[e.RunID]) {
					t.Errorf("event %d of %q has seq %d", perRun[e.RunID], e.RunID, e.Seq)
				}
			}
			if len(got) != len(wantOrder) {
				t.Fatalf("events %v, want %v", got, wantOrder)
			}
			for i := range got {
				if got[i] != wantOrder[i] {
					t.Fatalf("events %v, want %v", got, wantOrder)
				}
			}
			for rid, n := range tc.events {
				if rid == "" {
					continue
				}
				if last := getRun(t, db, rid).LastSeq; last != int64(n) {
					t.Errorf("run %s: last_seq %d, want %d", rid, last, n)
				}
			}
		})
	}
}

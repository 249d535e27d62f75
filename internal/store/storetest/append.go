package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// AppendEvents inserts small calls row by row and large ones with one
// statement: both must assign the same ids and seqs, and fail whole.
func testAppendEventsCallSizes(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	var returned []event.Event
	for _, n := range []int{1, 2, 7, 8, 9, 50} {
		drafts := make([]event.Draft, n)
		for i := range drafts {
			sid, rid := "s1", "r1"
			if i%3 == 1 {
				sid, rid = "s2", "r2"
			}
			drafts[i] = draft(sid, rid, event.MessageDelta, json.RawMessage(fmt.Sprintf(`{"n":%d,"i":%d}`, n, i)))
		}
		out := appendEvents(t, db, "runner-1", drafts...)
		if len(out) != n {
			t.Fatalf("call of %d: %d events", n, len(out))
		}
		for i, e := range out {
			if e.RunID != drafts[i].RunID || string(e.Payload) != string(drafts[i].Payload.(json.RawMessage)) {
				t.Fatalf("call of %d, draft %d: got %+v", n, i, e)
			}
		}
		returned = append(returned, out...)
	}
	stored := allEvents(t, db, store.EventQuery{})
	if len(stored) != len(returned) {
		t.Fatalf("stored %d events, returned %d", len(stored), len(returned))
	}
	for i := range stored {
		s, r := stored[i], returned[i]
		if s.ID != r.ID || s.Seq != r.Seq || s.RunID != r.RunID || string(s.Payload) != string(r.Payload) {
			t.Fatalf("event %d: stored %+v, returned %+v", i, s, r)
		}
	}
	last := checkSeqs(t, stored)
	for _, id := range []string{"r1", "r2"} {
		if r := getRun(t, db, id); r.LastSeq != last[id] {
			t.Fatalf("run %s: last_seq %d, highest seq %d", id, r.LastSeq, last[id])
		}
	}

	for _, n := range []int{2, 20} {
		t.Run(fmt.Sprintf("conflict in a call of %d", n), func(t *testing.T) {
			before := allEvents(t, db, store.EventQuery{})
			drafts := make([]event.Draft, n)
			for i := range drafts {
				drafts[i] = draft("s1", "r1", event.MessageDelta, nil)
			}
			drafts[(n-1)/2], drafts[n-1] = draft("s1", "r1", event.RunDone, nil), draft("s1", "r1", event.RunDone, nil)
			var appendErr error
			write(t, db, func(tx store.Tx) error {
				_, appendErr = tx.AppendEvents(ctx, "", drafts...)
				return nil // carry on: the failed call must leave nothing
			})
			if !errors.Is(appendErr, store.ErrConflict) {
				t.Fatalf("append err = %v, want conflict", appendErr)
			}
			if after := allEvents(t, db, store.EventQuery{}); len(after) != len(before) {
				t.Fatalf("%d events after a failed call, %d before", len(after), len(before))
			}
			if r := getRun(t, db, "r1"); r.LastSeq != last["r1"] {
				t.Fatalf("last_seq %d after a failed call, want %d", r.LastSeq, last["r1"])
			}
		})
	}
}

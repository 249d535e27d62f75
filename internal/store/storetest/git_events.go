package storetest

// git.committed is a person's act on a session's workspace: an event of
// the session (run_id ""), numbered with its lifecycle events, but not
// one every tab hears.

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testGitCommittedIsASessionEvent(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSession(t, db, "s2", t0)

	evs := appendEvents(t, db, "",
		sessionDraft("s1", event.SessionCreated),
		draft("s1", "r1", event.MessageUser, nil),
		event.Draft{SessionID: "s1", Type: event.GitCommitted, Payload: event.GitCommittedPayload{Hash: "abc", Message: "m"}},
	)
	if g := evs[2]; g.RunID != "" || g.Seq != 2 || g.Type != event.GitCommitted {
		t.Fatalf("git.committed: %+v, want run_id \"\" and the session's seq 2", g)
	}
	checkStreamSeqs(t, allEvents(t, db, store.EventQuery{}))

	// Refused under a run or a runner's fence, and nothing appended.
	before := allEvents(t, db, store.EventQuery{})
	for _, tc := range []struct {
		name  string
		fence string
		d     event.Draft
	}{
		{"under a run", "", event.Draft{SessionID: "s1", RunID: "r1", Type: event.GitCommitted, Payload: map[string]string{}}},
		{"with a fence", "runner-1", event.Draft{SessionID: "s1", Type: event.GitCommitted, Payload: map[string]string{}}},
	} {
		err := db.Write(ctx, func(tx store.Tx) error {
			_, err := tx.AppendEvents(ctx, tc.fence, tc.d)
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: err = %v, want ErrConflict", tc.name, err)
		}
	}
	if after := allEvents(t, db, store.EventQuery{}); len(after) != len(before) {
		t.Fatalf("refused drafts appended: %d -> %d events", len(before), len(after))
	}

	// A tab of another session hears the lifecycle of every session, not
	// s1's commits.
	for _, e := range allEvents(t, db, store.EventQuery{SessionID: "s2", AlsoTypes: event.SessionTypes()}) {
		if e.Type == event.GitCommitted {
			t.Fatalf("s2's tab query returned s1's git.committed: %+v", e)
		}
	}
}

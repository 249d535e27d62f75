package control_test

import (
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// A queued message the person removed shows nothing: undo passes over it
// to the last turn that shows, and restore brings back where it was.
func TestUndoSkipsAWithdrawnMessage(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	a := e.send(s.ID, "first", "")
	e.hold(a.ID, "rn_1", run.Running, time.Minute)
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, a.ID, "rn_1", control.Outcome{Status: run.Completed})
	})
	b := e.send(s.ID, "removed before it ran", "")
	if _, err := e.svc.Cancel(e.ctx, b.ID, nil); err != nil {
		t.Fatal(err)
	}
	leaf, err := e.svc.Undo(e.ctx, s.ID, 1, nil)
	if err != nil || leaf != "" {
		t.Fatalf("undo 1 ends the conversation at %q (%v), want before the first turn", leaf, err)
	}
	if _, err := e.svc.Undo(e.ctx, s.ID, 1, nil); err == nil {
		t.Fatal("a second undo found a turn in an empty conversation")
	}
	leaf, err = e.svc.Restore(e.ctx, s.ID, nil)
	if err != nil || leaf != b.ID {
		t.Fatalf("restore ends at %q (%v), want %s", leaf, err, b.ID)
	}
}

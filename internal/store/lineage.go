package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// maxLineage bounds how many ancestors a branch may have: a branch of a
// branch of ... is read ancestor by ancestor, and the chain must end.
const maxLineage = 32

// SessionHistory returns the events and runs (in run order) whose fold is
// the session's conversation: for a branch, the parent's history up to and
// including the event the branch was taken at, then the session's own. A
// branch references its parent's journal instead of copying it, so a
// branch costs one row; the price is this read of its ancestors. The
// session's lifecycle events (session.*) are its own only. An ancestor
// that was deleted contributes nothing.
func SessionHistory(ctx context.Context, r Reader, sessionID string) ([]event.Event, []string, error) {
	s, err := r.GetSession(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	evs, runIDs, err := Inherited(ctx, r, s, EventQuery{})
	if err != nil {
		return nil, nil, err
	}
	own, ownRuns, err := sessionEvents(ctx, r, sessionID, EventQuery{})
	if err != nil {
		return nil, nil, err
	}
	return append(evs, own...), append(runIDs, ownRuns...), nil
}

// Inherited is the part of s's history that comes from its ancestors (nil
// for a session that was not branched), of the events f's Types and
// NotTypes select, read as f's Fold asks (its other fields are ignored). A filter must keep the
// events branches are cut at (message.user, message.done).
func Inherited(ctx context.Context, r Reader, s Session, f EventQuery) ([]event.Event, []string, error) {
	if s.ParentSessionID == "" {
		return nil, nil, nil
	}
	return inherited(ctx, r, s.ParentSessionID, s.BranchedFromEventID, f, 1)
}

// inherited is the history of session id cut after event cut: the
// conversation that was on screen there — the run holding cut and its
// ancestors in the session's tree of versions (transcript.Versions), not
// every run made before it — and of the cut run its events up to cut.
func inherited(ctx context.Context, r Reader, id string, cut int64, f EventQuery, depth int) ([]event.Event, []string, error) {
	if depth > maxLineage {
		return nil, nil, fmt.Errorf("session %q: lineage deeper than %d", id, maxLineage)
	}
	s, err := r.GetSession(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	var evs []event.Event
	var runIDs []string
	if s.ParentSessionID != "" {
		evs, runIDs, err = inherited(ctx, r, s.ParentSessionID, s.BranchedFromEventID, f, depth+1)
		if err != nil {
			return nil, nil, err
		}
	}
	own, ownRuns, err := sessionEvents(ctx, r, id, f)
	if err != nil {
		return nil, nil, err
	}
	ownRuns, err = visiblePath(ctx, r, id, own, ownRuns, f, cut)
	if err != nil {
		return nil, nil, err
	}
	return cutAt(append(evs, own...), append(runIDs, ownRuns...), cut)
}

// visiblePath narrows a session's own runs to the version path ending at
// the run that holds event cut, when that run is the session's own: a
// branch taken after a retry, an edit or an undo inherits what the person
// saw, not the versions they had put aside (issue 15). A cut in an
// inherited run, or a run the versions do not know (a journal without
// run.queued), keeps the runs in their order, as before.
func visiblePath(ctx context.Context, r Reader, id string, own []event.Event, runs []string, f EventQuery, cut int64) ([]string, error) {
	cutRun := ""
	for _, e := range own {
		if e.ID == cut {
			cutRun = e.RunID
			break
		}
	}
	if cutRun == "" {
		return runs, nil
	}
	tree := own
	if len(f.Types) > 0 || len(f.NotTypes) > 0 {
		// The filter may have dropped what the versions are folded from.
		var err error
		tree, err = r.Events(ctx, EventQuery{SessionID: id, Types: []event.Type{event.RunQueued, event.VersionSelected}})
		if err != nil {
			return nil, fmt.Errorf("session %q: reading its versions: %w", id, err)
		}
	}
	t := transcript.Versions(tree)
	if !t.Has(cutRun) {
		return runs, nil
	}
	return t.Path(cutRun), nil
}

// cutAt keeps the runs up to the one holding event cut, and of that one
// its events up to cut. A cut that is not there (deleted with its
// session) keeps nothing: a branch never sees more than it was given.
func cutAt(evs []event.Event, runIDs []string, cut int64) ([]event.Event, []string, error) {
	cutRun, found := "", false
	for _, e := range evs {
		if e.ID == cut {
			cutRun, found = e.RunID, true
			break
		}
	}
	if !found {
		return nil, nil, nil
	}
	keep := map[string]bool{}
	var runs []string
	for _, rid := range runIDs {
		keep[rid] = true
		runs = append(runs, rid)
		if rid == cutRun {
			break
		}
	}
	var out []event.Event
	for _, e := range evs {
		if keep[e.RunID] && (e.RunID != cutRun || e.ID <= cut) {
			out = append(out, e)
		}
	}
	return out, runs, nil
}

func sessionEvents(ctx context.Context, r Reader, id string, f EventQuery) ([]event.Event, []string, error) {
	runs, err := r.SessionRunStates(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	evs, err := r.Events(ctx, EventQuery{SessionID: id, Types: f.Types, NotTypes: f.NotTypes, Fold: f.Fold})
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(runs))
	for i, ru := range runs {
		ids[i] = ru.ID
	}
	return evs, ids, nil
}

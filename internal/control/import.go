package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// ImportRun is one run of an imported session and its events, in journal
// order.
type ImportRun struct {
	Status run.Status
	Input  string
	Model  string
	Usage  event.UsageTotals
	Events []ImportEvent
}

// ImportEvent is one journaled event of an imported run.
type ImportEvent struct {
	Type    event.Type
	Payload json.RawMessage
}

// NewImport is a session to import (see ImportSession).
type NewImport struct {
	Title     string
	Workspace string
	Model     string
	Runs      []ImportRun
}

// ImportSession writes a new session holding the runs and their events,
// all in one transaction: an import the journal refuses writes nothing.
// Events get new ids and times (the journal's own); a run that had not
// ended is imported as cancelled, so no runner ever takes it. The
// workspace is kept when it is allowed here, else the server's default.
func (s *Service) ImportSession(ctx context.Context, in NewImport) (store.Session, error) {
	title, err := cleanTitle(in.Title)
	if err != nil {
		return store.Session{}, err
	}
	ws := s.workspace
	if in.Workspace != "" {
		if w, err := s.checkWorkspace(in.Workspace); err == nil {
			ws = w
		}
	}
	known := map[event.Type]bool{}
	for _, t := range event.Catalog() {
		known[t.Type] = true
	}
	now := time.Now().UTC()
	sess := store.Session{ID: id.New("ses"), Title: title, Workspace: ws, Model: in.Model, CreatedAt: now, UpdatedAt: now}
	err = s.w.Do(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		if _, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sess.ID, Type: event.SessionCreated,
			Payload: event.SessionCreatedPayload{Session: SessionInfo(sess)}}); err != nil {
			return err
		}
		for i, ir := range in.Runs {
			st := ir.Status
			if !st.Terminal() {
				st = run.Cancelled
			}
			r := store.Run{ID: id.New("run"), SessionID: sess.ID, Status: st, Input: ir.Input, Model: ir.Model,
				Usage: ir.Usage, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), StartedAt: now, EndedAt: now}
			if err := tx.InsertRun(ctx, r); err != nil {
				return err
			}
			drafts := make([]event.Draft, 0, len(ir.Events))
			for _, e := range ir.Events {
				if !known[e.Type] {
					return errorf(CodeInvalidInput, "run %d: unknown event type %q", i+1, e.Type)
				}
				// Checkpoints name commits of this server's shadow
				// repositories: another session's mean nothing here.
				if event.Runless(e.Type) {
					continue
				}
				// A steer not delivered yet: its stored control does not
				// come along, so nothing would ever deliver it.
				if e.Type == event.MessageSteered {
					continue
				}
				if !json.Valid(e.Payload) {
					return errorf(CodeInvalidInput, "run %d: a %s event's payload is not JSON", i+1, e.Type)
				}
				drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: sess.ID, Type: e.Type, Payload: e.Payload})
			}
			if len(drafts) == 0 {
				continue
			}
			if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
				if errors.Is(err, store.ErrConflict) {
					return errorf(CodeInvalidInput, "run %d: the journal refuses its events: %v", i+1, err)
				}
				return fmt.Errorf("import run %d: %w", i+1, err)
			}
		}
		return nil
	})
	return sess, err
}

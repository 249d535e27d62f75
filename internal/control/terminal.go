package control

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// TerminalOpened journals that a person opened a terminal in a session.
func (s *Service) TerminalOpened(ctx context.Context, sessionID string, p event.TerminalOpenedPayload) error {
	return s.sessionNote(ctx, sessionID, event.TerminalOpened, p)
}

// TerminalClosed journals that a terminal ended.
func (s *Service) TerminalClosed(ctx context.Context, sessionID string, p event.TerminalClosedPayload) error {
	return s.sessionNote(ctx, sessionID, event.TerminalClosed, p)
}

// sessionNote appends an event of no run to a session's journal.
func (s *Service) sessionNote(ctx context.Context, sessionID string, typ event.Type, payload any) error {
	return s.w.Do(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: typ, Payload: payload})
		return err
	})
}

package control

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// GitCommitted journals a commit a person made in the session's workspace
// through the Git panel (git.committed, an event of the session, not of
// a run). The commit exists whatever this returns: git ran first.
func (s *Service) GitCommitted(ctx context.Context, sessionID string, p event.GitCommittedPayload) error {
	return s.w.Do(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: event.GitCommitted, Payload: p})
		return err
	})
}

package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Ask files a durable human request for a held run, moves the run to
// awaiting_approval or awaiting_clarify, and journals the request. payload is
// the *.requested payload and must carry q.ID as its request_id.
func Ask(ctx context.Context, tx store.Tx, fence string, q store.Request, payload any) error {
	prompt, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("ask: %w", err)
	}
	q.Prompt, q.Status = prompt, store.RequestPending
	if err := tx.InsertRequest(ctx, q); err != nil {
		return err
	}
	to, typ := run.AwaitingApproval, event.ApprovalRequested
	if q.Kind == store.KindClarify {
		to, typ = run.AwaitingClarify, event.ClarifyRequested
	}
	if _, err := tx.AppendEvents(ctx, fence, event.Draft{RunID: q.RunID, SessionID: q.SessionID, Type: typ, Payload: json.RawMessage(prompt)}); err != nil {
		return err
	}
	return SetStatus(ctx, tx, q.RunID, fence, to, "waiting for a person", run.Running)
}

// Expire resolves a pending request as expired. When a person answered
// first it returns store.ErrConflict and changes nothing.
func Expire(ctx context.Context, tx store.Tx, requestID string) error {
	q, err := tx.GetRequest(ctx, requestID)
	if err != nil {
		return err
	}
	if q.Status != store.RequestPending {
		return fmt.Errorf("expire %s: %w", requestID, store.ErrConflict)
	}
	return resolveInTx(ctx, tx, q, store.RequestExpired, "", time.Now().UTC(), nil)
}

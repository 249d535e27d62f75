package postgres

// Approval decisions (issue 16, h16-policy): the approval.decided events,
// read newest first through their own partial index.

import (
	"context"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) ApprovalDecisions(ctx context.Context, q store.DecisionQuery) ([]event.Event, error) {
	var args params
	where := []string{"type = 'approval.decided'"}
	if q.BeforeID > 0 {
		where = append(where, "id < "+args.add(q.BeforeID))
	}
	if !q.From.IsZero() {
		where = append(where, "ts_ms >= "+args.add(ms(q.From)))
	}
	if !q.To.IsZero() {
		where = append(where, "ts_ms < "+args.add(ms(q.To)))
	}
	if q.SessionID != "" {
		where = append(where, "session_id = "+args.add(q.SessionID))
	}
	if q.ProfileID != "" {
		where = append(where, "payload::jsonb->>'profile_id' = "+args.add(q.ProfileID))
	}
	if q.Outcome != "" {
		where = append(where, "payload::jsonb->>'outcome' = "+args.add(q.Outcome))
	}
	query := `SELECT id, run_id, session_id, seq, type, ts_ms, terminal, payload FROM events WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ` + args.add(q.Limit)
	}
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("approval decisions: %w", err)
	}
	out, err := collect(rows, func(row sqlrow.Scanner) (event.Event, error) {
		var e event.Event
		var ts int64
		var typ string
		err := row.Scan(&e.ID, &e.RunID, &e.SessionID, &e.Seq, &typ, &ts, &e.Terminal, &e.Payload)
		e.Type, e.TS = event.Type(typ), event.FromMillis(ts)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("approval decisions: %w", err)
	}
	return out, nil
}

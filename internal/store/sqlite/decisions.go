package sqlite

// Approval decisions (issue 16, h16-policy): the approval.decided events,
// read newest first through their own partial index.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func (r reader) ApprovalDecisions(ctx context.Context, q store.DecisionQuery) ([]event.Event, error) {
	where := []string{"type = 'approval.decided'"}
	var args []any
	if q.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, q.BeforeID)
	}
	if !q.From.IsZero() {
		where, args = append(where, "ts_ms >= ?"), append(args, ms(q.From))
	}
	if !q.To.IsZero() {
		where, args = append(where, "ts_ms < ?"), append(args, ms(q.To))
	}
	if q.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, q.SessionID)
	}
	if q.ProfileID != "" {
		where, args = append(where, "json_extract(payload, '$.profile_id') = ?"), append(args, q.ProfileID)
	}
	if q.Outcome != "" {
		where, args = append(where, "json_extract(payload, '$.outcome') = ?"), append(args, q.Outcome)
	}
	query := `SELECT id, run_id, session_id, seq, type, ts_ms, terminal, payload FROM events WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("approval decisions: %w", err)
	}
	defer rows.Close()
	var out []event.Event
	for rows.Next() {
		var e event.Event
		var ts int64
		var typ, payload string
		if err := rows.Scan(&e.ID, &e.RunID, &e.SessionID, &e.Seq, &typ, &ts, &e.Terminal, &payload); err != nil {
			return nil, fmt.Errorf("approval decisions: %w", err)
		}
		e.Type, e.TS, e.Payload = event.Type(typ), event.FromMillis(ts), json.RawMessage(payload)
		out = append(out, e)
	}
	return out, rows.Err()
}

package sqlite

// Checkpoint records (the files are in internal/checkpoint's repository).

import (
	"context"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetCheckpoint(ctx context.Context, id string) (store.Checkpoint, error) {
	c, err := sqlrow.ScanCheckpoint(r.queryRow(ctx, `SELECT `+sqlrow.CheckpointCols+` FROM checkpoints WHERE id = ?`, id))
	if err != nil {
		return store.Checkpoint{}, notFound(err, "checkpoint", id)
	}
	return c, nil
}

func (r reader) ListCheckpoints(ctx context.Context, q store.CheckpointQuery) ([]store.Checkpoint, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{
		{"session_id", q.SessionID}, {"run_id", q.RunID}, {"tool_call_id", q.ToolCallID},
		{"workspace", q.Workspace}, {"parent_id", q.Parent},
	} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	sqlText := `SELECT ` + sqlrow.CheckpointCols + ` FROM checkpoints`
	if len(where) > 0 {
		sqlText += ` WHERE ` + strings.Join(where, " AND ")
	}
	sqlText += ` ORDER BY created_at_ms, id`
	if q.Limit > 0 {
		sqlText += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := r.query(ctx, sqlText, args...)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	defer rows.Close()
	out := []store.Checkpoint{}
	for rows.Next() {
		c, err := sqlrow.ScanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("list checkpoints: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (t *txn) InsertCheckpoint(ctx context.Context, c store.Checkpoint) error {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoints (`+sqlrow.CheckpointCols+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.SessionID, c.RunID, c.ToolCallID, c.Workspace, c.Commit, c.Parent, c.Reason,
		c.Files, c.Added, c.Removed, c.By, ms(c.CreatedAt))
	return expectOne(res, err)("checkpoint", c.ID, store.ErrConflict)
}

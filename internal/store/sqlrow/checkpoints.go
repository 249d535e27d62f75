package sqlrow

// Checkpoints of a session's workspace.

import "github.com/caduceus-dev/caduceus/internal/store"

// CheckpointCols are the columns ScanCheckpoint reads, in its order.
const CheckpointCols = `id, session_id, run_id, tool_call_id, workspace, commit_sha, parent_id, reason,
	files_changed, lines_added, lines_removed, by_json, created_at_ms`

// ScanCheckpoint reads one row of CheckpointCols.
func ScanCheckpoint(s Scanner) (store.Checkpoint, error) {
	var c store.Checkpoint
	var at int64
	err := s.Scan(&c.ID, &c.SessionID, &c.RunID, &c.ToolCallID, &c.Workspace, &c.Commit, &c.Parent, &c.Reason,
		&c.Files, &c.Added, &c.Removed, &c.By, &at)
	c.CreatedAt = fromMS(at)
	return c, err
}

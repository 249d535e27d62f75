package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// reader implements store.Reader over a querier.
type reader struct {
	q     querier
	db    *sql.DB    // set on the top-level reader only, for Close
	stmts *stmtCache // top-level reader only: a transaction's reads run unprepared
}

func (r reader) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := r.stmts.get(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return r.q.QueryContext(ctx, query, args...)
}

func (r reader) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if s := r.stmts.get(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return r.q.QueryRowContext(ctx, query, args...)
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func notFound(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return fmt.Errorf("get %s %q: %w", what, id, err)
}

func (r reader) GetSession(ctx context.Context, id string) (store.Session, error) {
	v, err := sqlrow.ScanSession(r.queryRow(ctx, `SELECT `+sqlrow.SessionCols+` FROM sessions WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "session", id)
	}
	return v, nil
}

func (r reader) ListSessions(ctx context.Context, p store.SessionPage) ([]store.Session, string, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	query, args, err := listSessionsQuery(p, limit)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		s, err := sqlrow.ScanSession(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = encodeCursor(out[limit-1])
	}
	return out, next, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func (r reader) GetRun(ctx context.Context, id string) (store.Run, error) {
	v, err := sqlrow.ScanRun(r.queryRow(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "run", id)
	}
	return v, nil
}

func (r reader) queryRuns(ctx context.Context, query string, args ...any) ([]store.Run, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanRun)
	if err != nil {
		return nil, fmt.Errorf("scan run: %w", err)
	}
	return out, nil
}

func (r reader) SessionRuns(ctx context.Context, sessionID string) ([]store.Run, error) {
	return r.queryRuns(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE session_id = ? ORDER BY created_at_ms, rowid`, sessionID)
}

// SessionRunStates reads two columns of the runs SessionRuns reads twenty
// of: opening a session of a thousand runs needs no more.
func (r reader) SessionRunStates(ctx context.Context, sessionID string) ([]store.RunState, error) {
	rows, err := r.query(ctx, `SELECT id, status FROM runs WHERE session_id = ? ORDER BY created_at_ms, rowid`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("session run states: %w", err)
	}
	defer rows.Close()
	var out []store.RunState
	for rows.Next() {
		var v store.RunState
		var status string
		if err := rows.Scan(&v.ID, &status); err != nil {
			return nil, fmt.Errorf("session run states: %w", err)
		}
		v.Status = run.Status(status)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session run states: %w", err)
	}
	return out, nil
}

func (r reader) RunsWithStatus(ctx context.Context, statuses ...run.Status) ([]store.Run, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	args := make([]any, len(statuses))
	for i, s := range statuses {
		args[i] = string(s)
	}
	return r.queryRuns(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE status IN (`+placeholders(len(statuses))+
		`) ORDER BY priority DESC, created_at_ms, rowid`, args...)
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func (r reader) GetRequest(ctx context.Context, id string) (store.Request, error) {
	v, err := sqlrow.ScanRequest(r.queryRow(ctx, `SELECT `+sqlrow.RequestCols+` FROM requests WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "request", id)
	}
	return v, nil
}

func (r reader) ListRequests(ctx context.Context, q store.RequestQuery) ([]store.Request, error) {
	where, args := []string{"1=1"}, []any{}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, q.Status)
	}
	if q.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, q.SessionID)
	}
	if q.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, q.RunID)
	}
	rows, err := r.query(ctx, `SELECT `+sqlrow.RequestCols+` FROM requests WHERE `+
		strings.Join(where, " AND ")+` ORDER BY created_at_ms, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanRequest)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return out, nil
}

func (r reader) Events(ctx context.Context, q store.EventQuery) ([]event.Event, error) {
	var where []string
	args := []any{q.AfterID}
	if q.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, q.SessionID)
	}
	if q.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, q.RunID)
	}
	if len(q.Types) > 0 {
		where = append(where, "type IN ("+placeholders(len(q.Types))+")")
		for _, t := range q.Types {
			args = append(args, string(t))
		}
	}
	if len(q.NotTypes) > 0 {
		where = append(where, "type NOT IN ("+placeholders(len(q.NotTypes))+")")
		for _, t := range q.NotTypes {
			args = append(args, string(t))
		}
	}
	cond := strings.Join(where, " AND ")
	if len(q.AlsoTypes) > 0 {
		also := "type IN (" + placeholders(len(q.AlsoTypes)) + ")"
		for _, t := range q.AlsoTypes {
			args = append(args, string(t))
		}
		if q.SessionID == "" && q.RunID == "" {
			cond = also // nothing else selected: only the added types
		} else {
			cond = "((" + cond + ") OR " + also + ")"
		}
	}
	if cond == "" {
		cond = "1"
	}
	cond = "id > ? AND " + cond
	cols := `id, run_id, session_id, seq, type, ts_ms, terminal, payload`
	if q.Fold {
		cols = `id, run_id, type, ts_ms, payload`
	}
	query := `SELECT ` + cols + ` FROM events WHERE ` + cond + ` ORDER BY id`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []event.Event
	size := 0
	var e event.Event
	var ts int64
	var typ, payload string
	dest := []any{&e.ID, &e.RunID, &e.SessionID, &e.Seq, &typ, &ts, &e.Terminal, &payload}
	if q.Fold {
		dest = []any{&e.ID, &e.RunID, &typ, &ts, &payload}
	}
	for rows.Next() {
		e = event.Event{}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.Type, e.TS, e.Payload = event.Type(typ), event.FromMillis(ts), json.RawMessage(payload)
		out = append(out, e)
		// Stopping here, rather than with a LIMIT, reads no row the page
		// will not hold: SQLite steps one row per Next.
		if size += len(payload); q.MaxBytes > 0 && size >= q.MaxBytes {
			break
		}
	}
	return out, rows.Err()
}

func (r reader) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := r.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event id: %w", err)
	}
	return id, nil
}

func (r reader) RunCursor(ctx context.Context, runID string) (int64, error) {
	var id int64
	if err := r.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events WHERE run_id = ?`, runID).Scan(&id); err != nil {
		return 0, fmt.Errorf("run cursor: %w", err)
	}
	return id, nil
}

func (r reader) FindRule(ctx context.Context, tool, pattern, sessionID string) (store.Rule, error) {
	v, err := sqlrow.ScanRule(r.queryRow(ctx, `SELECT `+sqlrow.RuleCols+` FROM approval_rules
		WHERE tool = ? AND pattern = ? AND (scope = 'always' OR session_id = ?) LIMIT 1`, tool, pattern, sessionID))
	if err != nil {
		return v, notFound(err, "rule", tool)
	}
	return v, nil
}

func (r reader) ListRules(ctx context.Context) ([]store.Rule, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.RuleCols+` FROM approval_rules ORDER BY created_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanRule)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return out, nil
}

func (r reader) ListRunners(ctx context.Context) ([]store.RunnerInfo, error) {
	rows, err := r.query(ctx, `SELECT id, host, pid, version, started_at_ms, heartbeat_at_ms FROM runners ORDER BY started_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	defer rows.Close()
	var out []store.RunnerInfo
	for rows.Next() {
		var v store.RunnerInfo
		var s, h int64
		if err := rows.Scan(&v.ID, &v.Host, &v.PID, &v.Version, &s, &h); err != nil {
			return nil, fmt.Errorf("list runners: %w", err)
		}
		v.StartedAt, v.HeartbeatAt = fromMS(s), fromMS(h)
		out = append(out, v)
	}
	return out, rows.Err()
}

func (r reader) DelegatedSessions(ctx context.Context, runID string) ([]store.Session, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.SessionCols+` FROM sessions WHERE delegated_run_id = ? ORDER BY created_at_ms, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("delegated sessions: %w", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		s, err := sqlrow.ScanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("delegated sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delegated sessions: %w", err)
	}
	return out, nil
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// querier is what the pool and one of its connections share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// reader implements store.Reader over the pool, or over a transaction's
// connection. pgx prepares and caches every statement per connection.
type reader struct {
	q querier
}

// params numbers query parameters as they are added.
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
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
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return fmt.Errorf("get %s %q: %w", what, id, err)
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func (r reader) GetSession(ctx context.Context, id string) (store.Session, error) {
	v, err := sqlrow.ScanSession(r.q.QueryRow(ctx, `SELECT `+sqlrow.SessionCols+` FROM sessions WHERE id = $1`, id))
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
	var args params
	where := []string{"true"}
	if p.Cursor != "" {
		pinned, at, id, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", store.ErrBadCursor)
		}
		pn, a, i := args.add(pinned), args.add(at), args.add(id)
		where = append(where, "(pinned < "+pn+" OR (pinned = "+pn+" AND (updated_at_ms < "+a+" OR (updated_at_ms = "+a+" AND id < "+i+"))))")
	}
	where = append(where, archivedWhere(p.Archived))
	if p.ProjectID != "" {
		where = append(where, "project_id = "+args.add(p.ProjectID))
	}
	if p.Query != "" {
		where = append(where, `title ILIKE `+args.add("%"+likeEscape(p.Query)+"%")+` ESCAPE '\'`)
	}
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.SessionCols+` FROM sessions WHERE `+
		strings.Join(where, " AND ")+` ORDER BY pinned DESC, updated_at_ms DESC, id DESC LIMIT `+args.add(limit+1), args...)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanSession)
	if err != nil {
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

// collect scans every row with scan.
func collect[T any](rows pgx.Rows, scan func(sqlrow.Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	return sqlrow.Collect(rows, scan)
}

func (r reader) GetRun(ctx context.Context, id string) (store.Run, error) {
	v, err := sqlrow.ScanRun(r.q.QueryRow(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "run", id)
	}
	return v, nil
}

func (r reader) queryRuns(ctx context.Context, query string, args ...any) ([]store.Run, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanRun)
	if err != nil {
		return nil, fmt.Errorf("scan run: %w", err)
	}
	return out, nil
}

func (r reader) SessionRuns(ctx context.Context, sessionID string) ([]store.Run, error) {
	return r.queryRuns(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE session_id = $1 ORDER BY created_at_ms, ord`, sessionID)
}

// SessionRunStates reads two columns of the runs SessionRuns reads twenty
// of: opening a session of a thousand runs needs no more.
func (r reader) SessionRunStates(ctx context.Context, sessionID string) ([]store.RunState, error) {
	rows, err := r.q.Query(ctx, `SELECT id, status FROM runs WHERE session_id = $1 ORDER BY created_at_ms, ord`, sessionID)
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
	return r.queryRuns(ctx, `SELECT `+sqlrow.RunCols+` FROM runs WHERE status = ANY($1)
		ORDER BY priority DESC, created_at_ms, ord`, strs(statuses))
}

func (r reader) GetRequest(ctx context.Context, id string) (store.Request, error) {
	v, err := sqlrow.ScanRequest(r.q.QueryRow(ctx, `SELECT `+sqlrow.RequestCols+` FROM requests WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "request", id)
	}
	return v, nil
}

func (r reader) ListRequests(ctx context.Context, q store.RequestQuery) ([]store.Request, error) {
	var args params
	where := []string{"true"}
	if q.Status != "" {
		where = append(where, "status = "+args.add(q.Status))
	}
	if q.SessionID != "" {
		where = append(where, "session_id = "+args.add(q.SessionID))
	}
	if q.RunID != "" {
		where = append(where, "run_id = "+args.add(q.RunID))
	}
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.RequestCols+` FROM requests WHERE `+
		strings.Join(where, " AND ")+` ORDER BY created_at_ms, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanRequest)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return out, nil
}

func (r reader) Events(ctx context.Context, q store.EventQuery) ([]event.Event, error) {
	var args params
	after := args.add(q.AfterID)
	var where []string
	if q.SessionID != "" {
		where = append(where, "session_id = "+args.add(q.SessionID))
	}
	if q.RunID != "" {
		where = append(where, "run_id = "+args.add(q.RunID))
	}
	if len(q.Types) > 0 {
		where = append(where, "type = ANY("+args.add(strs(q.Types))+")")
	}
	if len(q.NotTypes) > 0 {
		where = append(where, "type <> ALL("+args.add(strs(q.NotTypes))+")")
	}
	cond := strings.Join(where, " AND ")
	if len(q.AlsoTypes) > 0 {
		also := "type = ANY(" + args.add(strs(q.AlsoTypes)) + ")"
		if q.SessionID == "" && q.RunID == "" {
			cond = also // nothing else selected: only the added types
		} else {
			cond = "((" + cond + ") OR " + also + ")"
		}
	}
	if cond == "" {
		cond = "true"
	}
	cols := `id, run_id, session_id, seq, type, ts_ms, terminal, payload`
	if q.Fold {
		cols = `id, run_id, type, ts_ms, payload`
	}
	query := `SELECT ` + cols + ` FROM events WHERE id > ` + after + ` AND ` + cond + ` ORDER BY id`
	limit := q.Limit
	if q.MaxBytes > 0 {
		// The page ends with the event that brings it to MaxBytes, and the
		// server must not send what the page will not hold: a running sum
		// of the sizes before each event picks the rows, over at most as
		// many rows as the budget can hold (a payload is at least 2 bytes).
		if most := q.MaxBytes/2 + 1; limit <= 0 || most < limit {
			limit = most
		}
		query = `SELECT ` + cols + ` FROM (
			SELECT *, SUM(octet_length(payload)) OVER (ORDER BY id) - octet_length(payload) AS before
			FROM (` + query + ` LIMIT ` + args.add(limit) + `) page) sized
			WHERE before < ` + args.add(q.MaxBytes) + ` ORDER BY id`
	} else if limit > 0 {
		query += ` LIMIT ` + args.add(limit)
	}
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	var e event.Event
	var ts int64
	var typ string
	dest := []any{&e.ID, &e.RunID, &e.SessionID, &e.Seq, &typ, &ts, &e.Terminal, &e.Payload}
	if q.Fold {
		dest = []any{&e.ID, &e.RunID, &typ, &ts, &e.Payload}
	}
	out, err := collect(rows, func(row sqlrow.Scanner) (event.Event, error) {
		e = event.Event{}
		err := row.Scan(dest...)
		e.Type, e.TS = event.Type(typ), event.FromMillis(ts)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

func (r reader) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := r.q.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event id: %w", err)
	}
	return id, nil
}

func (r reader) RunCursor(ctx context.Context, runID string) (int64, error) {
	var id int64
	if err := r.q.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events WHERE run_id = $1`, runID).Scan(&id); err != nil {
		return 0, fmt.Errorf("run cursor: %w", err)
	}
	return id, nil
}

func (r reader) FindRule(ctx context.Context, tool, pattern, sessionID string) (store.Rule, error) {
	v, err := sqlrow.ScanRule(r.q.QueryRow(ctx, `SELECT `+sqlrow.RuleCols+` FROM approval_rules
		WHERE tool = $1 AND pattern = $2 AND (scope = 'always' OR session_id = $3) LIMIT 1`, tool, pattern, sessionID))
	if err != nil {
		return v, notFound(err, "rule", tool)
	}
	return v, nil
}

func (r reader) ListRules(ctx context.Context) ([]store.Rule, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.RuleCols+` FROM approval_rules ORDER BY created_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanRule)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return out, nil
}

func (r reader) ListRunners(ctx context.Context) ([]store.RunnerInfo, error) {
	rows, err := r.q.Query(ctx, `SELECT id, host, pid, version, started_at_ms, heartbeat_at_ms FROM runners ORDER BY started_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	out, err := collect(rows, func(row sqlrow.Scanner) (store.RunnerInfo, error) {
		var v store.RunnerInfo
		var s, h int64
		err := row.Scan(&v.ID, &v.Host, &v.PID, &v.Version, &s, &h)
		v.StartedAt, v.HeartbeatAt = fromMS(s), fromMS(h)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	return out, nil
}

func (r reader) DelegatedSessions(ctx context.Context, runID string) ([]store.Session, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.SessionCols+` FROM sessions WHERE delegated_run_id = $1 ORDER BY created_at_ms, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("delegated sessions: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanSession)
	if err != nil {
		return nil, fmt.Errorf("delegated sessions: %w", err)
	}
	return out, nil
}

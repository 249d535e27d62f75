package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// txn implements store.Tx on one SQL transaction.
type txn struct {
	reader
	tx detachedTx
	ws *writeStmts

	// mu guards bound: nothing stops a body from using its Tx from several
	// goroutines.
	mu    sync.Mutex
	bound writeStmts // ws bound to tx, each on first use
}

// stmt returns the write statement k bound to the transaction, binding it
// once per transaction rather than per execution.
func (t *txn) stmt(k wstmt) detachedStmt {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bound[k] == nil {
		// Not the caller's context: binding only waits for the
		// transaction's own connection, and a cancelled context would
		// leave an error stuck to the statement for the rest of the
		// transaction.
		t.bound[k] = t.tx.tx.StmtContext(context.Background(), t.ws[k])
	}
	return detachedStmt{t.bound[k]}
}

func (t *txn) AppendEvents(ctx context.Context, fence string, drafts ...event.Draft) (out []event.Event, err error) {
	if len(drafts) == 0 {
		return nil, nil
	}
	// All or nothing: a call that fails part-way (after reserving seqs for
	// some runs, or inserting some drafts) must leave no trace, even if the
	// caller carries on in the same transaction, or the runs' seqs would get
	// gaps. WriteBatch's savepoint per body does not cover that caller, and
	// undoing by hand cannot be made safe after an error that ended the
	// transaction, so this keeps its own savepoint.
	sctx := context.WithoutCancel(ctx)
	if _, err := t.stmt(wSavepointAppend).ExecContext(sctx); err != nil {
		return nil, fmt.Errorf("append: savepoint: %w", err)
	}
	defer func() {
		if err != nil {
			if _, rerr := t.stmt(wRollbackToAppend).ExecContext(sctx); rerr != nil {
				err = errors.Join(err, fmt.Errorf("append: rollback to savepoint: %w", rerr))
			}
		}
		if _, rerr := t.stmt(wReleaseAppend).ExecContext(sctx); rerr != nil && err == nil {
			out, err = nil, fmt.Errorf("append: release savepoint: %w", rerr)
		}
	}()
	return t.appendEvents(ctx, fence, drafts)
}

// stream names what a seq counts: a run, or (run "") a session's own
// lifecycle events, or a project's events (session_id holds its id).
type stream struct{ run, session, project string }

func streamOf(d event.Draft) stream {
	if d.RunID != "" {
		return stream{run: d.RunID} // a run's seq is the run's, whatever session a draft names
	}
	if event.IsProject(d.Type) {
		return stream{project: d.SessionID}
	}
	return stream{session: d.SessionID}
}

func (t *txn) appendEvents(ctx context.Context, fence string, drafts []event.Draft) ([]event.Event, error) {
	now := time.Now().UTC()
	perStream := map[stream]int64{}
	var order []stream
	for _, d := range drafts {
		if d.SessionID == "" {
			return nil, fmt.Errorf("append %s: a session id is required: %w", d.Type, store.ErrConflict)
		}
		// Only session lifecycle and checkpoint events may lack a run, and
		// a run's events may not pose as lifecycle events.
		if d.RunID == "" && !event.Runless(d.Type) || d.RunID != "" && event.RunlessOnly(d.Type) {
			return nil, fmt.Errorf("append %s: run id %q does not fit the type: %w", d.Type, d.RunID, store.ErrConflict)
		}
		if d.RunID == "" && fence != "" {
			return nil, fmt.Errorf("append %s: session events are not written under a runner's lease: %w", d.Type, store.ErrConflict)
		}
		k := streamOf(d)
		if _, ok := perStream[k]; !ok {
			order = append(order, k)
		}
		perStream[k]++
	}
	next := map[stream]int64{}
	for _, k := range order {
		n := perStream[k]
		last, err := t.reserve(ctx, k, n, fence)
		if err != nil {
			return nil, err
		}
		next[k] = last - n + 1
	}

	out := make([]event.Event, 0, len(drafts))
	args := make([]any, 0, len(drafts)*eventCols)
	for _, d := range drafts {
		payload, err := marshalPayload(d.Payload)
		if err != nil {
			return nil, fmt.Errorf("append %s: %w", d.Type, err)
		}
		k := streamOf(d)
		e := event.Event{
			RunID: d.RunID, SessionID: d.SessionID, Seq: next[k], Type: d.Type,
			TS: event.Time{Time: now}, Terminal: event.IsTerminal(d.Type), Payload: payload,
		}
		next[k]++
		args = append(args, e.RunID, e.SessionID, e.Seq, string(e.Type), now.UnixMilli(), e.Terminal, string(payload))
		out = append(out, e)
	}
	insert := t.insertEach
	if len(out) >= multiRowFrom {
		insert = t.insertAll
	}
	if err := insert(ctx, out, args); err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: events.run_id") {
			return nil, fmt.Errorf("append: run already has a terminal event: %w", store.ErrConflict)
		}
		return nil, fmt.Errorf("append events: %w", err)
	}
	return out, nil
}

// reserve takes n seqs of stream k and returns the last one. A run's
// reservation is fenced: it fails with ErrLeaseLost when fence is set and
// the run is leased to another runner.
func (t *txn) reserve(ctx context.Context, k stream, n int64, fence string) (int64, error) {
	var last int64
	if k.project != "" {
		err := t.stmt(wReserveProjectSeqs).QueryRowContext(ctx, n, k.project).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("append to project %s: %w", k.project, store.ErrNotFound)
		}
		if err != nil {
			return 0, fmt.Errorf("append to project %s: %w", k.project, err)
		}
		return last, nil
	}
	if k.run == "" {
		err := t.stmt(wReserveSessionSeqs).QueryRowContext(ctx, n, k.session).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("append to session %s: %w", k.session, store.ErrNotFound)
		}
		if err != nil {
			return 0, fmt.Errorf("append to session %s: %w", k.session, err)
		}
		return last, nil
	}
	err := t.stmt(wReserveSeqs).QueryRowContext(ctx, n, k.run, fence, fence).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		if _, gerr := t.GetRun(ctx, k.run); gerr != nil {
			return 0, fmt.Errorf("append to run %s: %w", k.run, gerr)
		}
		return 0, fmt.Errorf("append to run %s: %w", k.run, store.ErrLeaseLost)
	}
	if err != nil {
		return 0, fmt.Errorf("append to run %s: %w", k.run, err)
	}
	return last, nil
}

const (
	insertEvents = `INSERT INTO events (run_id, session_id, seq, type, ts_ms, terminal, payload) VALUES `
	eventRow     = `(?,?,?,?,?,?,?)`
	eventCols    = 7
)

// multiRowFrom is the call size from which one multi-row INSERT, parsed for
// the call, costs less than the prepared single-row INSERT run per row: the
// per-statement overhead then outweighs the parse (measured: even at 8 rows,
// 20% less CPU at 100, 40% more at 1). Calls on the hot path append one
// event.
const multiRowFrom = 8

// insertEach inserts evs one row at a time, setting their IDs: rows
// inserted one after another get ascending ids.
func (t *txn) insertEach(ctx context.Context, evs []event.Event, args []any) error {
	ins := t.stmt(wInsertEvent)
	for i := range evs {
		res, err := ins.ExecContext(ctx, args[i*eventCols:(i+1)*eventCols]...)
		if err != nil {
			return err
		}
		if evs[i].ID, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	return nil
}

// insertAll inserts evs with one statement, setting their IDs.
func (t *txn) insertAll(ctx context.Context, evs []event.Event, args []any) error {
	q := insertEvents + strings.TrimSuffix(strings.Repeat(eventRow+",", len(evs)), ",") + ` RETURNING id`
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	// RETURNING order is unspecified, but one statement allocates ascending
	// rowids in VALUES order, so sorted ids map to drafts in order.
	ids := make([]int64, 0, len(evs))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) != len(evs) {
		return fmt.Errorf("%d ids for %d rows", len(ids), len(evs))
	}
	slices.Sort(ids)
	for i := range evs {
		evs[i].ID = ids[i]
	}
	return nil
}

func marshalPayload(p any) (json.RawMessage, error) {
	switch v := p.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, errors.New("payload is not valid JSON")
		}
		return v, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("marshal payload: %w", err)
	}
	return b, nil
}

func (t *txn) InsertSession(ctx context.Context, s store.Session) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sessions (`+sqlrow.SessionCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		s.ID, s.Title, s.Workspace, s.Model, ms(s.CreatedAt), ms(s.UpdatedAt), s.ParentSessionID, s.BranchedFromEventID, s.Pinned, nullMS(s), nullString(s.ProjectID), s.ProfileID,
		s.DelegatedSessionID, s.DelegatedRunID, s.DelegatedCallID)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

func (t *txn) UpdateSession(ctx context.Context, s store.Session) error {
	return expectOne(t.tx.ExecContext(ctx, `UPDATE sessions SET title = ?, model = ?, updated_at_ms = ?,
		pinned = ?, archived_at_ms = ?, project_id = ?, profile_id = ? WHERE id = ?`,
		s.Title, s.Model, ms(s.UpdatedAt), s.Pinned, nullMS(s), nullString(s.ProjectID), s.ProfileID, s.ID))("session", s.ID, store.ErrNotFound)
}

func (t *txn) TouchSession(ctx context.Context, id string, at time.Time) error {
	return expectOne(t.tx.ExecContext(ctx, `UPDATE sessions SET updated_at_ms = MAX(updated_at_ms, ?) WHERE id = ?`,
		ms(at), id))("session", id, store.ErrNotFound)
}

func (t *txn) DeleteSession(ctx context.Context, id string) error {
	// Events carry no foreign key (appends stay cheap), so delete them here,
	// all but the session.deleted tombstone: streams carry it to clients that
	// still show the session, and a cursor taken before the delete finds it.
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ? AND NOT (run_id = '' AND type = ?)`,
		id, string(event.SessionDeleted)); err != nil {
		return fmt.Errorf("delete session events: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE session_id = ?`, id); err != nil {
		return fmt.Errorf("delete session checkpoints: %w", err)
	}
	return expectOne(t.tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id))("session", id, store.ErrNotFound)
}

// expectOne turns an Exec result into ErrNotFound/ErrConflict when no row
// was affected.
func expectOne(res sql.Result, err error) func(what, id string, none error) error {
	return func(what, id string, none error) error {
		if err != nil {
			return fmt.Errorf("write %s %q: %w", what, id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("write %s %q: %w", what, id, err)
		}
		if n == 0 {
			return fmt.Errorf("%s %q: %w", what, id, none)
		}
		return nil
	}
}

func (t *txn) InsertRun(ctx context.Context, r store.Run) error {
	usage, _ := json.Marshal(r.Usage)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO runs (`+sqlrow.RunCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.SessionID, string(r.Status), r.Input, r.Model, r.Priority, r.Attempt, r.RunnerID,
		ms(r.LeaseExpiresAt), r.LastSeq, r.ErrorCode, r.ErrorMessage, string(usage),
		ms(r.CreatedAt), ms(r.StartedAt), ms(r.EndedAt),
		r.Retries, r.MaxRetries, r.RetryBackoff.Milliseconds(), ms(r.RetryAt), ms(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert run: %w", err)
	}
	return nil
}

func (t *txn) UpdateRun(ctx context.Context, r store.Run, from ...run.Status) error {
	usage, _ := json.Marshal(r.Usage)
	q := `UPDATE runs SET status = ?, model = ?, priority = ?, attempt = ?, runner_id = ?, lease_expires_ms = ?,
		error_code = ?, error_message = ?, usage_json = ?, started_at_ms = ?, ended_at_ms = ?,
		retries = ?, retry_at_ms = ? WHERE id = ?`
	args := []any{string(r.Status), r.Model, r.Priority, r.Attempt, r.RunnerID, ms(r.LeaseExpiresAt),
		r.ErrorCode, r.ErrorMessage, string(usage), ms(r.StartedAt), ms(r.EndedAt), r.Retries, ms(r.RetryAt), r.ID}
	if len(from) > 0 {
		q += ` AND status IN (` + placeholders(len(from)) + `)`
		for _, s := range from {
			args = append(args, string(s))
		}
	}
	return expectOne(t.tx.ExecContext(ctx, q, args...))("run", r.ID, store.ErrConflict)
}

func (t *txn) RenewLeases(ctx context.Context, runnerID string, until time.Time) ([]string, error) {
	owned := []any{ms(until), runnerID}
	for _, s := range run.All() {
		if s.Owned() {
			owned = append(owned, string(s))
		}
	}
	rows, err := t.tx.QueryContext(ctx, `UPDATE runs SET lease_expires_ms = ? WHERE runner_id = ? AND status IN (`+
		placeholders(len(owned)-2)+`) RETURNING id`, owned...)
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (t *txn) InsertRequest(ctx context.Context, q store.Request) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO requests (`+sqlrow.RequestCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		q.ID, q.RunID, q.SessionID, q.Kind, q.Status, q.ToolCallID, string(q.Prompt), q.Response,
		ms(q.CreatedAt), ms(q.ExpiresAt), ms(q.ResolvedAt))
	if err != nil {
		return fmt.Errorf("insert request: %w", err)
	}
	return nil
}

func (t *txn) ResolveRequest(ctx context.Context, id, status, response string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE requests SET status = ?, response = ?, resolved_at_ms = ?
		WHERE id = ? AND status = 'pending'`, status, response, ms(at), id)
	if err := expectOne(res, err)("request", id, store.ErrConflict); err != nil {
		if _, gerr := t.GetRequest(ctx, id); gerr != nil {
			return gerr
		}
		return err
	}
	return nil
}

func (t *txn) InsertControl(ctx context.Context, c store.Control) error {
	payload := string(c.Payload)
	if payload == "" {
		payload = "{}"
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO controls (id, run_id, kind, payload_json, created_at_ms) VALUES (?,?,?,?,?)`,
		c.ID, c.RunID, c.Kind, payload, ms(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert control: %w", err)
	}
	return nil
}

func (t *txn) ListControls(ctx context.Context, runID string) ([]store.Control, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT id, run_id, kind, payload_json, created_at_ms FROM controls WHERE run_id = ? ORDER BY created_at_ms, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list controls: %w", err)
	}
	defer rows.Close()
	var out []store.Control
	for rows.Next() {
		var c store.Control
		var p string
		var at int64
		if err := rows.Scan(&c.ID, &c.RunID, &c.Kind, &p, &at); err != nil {
			return nil, fmt.Errorf("list controls: %w", err)
		}
		c.Payload, c.CreatedAt = json.RawMessage(p), fromMS(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

func (t *txn) InsertRule(ctx context.Context, r store.Rule) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO approval_rules (`+sqlrow.RuleCols+`) VALUES (?,?,?,?,?,?,?,?)`,
		r.ID, r.Tool, r.Pattern, r.Scope, r.SessionID, ms(r.CreatedAt), store.RuleActorJSON(r.CreatedBy), r.RequestID)
	if err != nil {
		return fmt.Errorf("insert rule: %w", err)
	}
	return nil
}

func (t *txn) DeleteRule(ctx context.Context, id string) error {
	return expectOne(t.tx.ExecContext(ctx, `DELETE FROM approval_rules WHERE id = ?`, id))("rule", id, store.ErrNotFound)
}

func (t *txn) UpsertRunner(ctx context.Context, r store.RunnerInfo) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO runners (id, host, pid, version, started_at_ms, heartbeat_at_ms)
		VALUES (?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms`,
		r.ID, r.Host, r.PID, r.Version, ms(r.StartedAt), ms(r.HeartbeatAt))
	if err != nil {
		return fmt.Errorf("upsert runner: %w", err)
	}
	return nil
}

func (t *txn) DeleteRunner(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete runner: %w", err)
	}
	return nil
}

func (t *txn) ClaimNext(ctx context.Context, runnerID string, now, leaseUntil time.Time) (store.Run, run.Status, bool, error) {
	var id, prev string
	// A run parked while it waited for a person goes first once nothing of
	// it is pending any more (answered, or expired by time): the person is
	// watching it. A run whose runner died while it waited is taken too.
	err := t.tx.QueryRowContext(ctx, `SELECT id, status FROM runs r
		WHERE status IN ('awaiting_approval','awaiting_clarify') AND (runner_id = '' OR lease_expires_ms < ?)
		AND (expires_at_ms = 0 OR expires_at_ms > ?)
		AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.run_id = r.id AND q.status = 'pending'
			AND (q.expires_at_ms = 0 OR q.expires_at_ms > ?))
		ORDER BY created_at_ms, rowid LIMIT 1`, ms(now), ms(now), ms(now)).Scan(&id, &prev)
	// Then a queued run, unless its session is busy or an earlier run of
	// the session waits too; a recovering run is its session's busy run and
	// goes once its retry time has come. Runs queued in the same
	// millisecond keep the order they were accepted in (rowid): ids are
	// random within a millisecond.
	if errors.Is(err, sql.ErrNoRows) {
		err = t.tx.QueryRowContext(ctx, `SELECT id, status FROM runs r WHERE (expires_at_ms = 0 OR expires_at_ms > ?) AND ((status = 'queued'
		AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.session_id = r.session_id
			AND o.status IN ('running','awaiting_approval','awaiting_clarify','cancelling','paused','recovering'))
		AND NOT EXISTS (SELECT 1 FROM runs q WHERE q.session_id = r.session_id AND q.status = 'queued'
			AND (q.priority > r.priority OR (q.priority = r.priority
				AND (q.created_at_ms < r.created_at_ms OR (q.created_at_ms = r.created_at_ms AND q.rowid < r.rowid))))))
		OR (status = 'recovering' AND retry_at_ms <= ?))
		ORDER BY priority DESC, created_at_ms, rowid LIMIT 1`, ms(now), ms(now)).Scan(&id, &prev)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, "", false, nil
	}
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE runs SET
		status = CASE WHEN status IN ('queued','recovering') THEN 'running' ELSE status END,
		attempt = CASE WHEN status IN ('queued','recovering') THEN attempt + 1 ELSE attempt END,
		retry_at_ms = 0,
		started_at_ms = CASE started_at_ms WHEN 0 THEN ? ELSE started_at_ms END,
		runner_id = ?, lease_expires_ms = ? WHERE id = ?`, ms(now), runnerID, ms(leaseUntil), id)
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim %s: %w", id, err)
	}
	r, err := t.GetRun(ctx, id)
	if err != nil {
		return store.Run{}, "", false, err
	}
	return r, run.Status(prev), true, nil
}

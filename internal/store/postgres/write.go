package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// txn implements store.Tx on one connection inside a transaction that
// holds the append lock.
type txn struct {
	reader
	c *txConn
}

// uniqueViolation reports whether err is a unique constraint failing, and
// which.
func uniqueViolation(err error) (constraint string, ok bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName, true
	}
	return "", false
}

func (t *txn) AppendEvents(ctx context.Context, fence string, drafts ...event.Draft) ([]event.Event, error) {
	if len(drafts) == 0 {
		return nil, nil
	}
	rows, err := prepareDrafts(fence, drafts)
	if err != nil {
		return nil, err
	}
	// All or nothing, even for a caller that carries on in the same
	// transaction after an error (see the SQLite store): PostgreSQL aborts
	// the whole transaction on a failed statement, so a savepoint is what
	// lets that caller carry on at all. It, and its release or rollback,
	// travel with the statements around them. An append that opens a
	// body of WriteBatch uses the body's savepoint: one subtransaction per
	// body, not two (see MaxBatch).
	sp, own := t.c.here("append_events")
	out, err := t.appendEvents(ctx, fence, rows)
	if err != nil {
		undo := t.c.undoTo
		if own {
			undo = t.c.rollbackTo
		}
		if rerr := undo(ctx, sp); rerr != nil {
			return nil, errors.Join(err, fmt.Errorf("append: rollback to savepoint: %w", rerr))
		}
		return nil, t.explain(ctx, err, rows, fence)
	}
	if own {
		t.c.release(sp)
	}
	return out, nil
}

// draftRow is a draft ready to insert: payload marshalled, stream known.
type draftRow struct {
	event.Event
	stream stream
}

// stream names what a seq counts: a run, or (run "") a session's own
// lifecycle events.
type stream struct{ run, session string }

// prepareDrafts checks the drafts and marshals their payloads before
// anything is written, so these failures need no rollback.
func prepareDrafts(fence string, drafts []event.Draft) ([]draftRow, error) {
	now := time.Now().UTC()
	out := make([]draftRow, len(drafts))
	for i, d := range drafts {
		if d.SessionID == "" {
			return nil, fmt.Errorf("append %s: a session id is required: %w", d.Type, store.ErrConflict)
		}
		if d.RunID == "" && !event.Runless(d.Type) || d.RunID != "" && event.RunlessOnly(d.Type) {
			return nil, fmt.Errorf("append %s: run id %q does not fit the type: %w", d.Type, d.RunID, store.ErrConflict)
		}
		if d.RunID == "" && fence != "" {
			return nil, fmt.Errorf("append %s: session events are not written under a runner's lease: %w", d.Type, store.ErrConflict)
		}
		payload, err := marshalPayload(d.Payload)
		if err != nil {
			return nil, fmt.Errorf("append %s: %w", d.Type, err)
		}
		k := stream{run: d.RunID}
		if d.RunID == "" {
			k = stream{session: d.SessionID}
		}
		out[i] = draftRow{stream: k, Event: event.Event{
			RunID: d.RunID, SessionID: d.SessionID, Type: d.Type,
			TS: event.Time{Time: now}, Terminal: event.IsTerminal(d.Type), Payload: payload,
		}}
	}
	return out, nil
}

// appendSQL reserves each stream's seqs and inserts the drafts, in one
// statement (/*lock*/ marks where AppendEach takes the append lock, see
// lockedAppend): the row update of each run (fenced: AND runner_id = the
// fence) or session hands out a block of seqs, as in the SQLite store, and
// the drafts take them in order. A stream that is missing or fenced out
// gets no row, so its drafts are not inserted; the caller sees fewer rows
// than drafts and rolls the call back. Ids are drawn in the order the
// SELECT yields rows, which ORDER BY ord makes the drafts' order. A
// project's events (session_id = the project's id, migration 15) take their
// seqs from the project's row the same way; session and project ids never
// collide (their prefixes differ), so a draft of no run finds one row.
const appendSQL = `WITH d AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bool[], $6::text[])
		WITH ORDINALITY AS d(run_id, session_id, type, ts_ms, terminal, payload, ord)
), r AS (
	UPDATE runs SET last_seq = runs.last_seq + c.n
	FROM (SELECT run_id, count(*) AS n FROM d WHERE run_id <> '' GROUP BY run_id) c
	WHERE runs.id = c.run_id AND ($7 = '' OR runs.runner_id = $7) /*lock*/
	RETURNING runs.id, runs.last_seq - c.n AS base
), s AS (
	UPDATE sessions SET last_seq = sessions.last_seq + c.n
	FROM (SELECT session_id, count(*) AS n FROM d WHERE run_id = '' GROUP BY session_id) c
	WHERE sessions.id = c.session_id /*lock*/
	RETURNING sessions.id, sessions.last_seq - c.n AS base
), p AS (
	UPDATE projects SET last_seq = projects.last_seq + c.n
	FROM (SELECT session_id, count(*) AS n FROM d WHERE run_id = '' GROUP BY session_id) c
	WHERE projects.id = c.session_id /*lock*/
	RETURNING projects.id, projects.last_seq - c.n AS base
), n AS (
	SELECT d.*, coalesce(r.base, s.base, p.base) + row_number() OVER (
		PARTITION BY d.run_id, CASE WHEN d.run_id = '' THEN d.session_id END ORDER BY d.ord) AS seq
	FROM d LEFT JOIN r ON d.run_id <> '' AND r.id = d.run_id
		LEFT JOIN s ON d.run_id = '' AND s.id = d.session_id
		LEFT JOIN p ON d.run_id = '' AND p.id = d.session_id
	WHERE coalesce(r.base, s.base, p.base) IS NOT NULL
)
INSERT INTO events (run_id, session_id, seq, type, ts_ms, terminal, payload)
SELECT run_id, session_id, seq, type, ts_ms, terminal, payload FROM n ORDER BY ord
RETURNING id, seq, run_id, session_id`

// appendRunSQL is appendSQL for drafts of one run, the journal's hot path
// (streamed deltas): no grouping, joins or window, a fifth less server
// time.
const appendRunSQL = `WITH r AS (
	UPDATE runs SET last_seq = last_seq + $2 WHERE id = $1 AND ($3 = '' OR runner_id = $3) /*lock*/
	RETURNING last_seq - $2 AS base
)
INSERT INTO events (run_id, session_id, seq, type, ts_ms, terminal, payload)
SELECT $1, d.session_id, r.base + d.ord, d.type, d.ts_ms, d.terminal, d.payload
FROM r, unnest($4::text[], $5::text[], $6::bigint[], $7::bool[], $8::text[])
	WITH ORDINALITY AS d(session_id, type, ts_ms, terminal, payload, ord)
ORDER BY d.ord
RETURNING id, seq, run_id, session_id`

// appendOneSQL is appendRunSQL for one draft: no arrays to encode and
// unnest, no sort (a serial append, or a commit of one streamed delta).
const appendOneSQL = `WITH r AS (
	UPDATE runs SET last_seq = last_seq + 1 WHERE id = $1 AND ($2 = '' OR runner_id = $2) /*lock*/
	RETURNING last_seq
)
INSERT INTO events (run_id, session_id, seq, type, ts_ms, terminal, payload)
SELECT $1, $3, r.last_seq, $4, $5, $6, $7 FROM r
RETURNING id, seq, run_id, session_id`

// oneRun is the run all rows belong to, or "".
func oneRun(rows []draftRow) string {
	for _, r := range rows {
		if r.stream != rows[0].stream {
			return ""
		}
	}
	return rows[0].stream.run
}

// appendQuery is the statement that appends rows under fence, and its
// arguments. It returns id, seq, run_id and session_id of each row.
func appendQuery(fence string, rows []draftRow) (string, []any) {
	n := len(rows)
	if r := rows[0]; n == 1 && r.RunID != "" {
		return appendOneSQL, []any{r.RunID, fence, r.SessionID, string(r.Type), r.TS.UnixMilli(), r.Terminal, string(r.Payload)}
	}
	var (
		runIDs, sessionIDs, types, payloads = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tss                                 = make([]int64, n)
		terminals                           = make([]bool, n)
	)
	for i, r := range rows {
		runIDs[i], sessionIDs[i], types[i] = r.RunID, r.SessionID, string(r.Type)
		tss[i], terminals[i], payloads[i] = r.TS.UnixMilli(), r.Terminal, string(r.Payload)
	}
	if run := oneRun(rows); run != "" {
		return appendRunSQL, []any{run, int64(n), fence, sessionIDs, types, tss, terminals, payloads}
	}
	return appendSQL, []any{runIDs, sessionIDs, types, tss, terminals, payloads, fence}
}

func (t *txn) appendEvents(ctx context.Context, fence string, rows []draftRow) ([]event.Event, error) {
	n := len(rows)
	sql, args := appendQuery(fence, rows)
	res, err := t.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	type idSeq struct{ id, seq int64 }
	got, err := collect(res, func(row sqlrow.Scanner) (idSeq, error) {
		var v idSeq
		var run, session string
		return v, row.Scan(&v.id, &v.seq, &run, &session)
	})
	if err != nil {
		return nil, err
	}
	if len(got) != n {
		return nil, errShortAppend
	}
	// RETURNING's order is not promised; ids ascend in draft order.
	slices.SortFunc(got, func(a, b idSeq) int { return cmp.Compare(a.id, b.id) })
	out := make([]event.Event, n)
	for i := range rows {
		out[i] = rows[i].Event
		out[i].ID, out[i].Seq = got[i].id, got[i].seq
	}
	return out, nil
}

// errShortAppend is an append that inserted fewer rows than drafts: a run
// or session missing, or a run fenced out. explain says which.
var errShortAppend = errors.New("append: not every stream could take its events")

// explain turns a failed append into the error the contract names. It runs
// after the call's rollback (or, for AppendEach, after the commit).
func (t reader) explain(ctx context.Context, err error, rows []draftRow, fence string) error {
	if c, ok := uniqueViolation(err); ok && c == "events_one_terminal" {
		return fmt.Errorf("append: run already has a terminal event: %w", store.ErrConflict)
	}
	if !errors.Is(err, errShortAppend) {
		return fmt.Errorf("append events: %w", err)
	}
	seen := map[stream]bool{}
	for _, r := range rows {
		k := r.stream
		if seen[k] {
			continue
		}
		seen[k] = true
		if k.run == "" {
			if _, gerr := t.GetSession(ctx, k.session); gerr != nil {
				return fmt.Errorf("append to session %s: %w", k.session, gerr)
			}
			continue
		}
		ru, gerr := t.GetRun(ctx, k.run)
		if gerr != nil {
			return fmt.Errorf("append to run %s: %w", k.run, gerr)
		}
		if fence != "" && ru.RunnerID != fence {
			return fmt.Errorf("append to run %s: %w", k.run, store.ErrLeaseLost)
		}
	}
	return fmt.Errorf("append: %w", err)
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

// exec runs a statement expected to change exactly one row; none is the
// error when it changes none.
func (t *txn) exec(ctx context.Context, what, id string, none error, sql string, args ...any) error {
	tag, err := t.c.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s %q: %w", what, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s %q: %w", what, id, none)
	}
	return nil
}

func (t *txn) InsertSession(ctx context.Context, s store.Session) error {
	_, err := t.c.Exec(ctx, `INSERT INTO sessions (`+sqlrow.SessionCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)`,
		s.ID, s.Title, s.Workspace, s.Model, ms(s.CreatedAt), ms(s.UpdatedAt), s.ParentSessionID, s.BranchedFromEventID, s.Pinned, nullMS(s), nullString(s.ProjectID), s.ProfileID,
		s.DelegatedSessionID, s.DelegatedRunID, s.DelegatedCallID)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

func (t *txn) UpdateSession(ctx context.Context, s store.Session) error {
	return t.exec(ctx, "session", s.ID, store.ErrNotFound,
		`UPDATE sessions SET title = $1, model = $2, updated_at_ms = $3,
		pinned = $4, archived_at_ms = $5, project_id = $6, profile_id = $7 WHERE id = $8`,
		s.Title, s.Model, ms(s.UpdatedAt), s.Pinned, nullMS(s), nullString(s.ProjectID), s.ProfileID, s.ID)
}

func (t *txn) TouchSession(ctx context.Context, id string, at time.Time) error {
	return t.exec(ctx, "session", id, store.ErrNotFound,
		`UPDATE sessions SET updated_at_ms = GREATEST(updated_at_ms, $1) WHERE id = $2`, ms(at), id)
}

func (t *txn) DeleteSession(ctx context.Context, id string) error {
	// Events carry no foreign key (appends stay cheap), so delete them here,
	// all but the session.deleted tombstone (see store.Tx).
	if _, err := t.c.Exec(ctx, `DELETE FROM events WHERE session_id = $1 AND NOT (run_id = '' AND type = $2)`,
		id, string(event.SessionDeleted)); err != nil {
		return fmt.Errorf("delete session events: %w", err)
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM checkpoints WHERE session_id = $1`, id); err != nil {
		return fmt.Errorf("delete session checkpoints: %w", err)
	}
	return t.exec(ctx, "session", id, store.ErrNotFound, `DELETE FROM sessions WHERE id = $1`, id)
}

func (t *txn) InsertRun(ctx context.Context, r store.Run) error {
	usage, _ := json.Marshal(r.Usage)
	_, err := t.c.Exec(ctx, `INSERT INTO runs (`+sqlrow.RunCols+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21)`,
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
	q := `UPDATE runs SET status = $1, model = $2, priority = $3, attempt = $4, runner_id = $5, lease_expires_ms = $6,
		error_code = $7, error_message = $8, usage_json = $9, started_at_ms = $10, ended_at_ms = $11,
		retries = $12, retry_at_ms = $13 WHERE id = $14`
	args := []any{string(r.Status), r.Model, r.Priority, r.Attempt, r.RunnerID, ms(r.LeaseExpiresAt),
		r.ErrorCode, r.ErrorMessage, string(usage), ms(r.StartedAt), ms(r.EndedAt), r.Retries, ms(r.RetryAt), r.ID}
	if len(from) > 0 {
		q += ` AND status = ANY($15)`
		args = append(args, strs(from))
	}
	return t.exec(ctx, "run", r.ID, store.ErrConflict, q, args...)
}

func (t *txn) RenewLeases(ctx context.Context, runnerID string, until time.Time) ([]string, error) {
	var owned []string
	for _, s := range run.All() {
		if s.Owned() {
			owned = append(owned, string(s))
		}
	}
	rows, err := t.c.Query(ctx, `UPDATE runs SET lease_expires_ms = $1 WHERE runner_id = $2 AND status = ANY($3) RETURNING id`,
		ms(until), runnerID, owned)
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	ids, err := collect(rows, func(row sqlrow.Scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return ids, nil
}

func (t *txn) InsertRequest(ctx context.Context, q store.Request) error {
	_, err := t.c.Exec(ctx, `INSERT INTO requests (`+sqlrow.RequestCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		q.ID, q.RunID, q.SessionID, q.Kind, q.Status, q.ToolCallID, string(q.Prompt), q.Response,
		ms(q.CreatedAt), ms(q.ExpiresAt), ms(q.ResolvedAt))
	if err != nil {
		return fmt.Errorf("insert request: %w", err)
	}
	return nil
}

func (t *txn) ResolveRequest(ctx context.Context, id, status, response string, at time.Time) error {
	err := t.exec(ctx, "request", id, store.ErrConflict, `UPDATE requests SET status = $1, response = $2, resolved_at_ms = $3
		WHERE id = $4 AND status = 'pending'`, status, response, ms(at), id)
	if errors.Is(err, store.ErrConflict) {
		if _, gerr := t.GetRequest(ctx, id); gerr != nil {
			return gerr
		}
	}
	return err
}

func (t *txn) InsertControl(ctx context.Context, c store.Control) error {
	payload := string(c.Payload)
	if payload == "" {
		payload = "{}"
	}
	_, err := t.c.Exec(ctx, `INSERT INTO controls (id, run_id, kind, payload_json, created_at_ms) VALUES ($1,$2,$3,$4,$5)`,
		c.ID, c.RunID, c.Kind, payload, ms(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert control: %w", err)
	}
	return nil
}

func (t *txn) ListControls(ctx context.Context, runID string) ([]store.Control, error) {
	rows, err := t.c.Query(ctx, `SELECT id, run_id, kind, payload_json, created_at_ms FROM controls
		WHERE run_id = $1 ORDER BY created_at_ms, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list controls: %w", err)
	}
	out, err := collect(rows, func(row sqlrow.Scanner) (store.Control, error) {
		var c store.Control
		var p string
		var at int64
		err := row.Scan(&c.ID, &c.RunID, &c.Kind, &p, &at)
		c.Payload, c.CreatedAt = json.RawMessage(p), fromMS(at)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list controls: %w", err)
	}
	return out, nil
}

func (t *txn) InsertRule(ctx context.Context, r store.Rule) error {
	_, err := t.c.Exec(ctx, `INSERT INTO approval_rules (`+sqlrow.RuleCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
		r.ID, r.Tool, r.Pattern, r.Scope, r.SessionID, ms(r.CreatedAt), store.RuleActorJSON(r.CreatedBy), r.RequestID)
	if err != nil {
		return fmt.Errorf("insert rule: %w", err)
	}
	return nil
}

func (t *txn) DeleteRule(ctx context.Context, id string) error {
	return t.exec(ctx, "rule", id, store.ErrNotFound, `DELETE FROM approval_rules WHERE id = $1`, id)
}

func (t *txn) UpsertRunner(ctx context.Context, r store.RunnerInfo) error {
	_, err := t.c.Exec(ctx, `INSERT INTO runners (id, host, pid, version, started_at_ms, heartbeat_at_ms)
		VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms`,
		r.ID, r.Host, r.PID, r.Version, ms(r.StartedAt), ms(r.HeartbeatAt))
	if err != nil {
		return fmt.Errorf("upsert runner: %w", err)
	}
	return nil
}

func (t *txn) DeleteRunner(ctx context.Context, id string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM runners WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete runner: %w", err)
	}
	return nil
}

// ClaimNext picks as the SQLite store does. FOR UPDATE SKIP LOCKED lets
// claimers pass over a run another transaction holds instead of queueing
// behind it; that every write transaction holds the append lock is what
// makes the "one busy run per session" check safe across hosts.
func (t *txn) ClaimNext(ctx context.Context, runnerID string, now, leaseUntil time.Time) (store.Run, run.Status, bool, error) {
	var id, prev string
	// A run parked while it waited for a person goes first once nothing of
	// it is pending any more; a run whose runner died while it waited too.
	err := t.c.QueryRow(ctx, `SELECT id, status FROM runs r
		WHERE status IN ('awaiting_approval','awaiting_clarify') AND (runner_id = '' OR lease_expires_ms < $1)
		AND (expires_at_ms = 0 OR expires_at_ms > $1)
		AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.run_id = r.id AND q.status = 'pending'
			AND (q.expires_at_ms = 0 OR q.expires_at_ms > $1))
		ORDER BY created_at_ms, ord LIMIT 1 FOR UPDATE OF r SKIP LOCKED`, ms(now)).Scan(&id, &prev)
	// Then a queued run of a session with no busy run and no better queued
	// run, or a recovering run whose retry time has come.
	if errors.Is(err, pgx.ErrNoRows) {
		err = t.c.QueryRow(ctx, `SELECT id, status FROM runs r WHERE (expires_at_ms = 0 OR expires_at_ms > $1) AND ((status = 'queued'
		AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.session_id = r.session_id
			AND o.status IN ('running','awaiting_approval','awaiting_clarify','cancelling','paused','recovering'))
		AND NOT EXISTS (SELECT 1 FROM runs q WHERE q.session_id = r.session_id AND q.status = 'queued'
			AND (q.priority > r.priority OR (q.priority = r.priority
				AND (q.created_at_ms < r.created_at_ms OR (q.created_at_ms = r.created_at_ms AND q.ord < r.ord))))))
		OR (status = 'recovering' AND retry_at_ms <= $1))
		ORDER BY priority DESC, created_at_ms, ord LIMIT 1 FOR UPDATE OF r SKIP LOCKED`, ms(now)).Scan(&id, &prev)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, "", false, nil
	}
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim: %w", err)
	}
	r, err := sqlrow.ScanRun(t.c.QueryRow(ctx, `UPDATE runs SET
		status = CASE WHEN status IN ('queued','recovering') THEN 'running' ELSE status END,
		attempt = CASE WHEN status IN ('queued','recovering') THEN attempt + 1 ELSE attempt END,
		retry_at_ms = 0,
		started_at_ms = CASE started_at_ms WHEN 0 THEN $1 ELSE started_at_ms END,
		runner_id = $2, lease_expires_ms = $3 WHERE id = $4 RETURNING `+sqlrow.RunCols, ms(now), runnerID, ms(leaseUntil), id))
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim %s: %w", id, err)
	}
	return r, run.Status(prev), true, nil
}

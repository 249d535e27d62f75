package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// txn implements store.Tx on one connection inside a transaction that
// holds the append lock.
type txn struct {
	reader
	conn *pgxpool.Conn
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

func (t *txn) AppendEvents(ctx context.Context, fence string, drafts ...event.Draft) (out []event.Event, err error) {
	if len(drafts) == 0 {
		return nil, nil
	}
	rows, err := prepareDrafts(fence, drafts)
	if err != nil {
		return nil, err
	}
	// All or nothing, even for a caller that carries on in the same
	// transaction after an error (see the SQLite store): PostgreSQL aborts
	// the whole transaction on a failed statement, so the savepoint is
	// what lets that caller carry on at all. It is sent with the first
	// reservation, in one round trip.
	sctx := context.WithoutCancel(ctx)
	defer func() {
		if err != nil {
			if _, rerr := t.conn.Exec(sctx, "ROLLBACK TO append_events; RELEASE append_events"); rerr != nil {
				err = errors.Join(err, fmt.Errorf("append: rollback to savepoint: %w", rerr))
			}
		}
	}()
	return t.appendEvents(ctx, fence, rows)
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
		if (d.RunID == "") != event.IsSession(d.Type) {
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

func (t *txn) appendEvents(ctx context.Context, fence string, rows []draftRow) ([]event.Event, error) {
	perStream := map[stream]int64{}
	var order []stream
	for _, r := range rows {
		if _, ok := perStream[r.stream]; !ok {
			order = append(order, r.stream)
		}
		perStream[r.stream]++
	}
	next := map[stream]int64{}
	for i, k := range order {
		n := perStream[k]
		last, err := t.reserve(ctx, k, n, fence, i == 0)
		if err != nil {
			return nil, err
		}
		next[k] = last - n + 1
	}
	n := len(rows)
	var (
		runIDs, sessionIDs, types, payloads = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		seqs, tss                           = make([]int64, n), make([]int64, n)
		terminals                           = make([]bool, n)
	)
	out := make([]event.Event, n)
	for i := range rows {
		e := rows[i].Event
		e.Seq = next[rows[i].stream]
		next[rows[i].stream]++
		out[i] = e
		runIDs[i], sessionIDs[i], seqs[i], types[i] = e.RunID, e.SessionID, e.Seq, string(e.Type)
		tss[i], terminals[i], payloads[i] = e.TS.UnixMilli(), e.Terminal, string(e.Payload)
	}
	// One statement for any number of rows. Ids are drawn in the order the
	// SELECT yields rows, which ORDER BY ord makes the drafts' order;
	// RETURNING's order is not promised, so ids are matched back by
	// (stream, seq), unique within the call. RELEASE rides along.
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO events (run_id, session_id, seq, type, ts_ms, terminal, payload)
		SELECT d.run_id, d.session_id, d.seq, d.type, d.ts_ms, d.terminal, d.payload
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bool[], $7::text[])
			WITH ORDINALITY AS d(run_id, session_id, seq, type, ts_ms, terminal, payload, ord)
		ORDER BY d.ord
		RETURNING id, run_id, session_id, seq`,
		runIDs, sessionIDs, seqs, types, tss, terminals, payloads)
	b.Queue(`RELEASE append_events`)
	res := t.conn.SendBatch(ctx, b)
	err := func() error {
		defer res.Close()
		ret, err := res.Query()
		if err != nil {
			return err
		}
		type key struct {
			stream stream
			seq    int64
		}
		ids := make(map[key]int64, n)
		for ret.Next() {
			var id, seq int64
			var runID, sessionID string
			if err := ret.Scan(&id, &runID, &sessionID, &seq); err != nil {
				ret.Close()
				return err
			}
			k := stream{run: runID}
			if runID == "" {
				k = stream{session: sessionID}
			}
			ids[key{k, seq}] = id
		}
		ret.Close()
		if err := ret.Err(); err != nil {
			return err
		}
		for i := range out {
			id, ok := ids[key{rows[i].stream, out[i].Seq}]
			if !ok {
				return fmt.Errorf("no id returned for %s seq %d", out[i].Type, out[i].Seq)
			}
			out[i].ID = id
		}
		_, err = res.Exec()
		return err
	}()
	if err != nil {
		if c, ok := uniqueViolation(err); ok && c == "events_one_terminal" {
			return nil, fmt.Errorf("append: run already has a terminal event: %w", store.ErrConflict)
		}
		return nil, fmt.Errorf("append events: %w", err)
	}
	return out, nil
}

// reserve takes n seqs of stream k and returns the last one; the first
// reservation of a call opens the call's savepoint in the same round trip.
// A run's reservation is fenced: it fails with ErrLeaseLost when fence is
// set and the run is leased to another runner. The row update also
// serialises appenders of one run, as in the SQLite store.
func (t *txn) reserve(ctx context.Context, k stream, n int64, fence string, first bool) (int64, error) {
	b := &pgx.Batch{}
	if first {
		b.Queue(`SAVEPOINT append_events`)
	}
	what, id := "run", k.run
	if k.run == "" {
		what, id = "session", k.session
		b.Queue(`UPDATE sessions SET last_seq = last_seq + $1 WHERE id = $2 RETURNING last_seq`, n, k.session)
	} else {
		b.Queue(`UPDATE runs SET last_seq = last_seq + $1 WHERE id = $2 AND ($3 = '' OR runner_id = $3) RETURNING last_seq`,
			n, k.run, fence)
	}
	res := t.conn.SendBatch(ctx, b)
	var last int64
	err := func() error {
		defer res.Close()
		if first {
			if _, err := res.Exec(); err != nil {
				return err
			}
		}
		return res.QueryRow().Scan(&last)
	}()
	switch {
	case errors.Is(err, pgx.ErrNoRows) && k.run == "":
		return 0, fmt.Errorf("append to session %s: %w", id, store.ErrNotFound)
	case errors.Is(err, pgx.ErrNoRows):
		if _, gerr := t.GetRun(ctx, k.run); gerr != nil {
			return 0, fmt.Errorf("append to run %s: %w", k.run, gerr)
		}
		return 0, fmt.Errorf("append to run %s: %w", k.run, store.ErrLeaseLost)
	case err != nil:
		return 0, fmt.Errorf("append to %s %s: %w", what, id, err)
	}
	return last, nil
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
	tag, err := t.conn.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write %s %q: %w", what, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s %q: %w", what, id, none)
	}
	return nil
}

func (t *txn) InsertSession(ctx context.Context, s store.Session) error {
	_, err := t.conn.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		s.ID, s.Title, s.Workspace, s.Model, ms(s.CreatedAt), ms(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

func (t *txn) UpdateSession(ctx context.Context, s store.Session) error {
	return t.exec(ctx, "session", s.ID, store.ErrNotFound,
		`UPDATE sessions SET title = $1, model = $2, updated_at_ms = $3 WHERE id = $4`,
		s.Title, s.Model, ms(s.UpdatedAt), s.ID)
}

func (t *txn) TouchSession(ctx context.Context, id string, at time.Time) error {
	return t.exec(ctx, "session", id, store.ErrNotFound,
		`UPDATE sessions SET updated_at_ms = GREATEST(updated_at_ms, $1) WHERE id = $2`, ms(at), id)
}

func (t *txn) DeleteSession(ctx context.Context, id string) error {
	// Events carry no foreign key (appends stay cheap), so delete them here,
	// all but the session.deleted tombstone (see store.Tx).
	if _, err := t.conn.Exec(ctx, `DELETE FROM events WHERE session_id = $1 AND NOT (run_id = '' AND type = $2)`,
		id, string(event.SessionDeleted)); err != nil {
		return fmt.Errorf("delete session events: %w", err)
	}
	return t.exec(ctx, "session", id, store.ErrNotFound, `DELETE FROM sessions WHERE id = $1`, id)
}

func (t *txn) InsertRun(ctx context.Context, r store.Run) error {
	usage, _ := json.Marshal(r.Usage)
	_, err := t.conn.Exec(ctx, `INSERT INTO runs (`+runCols+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)`,
		r.ID, r.SessionID, string(r.Status), r.Input, r.Model, r.Priority, r.Attempt, r.RunnerID,
		ms(r.LeaseExpiresAt), r.LastSeq, r.ErrorCode, r.ErrorMessage, string(usage),
		ms(r.CreatedAt), ms(r.StartedAt), ms(r.EndedAt),
		r.Retries, r.MaxRetries, r.RetryBackoff.Milliseconds(), ms(r.RetryAt))
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
	rows, err := t.conn.Query(ctx, `UPDATE runs SET lease_expires_ms = $1 WHERE runner_id = $2 AND status = ANY($3) RETURNING id`,
		ms(until), runnerID, owned)
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	ids, err := collect(rows, func(row pgx.Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return ids, nil
}

func (t *txn) InsertRequest(ctx context.Context, q store.Request) error {
	_, err := t.conn.Exec(ctx, `INSERT INTO requests (`+requestCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
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
	_, err := t.conn.Exec(ctx, `INSERT INTO controls (id, run_id, kind, payload_json, created_at_ms) VALUES ($1,$2,$3,$4,$5)`,
		c.ID, c.RunID, c.Kind, payload, ms(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert control: %w", err)
	}
	return nil
}

func (t *txn) ListControls(ctx context.Context, runID string) ([]store.Control, error) {
	rows, err := t.conn.Query(ctx, `SELECT id, run_id, kind, payload_json, created_at_ms FROM controls
		WHERE run_id = $1 ORDER BY created_at_ms, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list controls: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (store.Control, error) {
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
	_, err := t.conn.Exec(ctx, `INSERT INTO approval_rules (`+ruleCols+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		r.ID, r.Tool, r.Pattern, r.Scope, r.SessionID, ms(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert rule: %w", err)
	}
	return nil
}

func (t *txn) DeleteRule(ctx context.Context, id string) error {
	return t.exec(ctx, "rule", id, store.ErrNotFound, `DELETE FROM approval_rules WHERE id = $1`, id)
}

func (t *txn) UpsertRunner(ctx context.Context, r store.RunnerInfo) error {
	_, err := t.conn.Exec(ctx, `INSERT INTO runners (id, host, pid, version, started_at_ms, heartbeat_at_ms)
		VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms`,
		r.ID, r.Host, r.PID, r.Version, ms(r.StartedAt), ms(r.HeartbeatAt))
	if err != nil {
		return fmt.Errorf("upsert runner: %w", err)
	}
	return nil
}

func (t *txn) DeleteRunner(ctx context.Context, id string) error {
	if _, err := t.conn.Exec(ctx, `DELETE FROM runners WHERE id = $1`, id); err != nil {
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
	err := t.conn.QueryRow(ctx, `SELECT id, status FROM runs r
		WHERE status IN ('awaiting_approval','awaiting_clarify') AND (runner_id = '' OR lease_expires_ms < $1)
		AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.run_id = r.id AND q.status = 'pending'
			AND (q.expires_at_ms = 0 OR q.expires_at_ms > $1))
		ORDER BY created_at_ms, ord LIMIT 1 FOR UPDATE OF r SKIP LOCKED`, ms(now)).Scan(&id, &prev)
	// Then a queued run of a session with no busy run and no better queued
	// run, or a recovering run whose retry time has come.
	if errors.Is(err, pgx.ErrNoRows) {
		err = t.conn.QueryRow(ctx, `SELECT id, status FROM runs r WHERE (status = 'queued'
		AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.session_id = r.session_id
			AND o.status IN ('running','awaiting_approval','awaiting_clarify','cancelling','paused','recovering'))
		AND NOT EXISTS (SELECT 1 FROM runs q WHERE q.session_id = r.session_id AND q.status = 'queued'
			AND (q.priority > r.priority OR (q.priority = r.priority
				AND (q.created_at_ms < r.created_at_ms OR (q.created_at_ms = r.created_at_ms AND q.ord < r.ord))))))
		OR (status = 'recovering' AND retry_at_ms <= $1)
		ORDER BY priority DESC, created_at_ms, ord LIMIT 1 FOR UPDATE OF r SKIP LOCKED`, ms(now)).Scan(&id, &prev)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, "", false, nil
	}
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim: %w", err)
	}
	r, err := scanRun(t.conn.QueryRow(ctx, `UPDATE runs SET
		status = CASE WHEN status IN ('queued','recovering') THEN 'running' ELSE status END,
		attempt = CASE WHEN status IN ('queued','recovering') THEN attempt + 1 ELSE attempt END,
		retry_at_ms = 0,
		started_at_ms = CASE started_at_ms WHEN 0 THEN $1 ELSE started_at_ms END,
		runner_id = $2, lease_expires_ms = $3 WHERE id = $4 RETURNING `+runCols, ms(now), runnerID, ms(leaseUntil), id))
	if err != nil {
		return store.Run{}, "", false, fmt.Errorf("claim %s: %w", id, err)
	}
	return r, run.Status(prev), true, nil
}

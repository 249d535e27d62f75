package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// txConn is a write transaction's connection that holds back statements
// whose results nobody reads (BEGIN and the append lock, SAVEPOINT,
// RELEASE, ROLLBACK TO) and sends them in one pipeline with the next
// statement that does return something. Round trips, not the server's
// work, were most of a journal commit's time (about 30 µs each on
// loopback, against 100-150 µs for the WAL flush of the commit): an
// append op of the journal writer is one round trip this way, where it
// was four.
//
// Its statements are detached from the cancellation of the context a body
// passes (see store.Tx): pgx closes a connection whose query is cancelled,
// which would end the transaction of every body in the batch.
type txConn struct {
	conn    *pgxpool.Conn
	pending []string // statements without arguments, in order
	sent    bool     // something reached the server: the transaction began
	// fresh is a savepoint nothing has been done in yet, or "": rolling
	// back to it is rolling back to now, so a caller that needs a
	// savepoint here can use it instead of opening another.
	fresh string
}

// queue holds sql back until the next statement is sent.
func (c *txConn) queue(sql ...string) {
	c.pending, c.fresh = append(c.pending, sql...), ""
}

// savepoint opens savepoint name with the next statement sent.
func (c *txConn) savepoint(name string) {
	c.queue("SAVEPOINT " + name)
	c.fresh = name
}

// here is a savepoint to roll back to now: the fresh one, or a new one
// named name (own reports which; only an own savepoint is released).
func (c *txConn) here(name string) (sp string, own bool) {
	if c.fresh != "" {
		return c.fresh, false
	}
	c.savepoint(name)
	return name, true
}

// release closes savepoint name, keeping what was done since.
func (c *txConn) release(name string) { c.queue("RELEASE " + name) }

// rollbackTo undoes what was done since savepoint name and closes it.
// When nothing reached the server since, the savepoint is still held back
// and is dropped with what followed it. Otherwise the rollback is sent at
// once, by the simple protocol: the transaction may be aborted by the
// error being rolled back, and pgx would first re-prepare, in that aborted
// transaction, every statement of the batch that failed (it forgets them
// on an error), which the server refuses.
func (c *txConn) rollbackTo(ctx context.Context, name string) error {
	for i := len(c.pending) - 1; i >= 0; i-- {
		if c.pending[i] == "SAVEPOINT "+name {
			c.pending, c.fresh = c.pending[:i], ""
			return nil
		}
	}
	return c.sendNow(ctx, "ROLLBACK TO "+name, "RELEASE "+name)
}

// undoTo undoes what was done since savepoint name and keeps it open (and
// fresh again).
func (c *txConn) undoTo(ctx context.Context, name string) error {
	for i := len(c.pending) - 1; i >= 0; i-- {
		if c.pending[i] == "SAVEPOINT "+name {
			c.pending = c.pending[:i+1]
			c.fresh = name
			return nil
		}
	}
	if err := c.sendNow(ctx, "ROLLBACK TO "+name); err != nil {
		return err
	}
	c.fresh = name
	return nil
}

// sendNow sends the held-back statements and sql at once, by the simple
// protocol (see rollbackTo).
func (c *txConn) sendNow(ctx context.Context, sql ...string) error {
	all := strings.Join(append(c.pending, sql...), "; ")
	c.pending, c.sent, c.fresh = c.pending[:0], true, ""
	_, err := c.conn.Exec(context.WithoutCancel(ctx), all)
	return err
}

// batch starts a batch with the held-back statements.
func (c *txConn) batch() *pgx.Batch {
	b := &pgx.Batch{}
	for _, s := range c.pending {
		b.Queue(s)
	}
	return b
}

// send sends b, whose first len(c.pending) statements are the held-back
// ones, and reads their results; the caller reads the rest and closes br.
func (c *txConn) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	n := len(c.pending)
	c.pending, c.sent, c.fresh = c.pending[:0], true, ""
	br := c.conn.SendBatch(context.WithoutCancel(ctx), b)
	for range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	return br, nil
}

// commit sends the held-back statements and COMMIT. With changed it also
// asks, in the same round trip, whether the transaction wrote anything: a
// transaction that changed a row has been given an id.
func (c *txConn) commit(ctx context.Context, changed bool) (bool, error) {
	if !changed {
		tag, err := c.Exec(ctx, "COMMIT")
		if err != nil {
			return false, err
		}
		return false, committed(tag)
	}
	b := c.batch()
	b.Queue("SELECT pg_current_xact_id_if_assigned() IS NOT NULL")
	b.Queue("COMMIT")
	br, err := c.send(ctx, b)
	if err != nil {
		return false, err
	}
	var wrote bool
	if err := br.QueryRow().Scan(&wrote); err != nil {
		br.Close()
		return false, err
	}
	tag, err := br.Exec()
	if err := errors.Join(err, br.Close()); err != nil {
		return false, err
	}
	return wrote, committed(tag)
}

// committed is nil when a COMMIT's tag says it committed. A transaction
// that met an error it did not roll back to a savepoint is aborted, and
// COMMIT then only rolls it back.
func committed(tag pgconn.CommandTag) error {
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

func (c *txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(c.pending) == 0 {
		c.sent, c.fresh = true, ""
		return c.conn.Exec(context.WithoutCancel(ctx), sql, args...)
	}
	b := c.batch()
	b.Queue(sql, args...)
	br, err := c.send(ctx, b)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (c *txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if len(c.pending) == 0 {
		c.sent, c.fresh = true, ""
		return c.conn.Query(context.WithoutCancel(ctx), sql, args...)
	}
	b := c.batch()
	b.Queue(sql, args...)
	br, err := c.send(ctx, b)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (c *txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return rowOf{rows}
}

// batchRows closes its batch with the rows.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	r.br.Close()
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.br.Close()
	return false
}

// rowOf is QueryRow's answer over Query's: the first row, or
// pgx.ErrNoRows.
type rowOf struct{ rows pgx.Rows }

func (r rowOf) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

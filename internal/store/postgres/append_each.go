package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// AppendEach appends each draft under its fence, in order, in one
// transaction, as a WriteBatch of one AppendEvents body per draft would:
// a draft that cannot be written (its run missing or leased to another
// runner) fails alone with the error AppendEvents gives, and err is the
// transaction's failure (then nothing was written). It is the journal
// writer's path for the appends runners stream (Writer.SubmitAppend).
//
// The whole transaction is one round trip and one implicit transaction:
// one statement per run of drafts with the same fence, each taking the
// append lock itself (lockedAppend), travel in one pipeline with a single
// Sync, at which the server commits. The pool's sessions default to READ
// COMMITTED, so the row updates that hand out seqs see what committed
// before the lock was granted (and re-read a row updated meanwhile). A
// WriteBatch costs a round trip per body and one for the commit, because
// a body is Go code that reads what each statement returns; here nothing
// needs reading before the commit: a stream that is missing or fenced out
// takes no seqs and inserts no rows, and the statement keeps the other
// streams' rows. A statement the server refuses (a second terminal event;
// a storage failure) aborts the pipeline: the server skips everything
// after it and rolls the transaction back at the Sync, and the drafts go
// through WriteBatch one body each, so that the failure stays with its
// draft. A lost connection is the transaction's error, as a lost COMMIT
// is WriteBatch's: nothing is written twice.
func (d *DB) AppendEach(ctx context.Context, appends []store.Append) ([]error, error) {
	errs := make([]error, len(appends))
	var stmts []appendStmt
	for i, a := range appends {
		rows, err := prepareDrafts(a.Fence, []event.Draft{a.Draft})
		if err != nil {
			errs[i] = err // nothing to write: it fails alone
			continue
		}
		if n := len(stmts); n == 0 || stmts[n-1].fence != a.Fence {
			stmts = append(stmts, appendStmt{fence: a.Fence})
		}
		st := &stmts[len(stmts)-1]
		st.idx, st.rows = append(st.idx, i), append(st.rows, rows[0])
	}
	if len(stmts) == 0 {
		return errs, nil
	}
	wrote, err := d.appendPipelined(ctx, stmts)
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
		return d.appendApart(ctx, appends, stmts, errs)
	}
	if err != nil {
		return nil, err
	}
	// A stream that took no rows: say why, as AppendEvents would. This
	// reads what is committed now, as AppendEvents reads after its
	// rollback.
	for j, st := range stmts {
		for k, i := range st.idx {
			if !wrote[j][st.rows[k].stream] {
				errs[i] = d.reader.explain(ctx, errShortAppend, st.rows[k:k+1], st.fence)
			}
		}
	}
	return errs, nil
}

// appendStmt is one statement of AppendEach: drafts next to each other
// with the same fence.
type appendStmt struct {
	fence string
	idx   []int // the drafts' indexes in AppendEach's appends
	rows  []draftRow
}

// appendPipelined sends the whole transaction with one Sync and reports
// which streams took rows in each statement. A *pgconn.PgError is the
// server refusing a statement or the commit, and then nothing was written.
func (d *DB) appendPipelined(ctx context.Context, stmts []appendStmt) ([]map[stream]bool, error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	for _, st := range stmts {
		sql, args := appendQuery(st.fence, st.rows)
		if d.lock {
			sql = lockedAppend[sql]
		}
		b.Queue(sql, args...)
	}
	br := conn.SendBatch(ctx, b)
	wrote := make([]map[stream]bool, len(stmts))
	read := func() error {
		for j := range stmts {
			wrote[j] = map[stream]bool{}
			rows, err := br.Query()
			if err != nil {
				return err
			}
			for rows.Next() {
				var id, seq int64
				var k stream
				if err := rows.Scan(&id, &seq, &k.run, &k.session); err != nil {
					rows.Close()
					return err
				}
				if k.run != "" {
					k.session = ""
				}
				wrote[j][k] = true
			}
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	// Close reads to the Sync: the commit's outcome.
	if err := errors.Join(read(), br.Close()); err != nil {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			rollback(conn)
		}
		return nil, fmt.Errorf("append: %w", err)
	}
	return wrote, nil
}

// appendApart appends each draft of stmts in a body of its own, so that a
// draft the server refuses fails alone.
func (d *DB) appendApart(ctx context.Context, appends []store.Append, stmts []appendStmt, errs []error) ([]error, error) {
	var idx []int
	var fns []func(store.Tx) error
	for _, st := range stmts {
		for _, i := range st.idx {
			a := appends[i]
			idx = append(idx, i)
			fns = append(fns, func(tx store.Tx) error {
				_, err := tx.AppendEvents(ctx, a.Fence, a.Draft)
				return err
			})
		}
	}
	got, err := d.WriteBatch(ctx, fns)
	if err != nil {
		return nil, err
	}
	for k, i := range idx {
		errs[i] = got[k]
	}
	return errs, nil
}

// lockedAppend maps each append statement to itself taking the append lock
// first: in the WHERE of every UPDATE that reserves seqs, an uncorrelated
// sub-select, which the planner runs once as a one-time filter before the
// UPDATE reads a row. No event row is inserted but from a row such an
// UPDATE returned, so every id is drawn under the lock, and the lock is
// held until the transaction ends, as BEGIN's is. A separate SELECT of the
// lock in the pipeline cost a statement's work per commit.
var lockedAppend = func() map[string]string {
	lock := fmt.Sprintf("AND (SELECT true FROM pg_advisory_xact_lock(%d))", appendLock)
	m := map[string]string{}
	for _, sql := range []string{appendSQL, appendRunSQL, appendOneSQL} {
		m[sql] = strings.ReplaceAll(sql, "/*lock*/", lock)
	}
	return m
}()

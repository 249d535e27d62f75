package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// The driver parses every statement it is not given prepared, on every
// execution, and parsing was most of the CPU of a journal commit and of the
// hub's tail read after it. Statements are therefore prepared once per
// connection and kept for the life of the DB.

// maxPrepared bounds a stmtCache: some queries are built from caller input
// (IN lists of any length), and past the bound a query simply runs
// unprepared, as before.
const maxPrepared = 128

// stmtCache prepares queries on the reader pool on first use. database/sql
// prepares a *sql.Stmt again on each pooled connection it meets, and a
// connection is held by one Rows at a time, so sharing one is safe.
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// get returns query prepared, or nil when it is not (cache full or closed,
// or preparing failed, in which case running it unprepared reports the
// error as it always did).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	s, ok := c.m[query]
	full := c.closed || len(c.m) >= maxPrepared
	c.mu.Unlock()
	if ok || full {
		return s
	}
	// Prepare outside the lock: it may wait for a pooled connection, and
	// other queries must not wait behind it.
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok || c.closed || len(c.m) >= maxPrepared {
		s.Close()
		return prev
	}
	c.m[query] = s
	return s
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for q, s := range c.m {
		errs = append(errs, s.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// wstmt names a statement of the write path. They are prepared when the DB
// opens, not on first use: the writer pool has one connection, which an
// open transaction holds, so preparing on the pool from inside a
// transaction would wait for itself.
type wstmt int

const (
	wSavepointOp wstmt = iota
	wRollbackToOp
	wReleaseOp
	wSavepointAppend
	wRollbackToAppend
	wReleaseAppend
	wReserveSeqs
	wReserveSessionSeqs
	wReserveProjectSeqs
	wInsertEvent
	numWstmts
)

var writeSQL = [numWstmts]string{
	wSavepointOp:      `SAVEPOINT op`,
	wRollbackToOp:     `ROLLBACK TO op`,
	wReleaseOp:        `RELEASE op`,
	wSavepointAppend:  `SAVEPOINT append_events`,
	wRollbackToAppend: `ROLLBACK TO append_events`,
	wReleaseAppend:    `RELEASE append_events`,
	// Reserve a contiguous block of seqs per run with one UPDATE each: this
	// is what keeps seq gap-free across processes, since the row update
	// serialises concurrent appenders of the same run.
	wReserveSeqs: `UPDATE runs SET last_seq = last_seq + ?
		WHERE id = ? AND (? = '' OR runner_id = ?) RETURNING last_seq`,
	// The same for a session's lifecycle events, which belong to no run.
	wReserveSessionSeqs: `UPDATE sessions SET last_seq = last_seq + ? WHERE id = ? RETURNING last_seq`,
	// And for a project's events (migration 15).
	wReserveProjectSeqs: `UPDATE projects SET last_seq = last_seq + ? WHERE id = ? RETURNING last_seq`,
	wInsertEvent:        insertEvents + eventRow,
}

type writeStmts [numWstmts]*sql.Stmt

func prepareWrites(ctx context.Context, db *sql.DB) (*writeStmts, error) {
	var ws writeStmts
	for i, q := range writeSQL {
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			ws.close()
			return nil, err
		}
		ws[i] = s
	}
	return &ws, nil
}

func (ws *writeStmts) close() error {
	var errs []error
	for i, s := range ws {
		if s != nil {
			errs = append(errs, s.Close())
			ws[i] = nil
		}
	}
	return errors.Join(errs...)
}

package sqlite

import (
	"context"
	"database/sql"
)

// detachedTx is the write transaction as its bodies use it: each statement
// runs detached from the cancellation of the context it is given (see
// store.Tx). The driver interrupts a statement whose context ends, and
// SQLite answers an interrupted write inside a transaction by rolling the
// whole transaction back: every body of the batch would lose its writes,
// and the bodies after it would run outside any transaction, each
// committing on its own.
type detachedTx struct{ tx *sql.Tx }

func (d detachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.tx.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (d detachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.tx.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (d detachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.tx.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}

// detachedStmt is a prepared write statement bound to a detachedTx.
type detachedStmt struct{ s *sql.Stmt }

func (d detachedStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return d.s.ExecContext(context.WithoutCancel(ctx), args...)
}

func (d detachedStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return d.s.QueryContext(context.WithoutCancel(ctx), args...)
}

func (d detachedStmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return d.s.QueryRowContext(context.WithoutCancel(ctx), args...)
}

package postgres

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// OpenWithoutAppendLock opens a store whose write transactions do not take
// the append lock: the design the journal must not have, for the test that
// shows what it would cost.
func OpenWithoutAppendLock(ctx context.Context, url string) (*DB, error) {
	d, err := Open(ctx, url)
	if err == nil {
		d.begin, d.lock = []string{"BEGIN"}, false
	}
	return d, err
}

// MigrateDownTo rolls the database at url back to schema version v, for
// the tests of a migration's backfill: down, write as an older binary
// would, then Open again.
func MigrateDownTo(ctx context.Context, url string, v int64) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// ExplainSearch is PostgreSQL's plan of Search(q) for the word "needle",
// sequential scans discouraged: on a test's small tables they are the
// cheap choice, and the plan's shape (where it can start, what it joins
// how) is what a test checks.
func ExplainSearch(ctx context.Context, d *DB, q store.SearchQuery) (string, error) {
	query, args := searchSQL(q, "'needle':*", store.SearchLimit+1, 0)
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		return "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// Exec runs SQL on the store's pool, for tests that shape the data in bulk.
func Exec(ctx context.Context, d *DB, sql string) error {
	_, err := d.pool.Exec(ctx, sql)
	return err
}

package postgres

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
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

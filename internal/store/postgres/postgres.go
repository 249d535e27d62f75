// Package postgres implements store.Store on PostgreSQL with pgx v5 and its
// pool, for several web tiers and runners on several hosts sharing one
// database. Go sees what the SQLite store gives it (the conformance suite,
// internal/store/storetest, runs against both).
//
// Journal order: event ids come from an identity sequence, and PostgreSQL
// assigns sequence values in call order, not commit order, so a reader
// tailing `events WHERE id > cursor` could pass an id whose transaction
// commits later and never see it. Every write transaction therefore takes
// one transaction-level advisory lock (the append lock) before anything
// else: ids are assigned and committed in the same order, as SQLite's one
// writer does. Taking it first, before any row lock, is what keeps it free
// of deadlocks (docs/ARCHITECTURE.md has the cost).
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/caduceus-dev/caduceus/internal/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion is the goose version of the newest embedded migration. The
// versions follow the SQLite store's: the same number is the same schema.
const SchemaVersion = 30

// Advisory lock keys (one namespace per database).
const (
	// appendLock orders every write transaction of the database.
	appendLock int64 = 0x6361647563657573 // "caduceus"
	// migrateLock is held while migrations are applied.
	migrateLock int64 = 0x6361647563657574
)

// versionTable is goose's record of applied migrations.
const versionTable = "goose_db_version"

// beginWrite opens a write transaction and takes the append lock.
var beginWrite = []string{"BEGIN ISOLATION LEVEL READ COMMITTED", fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", appendLock)}

// ErrBadURL is a database URL that does not parse.
var ErrBadURL = errors.New("bad database URL")

// DB is a PostgreSQL-backed store.Store.
type DB struct {
	reader
	pool  *pgxpool.Pool
	begin []string // beginWrite; tests show what goes wrong without the lock
	lock  bool     // AppendEach takes the append lock (lockedAppend)
}

// Open connects to the database at url (postgres://...), applies pending
// migrations and returns the store. Errors never carry the URL's password.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		// pgx's message shows the URL with its password masked.
		return nil, fmt.Errorf("postgres: %w: %v", ErrBadURL, err)
	}
	// AppendEach's implicit transactions rely on it (each statement sees
	// what committed before the append lock was granted), whatever the
	// server's default; it travels in the startup message.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{reader: reader{q: pool}, pool: pool, begin: beginWrite, lock: true}, nil
}

// Close closes the pool.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// Write runs fn in one transaction.
func (d *DB) Write(ctx context.Context, fn func(store.Tx) error) error {
	errs, err := d.WriteBatch(ctx, []func(store.Tx) error{fn})
	if err != nil {
		return err
	}
	return errs[0]
}

// WriteBatch runs fns in one transaction under the append lock, each under
// its own savepoint. BEGIN, the lock and the savepoints travel with the
// statements after them (txConn): a batch of appends costs a round trip
// per append and one for the commit.
func (d *DB) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	errs, _, err := d.writeBatch(ctx, fns, false)
	return errs, err
}

// WriteBatchChanges is WriteBatch that also reports whether the committed
// transaction changed any row. One that changed nothing wrote no WAL, so
// its success says nothing about whether writes work: on a full disk such
// a transaction still commits. The question travels with the COMMIT, so
// it costs no round trip.
func (d *DB) WriteBatchChanges(ctx context.Context, fns []func(store.Tx) error) ([]error, bool, error) {
	return d.writeBatch(ctx, fns, true)
}

func (d *DB) writeBatch(ctx context.Context, fns []func(store.Tx) error, count bool) ([]error, bool, error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("begin: %w", err)
	}
	// A connection released inside a transaction (a failed ROLLBACK) is
	// closed by the pool, not reused.
	defer conn.Release()
	tc := &txConn{conn: conn}
	tc.queue(d.begin...)
	t := &txn{reader: reader{q: tc}, c: tc}
	errs := make([]error, len(fns))
	for i, fn := range fns {
		if len(fns) == 1 {
			errs[i] = fn(t)
			break
		}
		tc.savepoint("op")
		if errs[i] = fn(t); errs[i] == nil {
			tc.release("op")
		} else if err := tc.rollbackTo(ctx, "op"); err != nil {
			rollback(conn)
			return nil, false, fmt.Errorf("rollback to savepoint: %w", err)
		}
	}
	if !tc.sent {
		return errs, false, nil // nothing was written: no transaction to end
	}
	if len(fns) == 1 && errs[0] != nil {
		rollback(conn)
		return errs, false, nil
	}
	changed, err := tc.commit(ctx, count)
	if err != nil {
		if !errors.Is(err, pgx.ErrTxCommitRollback) { // that one has ended
			rollback(conn)
		}
		return nil, false, fmt.Errorf("commit: %w", err)
	}
	// Changes a failing body made and rolled back to its savepoint gave
	// the transaction its id too; with no body succeeding, none of them is
	// committed.
	return errs, changed && anySucceeded(errs), nil
}

func anySucceeded(errs []error) bool {
	for _, err := range errs {
		if err == nil {
			return true
		}
	}
	return false
}

// MaxBatch bounds the bodies of one WriteBatch for the journal writer:
// each body's savepoint is a subtransaction, and a transaction with more
// than 64 (PostgreSQL's per-backend cache of them) makes every snapshot
// taken meanwhile, in any session, look them up on disk. An append that
// opens a body uses the body's savepoint (a batch of streamed deltas is one
// subtransaction per body); one after other writes opens its own, hence
// two per body.
func (d *DB) MaxBatch() int { return 32 }

// rollback ends the connection's transaction; when it cannot, the pool
// closes the connection on release (it is not idle).
func rollback(conn *pgxpool.Conn) {
	_, _ = conn.Exec(context.Background(), "ROLLBACK")
}

// migrate applies the embedded goose migrations, one process at a time: a
// session advisory lock serialises processes starting together, and each
// re-reads the applied versions once it holds the lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	if err := prepareVersionTable(ctx, db); err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(advisoryLock{}),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	// Up first asks whether anything is pending, without the lock; a
	// process that finds the database current never waits.
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade caduceus", v, SchemaVersion)
	}
	if v < SchemaVersion {
		return fmt.Errorf("database schema version %d after migrating, want %d", v, SchemaVersion)
	}
	return nil
}

// prepareVersionTable creates goose's version table under the migration
// lock. goose creates it on its own, but outside its lock: processes
// starting together on an empty database then collide and all but one
// retry a second later.
func prepareVersionTable(ctx context.Context, db *sql.DB) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Close()
	var lock advisoryLock
	if err := lock.SessionLock(ctx, conn); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.SessionUnlock(context.WithoutCancel(ctx), conn)) }()
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, versionTable).Scan(&exists); err != nil {
		return fmt.Errorf("migrations: look for %s: %w", versionTable, err)
	}
	if exists {
		return nil
	}
	st, err := database.NewStore(database.DialectPostgres, versionTable)
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer tx.Rollback()
	if err := st.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("migrations: create %s: %w", versionTable, err)
	}
	// goose starts every version table with version 0.
	if err := st.Insert(ctx, tx, database.InsertRequest{Version: 0}); err != nil {
		return fmt.Errorf("migrations: create %s: %w", versionTable, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: create %s: %w", versionTable, err)
	}
	return nil
}

// advisoryLock is goose's session lock: a blocking session-level advisory
// lock. goose's own PostgreSQL locker polls every 5 s, which would make a
// process started beside another wait that long.
type advisoryLock struct{}

func (advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
		return fmt.Errorf("migrations: take the lock: %w", err)
	}
	return nil
}

func (advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", migrateLock).Scan(&ok); err != nil {
		return fmt.Errorf("migrations: release the lock: %w", err)
	}
	if !ok {
		return errors.New("migrations: the lock was not held")
	}
	return nil
}

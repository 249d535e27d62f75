// Package sqlite implements store.Store on a SQLite file (modernc.org/sqlite,
// no cgo) in WAL mode. One connection writes and several read, so readers
// never wait for the journal writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is a SQLite-backed store.Store.
type DB struct {
	reader
	w  *sql.DB // exactly one connection: SQLite has one writer anyway
	ws *writeStmts
}

// checkWritable says plainly when the data directory cannot take the
// database (read-only, not a directory, no permission), instead of the
// driver's "unable to open database file (14)".
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".caduceus-write-check-*")
	if err == nil {
		name := f.Name()
		f.Close()
		return os.Remove(name)
	}
	return fmt.Errorf("the data directory %s cannot be written (%v): choose a writable one with --data-dir (CADUCEUS_DATA_DIR) or fix its permissions: %w", dir, errors.Unwrap(err), ErrDataDir)
}

// ErrDataDir is the data directory not being usable.
var ErrDataDir = errors.New("data directory not writable")

// Open opens (creating if needed) the database file at path and applies
// pending migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := checkWritable(filepath.Dir(path)); err != nil {
		return nil, err
	}
	// FULL sync: a commit the journal reports durable survives power loss;
	// group commit amortises the fsync. The busy timeout comes first: the
	// pragmas run in order on each new connection, and switching a file to
	// WAL while another process opens it waits for its lock only once the
	// timeout is set (CI: SQLITE_BUSY from two opens of a legacy file).
	pragmas := []string{
		"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)",
		"foreign_keys(ON)",
	}
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()

	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := pingWhileBusy(ctx, w, openBusyWait); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	ws, err := prepareWrites(ctx, w)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: prepare: %w", path, err)
	}

	q.Set("_txlock", "deferred")
	r, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		ws.close()
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	return &DB{reader: reader{q: r, db: r, stmts: newStmtCache(r)}, w: w, ws: ws}, nil
}

// openBusyWait bounds how long Open waits for a file another process is
// opening or migrating, as busy_timeout bounds a statement.
const openBusyWait = 10 * time.Second

// pingWhileBusy makes db's first connection, trying again while the file
// is busy. Setting up a connection (its pragmas: the switch to WAL, the
// WAL index of a file another process is just opening) can meet
// SQLITE_BUSY at once, without the busy handler: CI saw it when two
// processes opened one file together on a loaded machine.
func pingWhileBusy(ctx context.Context, db *sql.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := 10 * time.Millisecond
	for {
		err := db.PingContext(ctx)
		var coded interface{ Code() int }
		if err == nil || !errors.As(err, &coded) || coded.Code()&0xff != sqliteBusyCode || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// sqliteBusyCode is SQLITE_BUSY, the primary result code.
const sqliteBusyCode = 5

// Close closes both connection pools and their prepared statements.
func (d *DB) Close() error {
	return errors.Join(d.reader.stmts.close(), d.ws.close(), d.reader.db.Close(), d.w.Close())
}

// Write runs fn in one immediate transaction.
func (d *DB) Write(ctx context.Context, fn func(store.Tx) error) error {
	errs, err := d.WriteBatch(ctx, []func(store.Tx) error{fn})
	if err != nil {
		return err
	}
	return errs[0]
}

// WriteBatch runs fns in one transaction, each under its own savepoint.
func (d *DB) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	errs, _, err := d.writeBatch(ctx, fns, false)
	return errs, err
}

// WriteBatchChanges is WriteBatch that also reports whether the committed
// transaction changed any row. One that changed nothing wrote nothing, so
// its success says nothing about whether writes work: on a full disk an
// empty transaction still commits. It costs two more statements, so the
// journal writer uses it only while writes fail.
func (d *DB) WriteBatchChanges(ctx context.Context, fns []func(store.Tx) error) ([]error, bool, error) {
	return d.writeBatch(ctx, fns, true)
}

func (d *DB) writeBatch(ctx context.Context, fns []func(store.Tx) error, count bool) ([]error, bool, error) {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("begin: %w", err)
	}
	var before int64
	if count {
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			tx.Rollback()
			return nil, false, fmt.Errorf("count changes: %w", err)
		}
	}
	dt := detachedTx{tx}
	t := &txn{reader: reader{q: dt}, tx: dt, ws: d.ws}
	errs := make([]error, len(fns))
	for i, fn := range fns {
		if len(fns) == 1 {
			errs[i] = fn(t)
			break
		}
		if _, err := t.stmt(wSavepointOp).ExecContext(ctx); err != nil {
			tx.Rollback()
			return nil, false, fmt.Errorf("savepoint: %w", err)
		}
		if errs[i] = fn(t); errs[i] != nil {
			if _, err := t.stmt(wRollbackToOp).ExecContext(ctx); err != nil {
				tx.Rollback()
				return nil, false, fmt.Errorf("rollback to savepoint: %w", err)
			}
		}
		if _, err := t.stmt(wReleaseOp).ExecContext(ctx); err != nil {
			tx.Rollback()
			return nil, false, fmt.Errorf("release savepoint: %w", err)
		}
	}
	if len(fns) == 1 && errs[0] != nil {
		tx.Rollback()
		return errs, false, nil
	}
	changed := false
	if count {
		// Changes a failing body made and rolled back to its savepoint are
		// counted too; with no body succeeding, none of them is committed.
		var after int64
		if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			tx.Rollback()
			return nil, false, fmt.Errorf("count changes: %w", err)
		}
		changed = after > before && anySucceeded(errs)
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("commit: %w", err)
	}
	return errs, changed, nil
}

func anySucceeded(errs []error) bool {
	for _, err := range errs {
		if err == nil {
			return true
		}
	}
	return false
}

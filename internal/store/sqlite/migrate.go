package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion is the goose version of the newest embedded migration: the
// schema a database has once Open returns.
const SchemaVersion = 30

// versionTable is goose's record of applied migrations.
const versionTable = "goose_db_version"

// migrate brings the database to SchemaVersion with goose. Processes that
// open a fresh file together must not both apply a migration, so the whole
// run is one IMMEDIATE transaction (immediateLock): SQLite's write lock,
// which every writer of every process takes, serialises them, and the
// process that waited re-reads the versions under the lock and finds
// nothing left to do. A run that fails leaves no trace.
func migrate(ctx context.Context, db *sql.DB) error {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return err
	}
	return applyMigrations(ctx, db, sub, SchemaVersion)
}

// applyMigrations applies the goose migrations of fsys, whose newest is
// version want.
func applyMigrations(ctx context.Context, db *sql.DB, fsys fs.FS, want int64) error {
	if err := prepareVersionTable(ctx, db); err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys,
		goose.WithSessionLocker(immediateLock{want: want}),
		// Without this, goose wraps each migration and its version row in
		// a transaction of its own, which cannot nest inside the lock's.
		goose.WithIsolateDDL(true),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var v int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > want {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade caduceus", v, want)
	}
	if v < want {
		return fmt.Errorf("database schema version %d after migrating, want %d", v, want)
	}
	return nil
}

// immediateLock is goose's session lock on SQLite: it opens an IMMEDIATE
// transaction on the connection goose migrates with, and ends it when goose
// is done. goose runs each migration and records it on that connection
// without a transaction of its own (WithIsolateDDL), so everything it does
// is inside this one.
type immediateLock struct {
	want int64 // the version a complete run reaches
}

func (immediateLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("migrations: take the write lock: %w", err)
	}
	return nil
}

// SessionUnlock commits only a complete run. goose does not tell its lock
// whether it failed, but a run that failed part-way has not recorded the
// newest version, so the version table says it.
func (l immediateLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var v int64
	err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable).Scan(&v)
	if err == nil && v >= l.want {
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			return fmt.Errorf("migrations: commit: %w", err)
		}
		return nil
	}
	// Some errors (a full disk, an I/O error) end the transaction by
	// themselves; ROLLBACK then has nothing to do and says so.
	if _, rerr := conn.ExecContext(ctx, `ROLLBACK`); rerr != nil && err == nil {
		return fmt.Errorf("migrations: roll back: %w", rerr)
	}
	return err
}

// prepareVersionTable creates goose's version table, in one IMMEDIATE
// transaction that looks under the write lock, so processes starting
// together do not both create it. goose would create it on its own, but
// outside its lock and in two steps. A database made by the migrator
// before goose (a schema_migrations table of applied versions, numbered as
// goose numbers the same files) has its versions moved over.
func prepareVersionTable(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // IMMEDIATE: the writer pool's _txlock
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer tx.Rollback()
	var legacy, exists int
	if err := tx.QueryRowContext(ctx, `SELECT
		COUNT(*) FILTER (WHERE name = 'schema_migrations'), COUNT(*) FILTER (WHERE name = ?)
		FROM sqlite_master WHERE type = 'table'`, versionTable).Scan(&legacy, &exists); err != nil {
		return fmt.Errorf("migrations: look for the version table: %w", err)
	}
	if exists > 0 {
		return nil
	}
	versions := []int64{0} // goose starts every version table with version 0
	if legacy > 0 {
		old, err := legacyVersions(ctx, tx)
		if err != nil {
			return err
		}
		versions = append(versions, old...)
		if _, err := tx.ExecContext(ctx, `DROP TABLE schema_migrations`); err != nil {
			return fmt.Errorf("migrations: drop schema_migrations: %w", err)
		}
	}
	st, err := database.NewStore(database.DialectSQLite3, versionTable)
	if err != nil {
		return err
	}
	if err := st.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("migrations: create %s: %w", versionTable, err)
	}
	for _, v := range versions {
		if err := st.Insert(ctx, tx, database.InsertRequest{Version: v}); err != nil {
			return fmt.Errorf("migrations: record version %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: create %s: %w", versionTable, err)
	}
	return nil
}

func legacyVersions(ctx context.Context, tx *sql.Tx) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	return out, nil
}

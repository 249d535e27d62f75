package app

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/wake"
)

// shared reports whether the store is a database that processes on other
// hosts may share (PostgreSQL): liveness is then judged by leases alone.
func shared(cfg config.Config) bool { return cfg.Database != "" }

// OpenStore opens the store of a data dir or a PostgreSQL URL (database,
// when set) for a command that works on it without serving (`caduceus
// user`).
func OpenStore(ctx context.Context, dataDir, database string) (store.Store, error) {
	st, _, err := openStore(ctx, config.Config{DataDir: dataDir, Database: database})
	return st, err
}

// openStore opens the store cfg names, PostgreSQL at cfg.Database or else
// the SQLite file in the data dir, and returns its schema version.
func openStore(ctx context.Context, cfg config.Config) (store.Store, int, error) {
	if shared(cfg) {
		st, err := postgres.Open(ctx, cfg.Database)
		return st, postgres.SchemaVersion, err
	}
	st, err := sqlite.Open(ctx, DatabasePath(cfg.DataDir))
	return st, sqlite.SchemaVersion, err
}

// openWaker joins the wake-ups of the processes sharing the store.
func openWaker(ctx context.Context, cfg config.Config, log *slog.Logger) (waker, error) {
	if shared(cfg) {
		return postgres.NewNotifier(ctx, cfg.Database, log)
	}
	return wake.Open(filepath.Join(cfg.DataDir, "wake"), log)
}

package e2etest

import (
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

// EachStore runs fn as the sub-tests "sqlite" and "postgres". dbArgs are
// the arguments that put the processes the test starts on that store, to
// pass as extra arguments to StartServe, StartWeb and StartRunner: none
// for SQLite (the file in the data dir), `--database <url>` of a fresh
// database of pg for PostgreSQL (which skips without PostgreSQL, see
// pgtest). Processes a test restarts get the same arguments, hence the
// same database.
func EachStore(t *testing.T, pg *pgtest.Cluster, fn func(t *testing.T, dbArgs []string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, nil) })
	t.Run("postgres", func(t *testing.T) { fn(t, []string{"--database", pg.Database(t)}) })
}

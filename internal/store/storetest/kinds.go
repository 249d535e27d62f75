package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// Kind is one store implementation, for tests that run on each.
type Kind struct {
	Name string
	Open Open
}

// SQLite opens a store on a fresh file in the test's temporary directory;
// another store on the file is what a second process opens.
func SQLite(t testing.TB) (store.Store, func() store.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "caduceus.db")
	open := func() store.Store {
		t.Helper()
		db, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	return open(), open
}

// Postgres opens stores on a fresh database of pg for each test; another
// store is another connection pool, as a second process has. Tests skip
// without PostgreSQL (see pgtest).
func Postgres(pg *pgtest.Cluster) Open {
	return func(t testing.TB) (store.Store, func() store.Store) {
		t.Helper()
		url := pg.Database(t)
		open := func() store.Store {
			t.Helper()
			db, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		return open(), open
	}
}

// Kinds is every store: SQLite, and PostgreSQL on pg.
func Kinds(pg *pgtest.Cluster) []Kind {
	return []Kind{{"sqlite", SQLite}, {"postgres", Postgres(pg)}}
}

// Each runs fn as a subtest per store kind ("sqlite", "postgres").
func Each(t *testing.T, pg *pgtest.Cluster, fn func(t *testing.T, open Open)) {
	t.Helper()
	for _, k := range Kinds(pg) {
		t.Run(k.Name, func(t *testing.T) { fn(t, k.Open) })
	}
}

package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) {
	if spec := os.Getenv(appenderEnv); spec != "" {
		os.Exit(runAppender(spec))
	}
	os.Exit(pg.Main(m))
}

// openURL opens a store on url, closed when t ends.
func openURL(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the store conformance suite, each test on a
// database of its own; another handle is another pool, as another process
// has.
func TestConformance(t *testing.T) { storetest.Run(t, storetest.Postgres(pg)) }

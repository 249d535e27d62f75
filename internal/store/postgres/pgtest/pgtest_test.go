package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// Each test gets a database of its own: what one writes the other does not
// see.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	var urls []string
	for range 2 {
		urls = append(urls, pg.Database(t))
	}
	for i, u := range urls {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if i == 0 {
			if _, err := conn.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE tablename = 'x'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("second database sees %d tables named x (%v)", n, err)
		}
	}
}

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

// A database is handed out again once its test ended, empty, even if that
// test left a connection open.
func TestDatabaseReusedEmpty(t *testing.T) {
	ctx := context.Background()
	var first string
	t.Run("writes", func(t *testing.T) {
		first = pg.Database(t)
		conn, err := pgx.Connect(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		// left open on purpose
		if _, err := conn.Exec(ctx, `CREATE TABLE x (v int); INSERT INTO x VALUES (1)`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reads", func(t *testing.T) {
		url := pg.Database(t)
		if url != first {
			t.Fatalf("got %s, want the freed %s", url, first)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d tables in a reused database (%v)", n, err)
		}
	})
}

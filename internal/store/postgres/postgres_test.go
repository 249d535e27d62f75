package postgres_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// rawConn is a plain connection to url, closed when t ends.
func rawConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func versions(t *testing.T, conn *pgx.Conn) []int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT version_id FROM goose_db_version WHERE is_applied ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// Processes started together on an empty database apply each migration
// exactly once, and all open.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := pg.Database(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			db, err := postgres.Open(context.Background(), url)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("open: %v", err)
		}
	}
	// Migrations start at 3 here (see migrations/00003_schema.sql); each
	// is recorded once, in order.
	// The numbers may have gaps while features are built in parallel.
	want := []int64{0}
	ents, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if v, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64); err == nil {
			want = append(want, v)
		}
	}
	if got := versions(t, rawConn(t, url)); !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	// Opening again changes nothing.
	openURL(t, url)
	if got := versions(t, rawConn(t, url)); !slices.Equal(got, want) {
		t.Fatalf("versions after reopening: %v, want %v", got, want)
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	url := pg.Database(t)
	openURL(t, url).Close()
	if _, err := rawConn(t, url).Exec(context.Background(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`,
		postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if db, err := postgres.Open(context.Background(), url); err == nil {
		db.Close()
		t.Fatal("open of a database with a newer schema succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("unexpected error: %v", err)
	}
}

// A URL's password never shows in an error, whatever went wrong.
func TestOpenErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://caduceus:hunter2secret@127.0.0.1:notaport/db",
		"postgres://caduceus:hunter2secret@/db?host=/nonexistent-dir&connect_timeout=2",
		"postgres://caduceus:hunter2secret@127.0.0.1:1/db?connect_timeout=2",
	} {
		db, err := postgres.Open(ctx, url)
		if err == nil {
			db.Close()
			t.Fatalf("%s: opened", url)
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
}

// The errors callers meet when the database fails classify as they do on
// SQLite: a lost connection or a server shutting down is transient (the
// run is retried), a constraint is not.
func TestTransientErrors(t *testing.T) {
	ctx := context.Background()
	url := pg.Database(t)
	db := openURL(t, url)
	err := db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws", CreatedAt: time.UnixMilli(1), UpdatedAt: time.UnixMilli(1)})
	})
	if err != nil {
		t.Fatal(err)
	}
	dup := db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws"})
	})
	if dup == nil || store.Transient(dup) {
		t.Fatalf("duplicate key: %v (transient %v), want a permanent error", dup, store.Transient(dup))
	}

	// Every connection of the store is cut while a write is under way.
	admin := rawConn(t, url)
	cut := db.Write(ctx, func(tx store.Tx) error {
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			return err
		}
		_, err := tx.GetSession(ctx, "s")
		return err
	})
	if cut == nil || !store.Transient(cut) {
		t.Fatalf("write on a terminated connection: %v (transient %v), want a transient error", cut, store.Transient(cut))
	}
	// The pool replaces what was cut: the next write works.
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.TouchSession(ctx, "s", time.UnixMilli(2)) }); err != nil {
		t.Fatalf("write after the cut: %v", err)
	}
}

// The append lock orders every write transaction: a second write, from
// another pool (process), waits until the first commits, and its events
// come after.
func TestAppendLockOrdersWrites(t *testing.T) {
	ctx := context.Background()
	url := pg.Database(t)
	db1, db2 := openURL(t, url), openURL(t, url)
	err := db1.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws"}); err != nil {
			return err
		}
		return tx.InsertRun(ctx, store.Run{ID: "r", SessionID: "s", Status: run.Running, Input: "x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	first := make(chan []event.Event, 1)
	go func() {
		var out []event.Event
		_ = db1.Write(ctx, func(tx store.Tx) error {
			var err error
			out, err = tx.AppendEvents(ctx, "", event.Draft{SessionID: "s", RunID: "r", Type: event.MessageDelta})
			close(inside)
			<-release
			return err
		})
		first <- out
	}()
	<-inside
	second := make(chan []event.Event, 1)
	go func() {
		var out []event.Event
		_ = db2.Write(ctx, func(tx store.Tx) error {
			var err error
			out, err = tx.AppendEvents(ctx, "", event.Draft{SessionID: "s", RunID: "r", Type: event.MessageDelta})
			return err
		})
		second <- out
	}()
	select {
	case <-second:
		t.Fatal("a second write committed while the first held the append lock")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	a, b := <-first, <-second
	if len(a) != 1 || len(b) != 1 || b[0].ID <= a[0].ID || b[0].Seq != 2 {
		t.Fatalf("first %+v, second %+v: want the second after the first", a, b)
	}
}

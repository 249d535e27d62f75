package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"

	_ "modernc.org/sqlite" // the driver the server uses, to lock its file from another process
)

// Environment of the test binary re-executed as a helper process that
// holds a database's write lock (startLocker).
const (
	lockDBEnv  = "CADUCEUS_TEST_LOCK_DB"
	lockForEnv = "CADUCEUS_TEST_LOCK_FOR"
)

// pg is the PostgreSQL server of the tests that run on both stores
// (e2etest.EachStore; h16-budgets); started on first use.
var pg = pgtest.New()

func TestMain(m *testing.M) {
	if path := os.Getenv(lockDBEnv); path != "" {
		os.Exit(holdLock(path, os.Getenv(lockForEnv)))
	}
	os.Exit(pg.Main(m))
}

// holdLock takes the write lock of the SQLite file at path (BEGIN
// IMMEDIATE), says "locked" on stdout, holds it for the duration in
// lockFor, commits and says "released".
func holdLock(path, lockFor string) int {
	d, err := time.ParseDuration(lockFor)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock helper:", err)
		return 2
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock helper:", err)
		return 1
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock helper:", err)
		return 1
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		fmt.Fprintln(os.Stderr, "lock helper: BEGIN IMMEDIATE:", err)
		return 1
	}
	fmt.Println("locked")
	time.Sleep(d)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		fmt.Fprintln(os.Stderr, "lock helper: COMMIT:", err)
		return 1
	}
	fmt.Println("released")
	return 0
}

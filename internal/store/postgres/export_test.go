package postgres

import (
	"context"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// OpenWithoutAppendLock opens a store whose write transactions do not take
// the append lock: the design the journal must not have, for the test that
// shows what it would cost.
func OpenWithoutAppendLock(ctx context.Context, url string) (*DB, error) {
	d, err := Open(ctx, url)
	if err == nil {
		d.begin, d.lock = []string{"BEGIN"}, false
	}
	return d, err
}

// ExplainSearch is PostgreSQL's plan of Search(q) for the word "needle",
// sequential scans discouraged: on a test's small tables they are the
// cheap choice, and the plan's shape (where it can start, what it joins
// how) is what a test checks.
func ExplainSearch(ctx context.Context, d *DB, q store.SearchQuery) (string, error) {
	query, args := searchSQL(q, "'needle':*", store.SearchLimit+1, 0)
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		return "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// Exec runs SQL on the store's pool, for tests that shape the data in bulk.
func Exec(ctx context.Context, d *DB, sql string) error {
	_, err := d.pool.Exec(ctx, sql)
	return err
}

// Package sqlrow is what the SQL stores (internal/store/sqlite,
// internal/store/postgres) share about a table's rows: the columns they
// read and how one row becomes a store value. Both keep times as Unix
// milliseconds (0: none) and lists as JSON text, so one scanner per table
// serves both, and a column added to a table is read the same way by
// both stores or by neither.
package sqlrow

import (
	"encoding/json"
	"time"
)

// Scanner is one row to read: *sql.Row and *sql.Rows, pgx.Row and
// pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// fromMS is a stored time: Unix milliseconds, 0 for none.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// StringList reads a JSON array of strings; an empty one is nil, so a
// value reads back as it was written whichever form the caller used.
func StringList(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Rows is a result set: *sql.Rows, pgx.Rows. Closing it is the caller's.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect reads every row of rows with scan.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

package postgres

import (
	"context"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// AppendSQL is the statement that appends drafts of several streams (a
// session's or a project's lifecycle events among them).
var AppendSQL = appendSQL

// AppendSQLSessionsOnly is appendSQL before migration 15, cut out of it:
// seqs of a draft of no run come from sessions only. The baseline of
// BenchmarkAppendSessionEvent.
var AppendSQLSessionsOnly = func() string {
	s := appendSQL
	a, b := strings.Index(s, "), p AS ("), strings.Index(s, "), n AS (")
	if a < 0 || b < a {
		return ""
	}
	s = s[:a] + s[b:]
	s = strings.ReplaceAll(s, "coalesce(r.base, s.base, p.base)", "coalesce(r.base, s.base)")
	return strings.Replace(s, "\t\tLEFT JOIN p ON d.run_id = '' AND p.id = d.session_id\n", "", 1)
}()

// ExecAppend appends d with sql (AppendSQL or its baseline) in a
// transaction of its own, returning the rows appended.
func (db *DB) ExecAppend(ctx context.Context, sql string, d event.Draft) (int64, error) {
	rows, err := prepareDrafts("", []event.Draft{d})
	if err != nil {
		return 0, err
	}
	_, args := appendQuery("", rows)
	tag, err := db.pool.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// A filtered search starts from the full-text match and reads each
// match's session and run by primary key: the plan scans only the FTS5
// table, never sessions, runs or events, so a filter that many sessions
// pass costs what the match costs.
func TestSearchFiltersReadTheMatchedRowsOnly(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	yes, no := true, false
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, q := range []store.SearchQuery{
		{},
		{ProjectID: "prj_1"},
		{Archived: &yes},
		{Archived: &no},
		{Model: "m"},
		{Model: "m", ModelIsDefault: true},
		{ProjectID: "prj_1", Archived: &no, Model: "m", From: day, To: day.Add(24 * time.Hour)},
	} {
		q.Text = "needle"
		query, args := searchSQL(q)
		rows, err := db.w.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, append(args, 51, 0)...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		if !strings.HasPrefix(all, "SCAN search_fts VIRTUAL TABLE") {
			t.Errorf("%+v: plan %q, want the full-text match first", q, all)
		}
		for _, p := range plan[1:] {
			if strings.HasPrefix(strings.TrimSpace(p), "SCAN") {
				t.Errorf("%+v: plan %q scans %q", q, all, p)
			}
		}
	}
}

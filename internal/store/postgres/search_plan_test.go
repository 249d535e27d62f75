package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// A filtered search on a store of many sessions starts from the full-text
// match and reads each match's session and run by primary key: the plan
// has no scan of sessions, runs or events and no hash join, so a filter
// that many sessions pass costs what the match costs.
func TestSearchFiltersReadTheMatchedRowsOnly(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, pg.Database(t))
	// 20,000 sessions (half in a project, a third archived, two models),
	// each with one run, one event and its search row; one row says needle.
	// Written in bulk: the plan depends on the statistics, not on how the
	// rows came.
	for _, sql := range []string{
		`INSERT INTO projects (id, name, name_key, created_at_ms, updated_at_ms) VALUES ('prj_1', 'One', 'one', 1, 1)`,
		`INSERT INTO sessions (id, workspace, model, project_id, archived_at_ms, created_at_ms, updated_at_ms)
		 SELECT 'ses_' || i, '/ws', CASE WHEN i % 2 = 0 THEN 'm-even' ELSE 'm-odd' END,
		        CASE WHEN i % 2 = 0 THEN 'prj_1' END, CASE WHEN i % 3 = 1 THEN i END, i, i
		 FROM generate_series(1, 20000) i`,
		`INSERT INTO runs (id, session_id, status, input, model, created_at_ms)
		 SELECT 'run_' || i, 'ses_' || i, 'completed', 'x', '', i FROM generate_series(1, 20000) i`,
		`INSERT INTO events (run_id, session_id, seq, type, ts_ms, payload)
		 SELECT 'run_' || i, 'ses_' || i, 1, 'run.started', i, '{}' FROM generate_series(1, 20000) i`,
		`INSERT INTO search_docs (event_id, session_id, kind, item_id, ts_ms, body)
		 SELECT e.id, e.session_id, 'message.done', 'a', e.ts_ms,
		        CASE WHEN e.ts_ms = 10002 THEN 'the needle answer' ELSE 'word' || (e.ts_ms % 5000) || ' other words here' END
		 FROM events e`,
		`ANALYZE`,
	} {
		if err := postgres.Exec(ctx, db, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	yes, no := true, false
	day := time.Unix(0, 0)
	for _, q := range []store.SearchQuery{
		{},
		{ProjectID: "prj_1"},
		{Archived: &yes},
		{Archived: &no},
		{Model: "m-even"},
		{Model: "m-even", ModelIsDefault: true},
		{ProjectID: "prj_1", Archived: &no, Model: "m-even", From: day, To: day.Add(time.Hour)},
	} {
		plan, err := postgres.ExplainSearch(ctx, db, q)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "search_docs_tsv") {
			t.Errorf("%+v: plan\n%s\nwant the full-text index first", q, plan)
		}
		for _, table := range []string{"search_docs", "sessions", "runs", "events"} {
			if strings.Contains(plan, "Seq Scan on "+table) || strings.Contains(plan, "Hash Join") {
				t.Errorf("%+v: plan\n%s\nwant no scan of %s and no hash join", q, plan, table)
			}
		}
		if q.Filtered() && !strings.Contains(plan, "sessions_pkey") {
			t.Errorf("%+v: plan\n%s\nwant sessions read by primary key", q, plan)
		}
	}
	// And the rows: the one match passes the filters its session passes.
	hits, _, err := db.Search(ctx, store.SearchQuery{Text: "needle", ProjectID: "prj_1", Archived: &no, Model: "m-even"})
	if err != nil || len(hits) != 1 || hits[0].SessionID != "ses_10002" {
		t.Fatalf("filtered search = %+v, %v; want the one answer of ses_10002", hits, err)
	}
}

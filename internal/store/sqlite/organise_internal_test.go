package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// The session list's pages read an index in the list's order: the plan
// names the index and sorts nothing (no "USE TEMP B-TREE FOR ORDER BY"),
// so the first page costs the same however many sessions there are.
func TestListSessionsUsesItsIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cursor := encodeCursor(store.Session{ID: "ses_x", Pinned: true})
	tests := []struct {
		name  string
		page  store.SessionPage
		index string
	}{
		{"default", store.SessionPage{}, "sessions_list"},
		{"default, next page", store.SessionPage{Cursor: cursor}, "sessions_list"},
		{"archived", store.SessionPage{Archived: store.ArchivedOnly}, "sessions_list_archived"},
		{"archived, next page", store.SessionPage{Archived: store.ArchivedOnly, Cursor: cursor}, "sessions_list_archived"},
		{"project", store.SessionPage{ProjectID: "prj_1"}, "sessions_by_project"},
		{"project, next page", store.SessionPage{ProjectID: "prj_1", Cursor: cursor}, "sessions_by_project"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, args, err := listSessionsQuery(tc.page, 50)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.w.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			all := strings.Join(plan, "; ")
			if !strings.Contains(all, "INDEX "+tc.index+" ") && !strings.HasSuffix(all, "INDEX "+tc.index) || strings.Contains(all, "TEMP B-TREE") {
				t.Fatalf("plan %q, want a read of %s and no sort", all, tc.index)
			}
		})
	}
}

package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkListSessionsFirstPage reads the sidebar's first page (50) at
// 1,000, 10,000 and 100,000 sessions, of which 1 in 100 is archived, 1 in
// 500 pinned and 1 in 10 in one project: the default list, the archived
// list and one project's list. Each must read the head of its index, so
// ns/op should not grow with the number of sessions (the 1,000 row is the
// baseline of the same run).
func BenchmarkListSessionsFirstPage(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db, _ := openDB(b)
		storetest.SeedSessions(b, db, n)
		for _, c := range []struct {
			name string
			page store.SessionPage
		}{
			{"default", store.SessionPage{Limit: 50}},
			{"archived", store.SessionPage{Limit: 50, Archived: store.ArchivedOnly}},
			{"project", store.SessionPage{Limit: 50, ProjectID: "p1"}},
		} {
			b.Run(fmt.Sprintf("sessions=%d/%s", n, c.name), func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					page, _, err := db.ListSessions(ctx, c.page)
					if err != nil || len(page) == 0 {
						b.Fatalf("%d sessions, %v", len(page), err)
					}
				}
			})
		}
	}
}

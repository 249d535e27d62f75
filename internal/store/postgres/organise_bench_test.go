package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkListSessionsFirstPage is the SQLite store's benchmark of the
// same name on PostgreSQL: the first page of the default, archived and
// one project's list at 1,000 (the baseline), 10,000 and 100,000 sessions.
func BenchmarkListSessionsFirstPage(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db := openURL(b, pg.Database(b))
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

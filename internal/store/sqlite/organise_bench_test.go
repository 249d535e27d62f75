package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
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
		seedSessions(b, db, n)
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

func seedSessions(b *testing.B, db store.Store, n int) {
	b.Helper()
	ctx := context.Background()
	if err := db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertProject(ctx, store.Project{ID: "p1", Name: "P", CreatedAt: time.Unix(0, 0), UpdatedAt: time.Unix(0, 0)})
	}); err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	const batch = 5_000
	for start := 0; start < n; start += batch {
		if err := db.Write(ctx, func(tx store.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				at := t0.Add(time.Duration(i) * time.Second)
				s := store.Session{ID: fmt.Sprintf("ses_%08d", i), Title: fmt.Sprintf("session %d", i), Workspace: "/ws",
					CreatedAt: at, UpdatedAt: at, Pinned: i%500 == 7}
				if i%100 == 3 {
					s.ArchivedAt = at
				}
				if i%10 == 1 {
					s.ProjectID = "p1"
				}
				if err := tx.InsertSession(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

package storetest

// Organising sessions (issue 15): pins, archive, projects.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testSessionOrganiseRoundTrip(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	p := store.Project{ID: "p1", Name: "Alpha", Workspace: "/ws", Model: "m", Instructions: "be brief", CreatedAt: at(1), UpdatedAt: at(1)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, p) })
	s := store.Session{ID: "s1", Workspace: "/ws", CreatedAt: at(1), UpdatedAt: at(1), Pinned: true, ArchivedAt: at(5), ProjectID: "p1"}
	write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, s) })
	if got, err := db.GetSession(ctx, "s1"); err != nil || got != s {
		t.Fatalf("get = %+v, %v; want %+v", got, err, s)
	}
	// Cleared by UpdateSession: the zero values are stored as NULL / false.
	upd := s
	upd.Pinned, upd.ArchivedAt, upd.ProjectID, upd.UpdatedAt = false, time.Time{}, "", at(2)
	write(t, db, func(tx store.Tx) error { return tx.UpdateSession(ctx, upd) })
	if got, _ := db.GetSession(ctx, "s1"); got != upd {
		t.Fatalf("after clearing = %+v, want %+v", got, upd)
	}
	// A session in a project that is deleted stays, in no project.
	upd.ProjectID = "p1"
	write(t, db, func(tx store.Tx) error { return tx.UpdateSession(ctx, upd) })
	write(t, db, func(tx store.Tx) error { return tx.DeleteProject(ctx, "p1") })
	if got, err := db.GetSession(ctx, "s1"); err != nil || got.ProjectID != "" {
		t.Fatalf("after project delete = %+v, %v", got, err)
	}
	if _, err := db.GetProject(ctx, "p1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted project: %v", err)
	}
}

func testProjectsCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	a := store.Project{ID: "p1", Name: "Zeta", Workspace: "/a", Model: "m1", Instructions: "one", CreatedAt: at(1), UpdatedAt: at(1)}
	b := store.Project{ID: "p2", Name: "alpha", CreatedAt: at(2), UpdatedAt: at(2)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, a) })
	write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, b) })
	if got, err := db.GetProject(ctx, "p1"); err != nil || got != a {
		t.Fatalf("get = %+v, %v; want %+v", got, err, a)
	}
	list, err := db.ListProjects(ctx)
	if err != nil || len(list) != 2 || list[0] != b || list[1] != a {
		t.Fatalf("list = %+v, %v; want alpha then Zeta", list, err)
	}
	conflicts := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"insert same name other case", func(tx store.Tx) error {
			return tx.InsertProject(ctx, store.Project{ID: "p3", Name: "ZETA", CreatedAt: at(3), UpdatedAt: at(3)})
		}},
		{"rename onto another's name", func(tx store.Tx) error {
			c := a
			c.Name = "ALPHA"
			return tx.UpdateProject(ctx, c)
		}},
	}
	for _, tc := range conflicts {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.Write(ctx, tc.fn); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("err = %v, want ErrConflict", err)
			}
		})
	}
	// Renaming a project to its own name in another case is no conflict.
	upd := a
	upd.Name, upd.Workspace, upd.Model, upd.Instructions, upd.UpdatedAt = "ZETA", "/b", "m2", "two", at(9)
	write(t, db, func(tx store.Tx) error { return tx.UpdateProject(ctx, upd) })
	if got, _ := db.GetProject(ctx, "p1"); got != upd {
		t.Fatalf("after update = %+v, want %+v", got, upd)
	}
	missing := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"update", func(tx store.Tx) error { return tx.UpdateProject(ctx, store.Project{ID: "nope", Name: "n"}) }},
		{"delete", func(tx store.Tx) error { return tx.DeleteProject(ctx, "nope") }},
		{"get in tx", func(tx store.Tx) error { _, err := tx.GetProject(ctx, "nope"); return err }},
	}
	for _, tc := range missing {
		t.Run("missing/"+tc.name, func(t *testing.T) {
			if err := db.Write(ctx, tc.fn); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// The list: pinned first, then newest activity; archived sessions only
// when asked; a project filter; keyset pages across the pinned boundary.
func testListSessionsOrganised(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	write(t, db, func(tx store.Tx) error {
		return tx.InsertProject(ctx, store.Project{ID: "p1", Name: "P", CreatedAt: at(0), UpdatedAt: at(0)})
	})
	type row struct {
		id       string
		updated  int
		pinned   bool
		archived bool
		project  string
	}
	rows := []row{
		{"a", 1000, false, false, ""},
		{"b", 2000, true, false, "p1"},
		{"c", 3000, false, true, ""},
		{"d", 4000, false, false, "p1"},
		{"e", 5000, true, true, "p1"},
		{"f", 6000, false, false, ""},
		{"g", 500, true, false, ""},
		{"h", 6000, false, false, ""},
	}
	for _, r := range rows {
		s := store.Session{ID: r.id, Workspace: "/ws", CreatedAt: at(r.updated), UpdatedAt: at(r.updated), Pinned: r.pinned, ProjectID: r.project}
		if r.archived {
			s.ArchivedAt = at(7000)
		}
		write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, s) })
	}
	tests := []struct {
		name string
		page store.SessionPage
		want []string
	}{
		{"default", store.SessionPage{}, []string{"b", "g", "h", "f", "d", "a"}},
		{"archived only", store.SessionPage{Archived: store.ArchivedOnly}, []string{"e", "c"}},
		{"all", store.SessionPage{Archived: store.ArchivedAll}, []string{"e", "b", "g", "h", "f", "d", "c", "a"}},
		{"project", store.SessionPage{ProjectID: "p1"}, []string{"b", "d"}},
		{"project all", store.SessionPage{ProjectID: "p1", Archived: store.ArchivedAll}, []string{"e", "b", "d"}},
		{"unknown project", store.SessionPage{ProjectID: "nope"}, nil},
	}
	for _, tc := range tests {
		for _, limit := range []int{1, 2, 3, 100} {
			t.Run(tc.name+"/limit="+strconv.Itoa(limit), func(t *testing.T) {
				var got []store.Session
				p := tc.page
				p.Limit = limit
				for range 20 {
					page, next, err := db.ListSessions(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, page...)
					if next == "" {
						break
					}
					p.Cursor = next
				}
				if !slices.Equal(sessionIDs(got), tc.want) {
					t.Fatalf("got %v, want %v", sessionIDs(got), tc.want)
				}
			})
		}
	}
}

// SeedSessions writes n sessions for the session list's benchmarks: one
// a second, 1 in 100 archived, 1 in 500 pinned and 1 in 10 in project
// "p1" (which it makes).
func SeedSessions(b testing.TB, db store.Store, n int) {
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

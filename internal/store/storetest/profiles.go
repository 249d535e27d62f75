package storetest

// Profiles (issue 16, h16-profiles): several agents.

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testProfilesCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	a := store.Profile{ID: "pf1", Name: "Zeta", Color: "#112233", Instructions: "be terse", Model: "openai/gpt-x",
		Fallbacks: []string{"local/llama", "demo"}, Tools: []string{"read_file", "grep"}, ApprovalMode: "ask",
		Workspace: "/ws", CreatedAt: at(1), UpdatedAt: at(1)}
	b := store.Profile{ID: "pf2", Name: "alpha", Color: "#abcdef", CreatedAt: at(2), UpdatedAt: at(2)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, a) })
	write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, b) })
	if got, err := db.GetProfile(ctx, "pf1"); err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("get = %+v, %v; want %+v", got, err, a)
	}
	list, err := db.ListProfiles(ctx)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], b) || !reflect.DeepEqual(list[1], a) {
		t.Fatalf("list = %+v, %v; want alpha then Zeta", list, err)
	}

	// A taken name, regardless of case, changes nothing.
	dup := store.Profile{ID: "pf3", Name: "ALPHA", CreatedAt: at(3), UpdatedAt: at(3)}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertProfile(ctx, dup) }); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("insert taken name: %v, want ErrConflict", err)
	}
	ren := a
	ren.Name = "Alpha"
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateProfile(ctx, ren) }); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("rename to taken name: %v, want ErrConflict", err)
	}

	// Update writes every field; lists are cleared to nil.
	upd := a
	upd.Name, upd.Color, upd.Instructions, upd.Model = "zeta", "#000000", "be kind", "m2"
	upd.Fallbacks, upd.Tools, upd.ApprovalMode, upd.Workspace, upd.UpdatedAt = nil, nil, "yolo", "", at(9)
	write(t, db, func(tx store.Tx) error { return tx.UpdateProfile(ctx, upd) })
	if got, err := db.GetProfile(ctx, "pf1"); err != nil || !reflect.DeepEqual(got, upd) {
		t.Fatalf("after update = %+v, %v; want %+v", got, err, upd)
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateProfile(ctx, store.Profile{ID: "nope", Name: "x"}) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update unknown: %v, want ErrNotFound", err)
	}

	// Deleting marks it: it leaves the list, stays readable, frees its
	// name, and cannot be deleted or updated again.
	write(t, db, func(tx store.Tx) error { return tx.DeleteProfile(ctx, "pf2", at(10)) })
	got, err := db.GetProfile(ctx, "pf2")
	if err != nil || got.DeletedAt != at(10) || got.Live() || got.Name != "alpha" {
		t.Fatalf("deleted profile = %+v, %v", got, err)
	}
	if list, _ := db.ListProfiles(ctx); len(list) != 1 || list[0].ID != "pf1" {
		t.Fatalf("list after delete = %+v", list)
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.DeleteProfile(ctx, "pf2", at(11)) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v, want ErrNotFound", err)
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateProfile(ctx, b) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update deleted: %v, want ErrNotFound", err)
	}
	write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, dup) })
	if _, err := db.GetProfile(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
}

func testProfilesDefault(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.DefaultProfile(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("default of none: %v, want ErrNotFound", err)
	}
	a := store.Profile{ID: "pf1", Name: "A", Default: true, CreatedAt: at(1), UpdatedAt: at(1)}
	b := store.Profile{ID: "pf2", Name: "B", CreatedAt: at(2), UpdatedAt: at(2)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, a) })
	write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, b) })
	if got, err := db.DefaultProfile(ctx); err != nil || got.ID != "pf1" {
		t.Fatalf("default = %+v, %v; want pf1", got, err)
	}
	// Making another the default takes it from the first.
	b.Default = true
	write(t, db, func(tx store.Tx) error { return tx.UpdateProfile(ctx, b) })
	if got, err := db.DefaultProfile(ctx); err != nil || got.ID != "pf2" {
		t.Fatalf("default = %+v, %v; want pf2", got, err)
	}
	if got, _ := db.GetProfile(ctx, "pf1"); got.Default {
		t.Fatalf("pf1 still default: %+v", got)
	}
	// A deleted profile is the default no more.
	write(t, db, func(tx store.Tx) error { return tx.DeleteProfile(ctx, "pf2", at(3)) })
	if _, err := db.DefaultProfile(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("default after delete: %v, want ErrNotFound", err)
	}
}

// testProfileOfSessionsAndProjects: sessions and projects name a profile,
// and keep naming it when it is deleted.
func testProfileOfSessionsAndProjects(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	write(t, db, func(tx store.Tx) error {
		return tx.InsertProfile(ctx, store.Profile{ID: "pf1", Name: "A", CreatedAt: at(1), UpdatedAt: at(1)})
	})
	p := store.Project{ID: "p1", Name: "P", ProfileID: "pf1", CreatedAt: at(1), UpdatedAt: at(1)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, p) })
	s := store.Session{ID: "s1", Workspace: "/ws", ProjectID: "p1", ProfileID: "pf1", CreatedAt: at(1), UpdatedAt: at(1)}
	write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, s) })
	if got, err := db.GetSession(ctx, "s1"); err != nil || got != s {
		t.Fatalf("session = %+v, %v; want %+v", got, err, s)
	}
	if got, err := db.GetProject(ctx, "p1"); err != nil || got != p {
		t.Fatalf("project = %+v, %v; want %+v", got, err, p)
	}
	list, _, err := db.ListSessions(ctx, store.SessionPage{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ProfileID != "pf1" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteProfile(ctx, "pf1", at(2)) })
	if got, _ := db.GetSession(ctx, "s1"); got.ProfileID != "pf1" {
		t.Fatalf("session after profile delete = %+v", got)
	}
	s.ProfileID, s.UpdatedAt = "", at(3)
	write(t, db, func(tx store.Tx) error { return tx.UpdateSession(ctx, s) })
	if got, _ := db.GetSession(ctx, "s1"); got != s {
		t.Fatalf("session cleared = %+v, want %+v", got, s)
	}
	p.ProfileID, p.UpdatedAt = "pf9", at(3)
	write(t, db, func(tx store.Tx) error { return tx.UpdateProject(ctx, p) })
	if got, _ := db.GetProject(ctx, "p1"); got != p {
		t.Fatalf("project updated = %+v, want %+v", got, p)
	}
}

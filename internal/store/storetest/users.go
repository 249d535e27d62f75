package storetest

// Accounts and personal API tokens.

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func addUser(t testing.TB, db store.Store, u store.User) store.User {
	t.Helper()
	if u.Role == "" {
		u.Role = "viewer"
	}
	if u.PasswordHash == "" {
		u.PasswordHash = "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = t0
	}
	if u.UpdatedAt.IsZero() {
		u.UpdatedAt = u.CreatedAt
	}
	write(t, db, func(tx store.Tx) error { return tx.InsertUser(context.Background(), u) })
	return u
}

func userIDs(us []store.User) []string {
	var ids []string
	for _, u := range us {
		ids = append(ids, u.ID)
	}
	return ids
}

func testUsersCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	ann := addUser(t, db, store.User{ID: "u-ann", Name: "Ann", Role: "admin", CreatedAt: at(10)})
	addUser(t, db, store.User{ID: "u-bob", Name: "bob", Role: "operator", CreatedAt: at(5)})
	addUser(t, db, store.User{ID: "u-al", Name: "al", Role: "viewer", Disabled: true, CreatedAt: at(10)})

	got, err := db.GetUser(ctx, "u-ann")
	if err != nil || got != ann {
		t.Fatalf("GetUser = %+v, %v; want %+v", got, err, ann)
	}
	for _, name := range []string{"Ann", "ann", "ANN", "aNn"} {
		got, err := db.GetUserByName(ctx, name)
		if err != nil || got.ID != "u-ann" || got.Name != "Ann" {
			t.Errorf("GetUserByName(%q) = %+v, %v; want u-ann named Ann", name, got, err)
		}
	}
	for _, name := range []string{"an", "Ann ", "", "u-ann"} {
		if _, err := db.GetUserByName(ctx, name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetUserByName(%q): %v, want not found", name, err)
		}
	}
	if _, err := db.GetUser(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetUser(nope): %v, want not found", err)
	}
	list, err := db.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u-bob", "u-al", "u-ann"}; !slices.Equal(userIDs(list), want) {
		t.Fatalf("ListUsers: %v, want %v (oldest first, then by id)", userIDs(list), want)
	}
	if !list[1].Disabled || list[0].Disabled {
		t.Fatalf("disabled flags: %+v", list)
	}

	// Update: role, hash, disabled, rename (also to another case of itself).
	upd := ann
	upd.Name, upd.Role, upd.PasswordHash, upd.Disabled, upd.UpdatedAt = "ANN", "viewer", "$argon2id$new", true, at(99)
	write(t, db, func(tx store.Tx) error { return tx.UpdateUser(ctx, upd) })
	if got, err := db.GetUserByName(ctx, "ann"); err != nil || got != upd {
		t.Fatalf("after update: %+v, %v; want %+v", got, err, upd)
	}
	if err := db.Write(ctx, func(tx store.Tx) error {
		return tx.UpdateUser(ctx, store.User{ID: "nope", Name: "zed", Role: "viewer", PasswordHash: "x", UpdatedAt: at(1)})
	}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of an unknown user: %v, want not found", err)
	}
}

func testUserNamesUnique(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addUser(t, db, store.User{ID: "u-1", Name: "Émile"})
	bob := addUser(t, db, store.User{ID: "u-2", Name: "bob", CreatedAt: at(1)})
	for _, name := range []string{"Émile", "émile", "ÉMILE"} {
		err := db.Write(ctx, func(tx store.Tx) error {
			if err := tx.InsertUser(ctx, store.User{ID: "u-x", Name: name, Role: "viewer", PasswordHash: "h", CreatedAt: t0, UpdatedAt: t0}); !errors.Is(err, store.ErrConflict) {
				t.Errorf("InsertUser(%q): %v, want conflict", name, err)
			}
			// The transaction carries on after the conflict.
			_, err := tx.GetUser(ctx, "u-1")
			return err
		})
		if err != nil {
			t.Errorf("transaction after a conflict on %q: %v", name, err)
		}
		renamed := bob
		renamed.Name = name
		if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateUser(ctx, renamed) }); !errors.Is(err, store.ErrConflict) {
			t.Errorf("rename bob to %q: %v, want conflict", name, err)
		}
	}
	list, err := db.ListUsers(ctx)
	if err != nil || !slices.Equal(userIDs(list), []string{"u-1", "u-2"}) || list[1].Name != "bob" {
		t.Fatalf("users after refused writes: %+v, %v", list, err)
	}
}

func testTokens(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addUser(t, db, store.User{ID: "u-1", Name: "ann"})
	addUser(t, db, store.User{ID: "u-2", Name: "bob"})
	tokens := []store.APIToken{
		{ID: "k-b", UserID: "u-1", Name: "ci", Scope: "read", Hash: "hash-b", Prefix: "cad_bbbbbbbb", CreatedAt: at(20)},
		{ID: "k-a", UserID: "u-1", Name: "laptop", Scope: "operate", Hash: "hash-a", Prefix: "cad_aaaaaaaa", CreatedAt: at(20)},
		{ID: "k-0", UserID: "u-1", Name: "old", Scope: "admin", Hash: "hash-0", Prefix: "cad_00000000", CreatedAt: at(10)},
		{ID: "k-bob", UserID: "u-2", Name: "bob's", Scope: "read", Hash: "hash-bob", Prefix: "cad_bobbobbo", CreatedAt: at(1)},
	}
	for _, k := range tokens {
		write(t, db, func(tx store.Tx) error { return tx.InsertToken(ctx, k) })
	}
	got, err := db.GetTokenByHash(ctx, "hash-a")
	if err != nil || got != tokens[1] {
		t.Fatalf("GetTokenByHash = %+v, %v; want %+v", got, err, tokens[1])
	}
	for _, h := range []string{"", "HASH-A", "hash-", "k-a"} {
		if _, err := db.GetTokenByHash(ctx, h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTokenByHash(%q): %v, want not found", h, err)
		}
	}
	list, err := db.ListTokens(ctx, "u-1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range list {
		ids = append(ids, k.ID)
	}
	if want := []string{"k-0", "k-a", "k-b"}; !slices.Equal(ids, want) {
		t.Fatalf("ListTokens(u-1): %v, want %v", ids, want)
	}
	if none, err := db.ListTokens(ctx, "nope"); err != nil || len(none) != 0 {
		t.Fatalf("tokens of an unknown user: %v, %v", none, err)
	}

	write(t, db, func(tx store.Tx) error { return tx.TouchToken(ctx, "k-a", at(50)) })
	if got, err := db.GetTokenByHash(ctx, "hash-a"); err != nil || !got.LastUsed.Equal(at(50)) {
		t.Fatalf("after touch: %+v, %v", got, err)
	}
	write(t, db, func(tx store.Tx) error { return tx.RevokeToken(ctx, "k-a", at(60)) })
	if _, err := db.GetTokenByHash(ctx, "hash-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a revoked token is still found by hash: %v", err)
	}
	list, _ = db.ListTokens(ctx, "u-1")
	if len(list) != 3 || !list[1].RevokedAt.Equal(at(60)) || !list[0].RevokedAt.IsZero() {
		t.Fatalf("ListTokens after revoke (kept, marked): %+v", list)
	}
	// Revoking twice, or an unknown token, finds nothing; touching an
	// unknown token too.
	for _, id := range []string{"k-a", "nope"} {
		if err := db.Write(ctx, func(tx store.Tx) error { return tx.RevokeToken(ctx, id, at(70)) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RevokeToken(%s): %v, want not found", id, err)
		}
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.TouchToken(ctx, "nope", at(70)) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TouchToken(nope): %v, want not found", err)
	}
	// The first revocation time stays.
	list, _ = db.ListTokens(ctx, "u-1")
	if !list[1].RevokedAt.Equal(at(60)) {
		t.Fatalf("revoked_at changed by a second revoke: %v", list[1].RevokedAt)
	}
	// A token names a user that exists, and hashes are unique.
	bad := []store.APIToken{
		{ID: "k-x", UserID: "nope", Name: "x", Scope: "read", Hash: "hash-x", Prefix: "cad_x", CreatedAt: at(1)},
		{ID: "k-y", UserID: "u-2", Name: "y", Scope: "read", Hash: "hash-b", Prefix: "cad_y", CreatedAt: at(1)},
		{ID: "k-b", UserID: "u-2", Name: "z", Scope: "read", Hash: "hash-z", Prefix: "cad_z", CreatedAt: at(1)},
	}
	for _, k := range bad {
		if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertToken(ctx, k) }); err == nil {
			t.Errorf("token %+v was stored", k)
		}
	}
	if got, err := db.ListTokens(ctx, "u-2"); err != nil || len(got) != 1 {
		t.Fatalf("tokens of u-2 after refused inserts: %+v, %v", got, err)
	}
}

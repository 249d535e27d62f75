package storetest

// Browser sign-in sessions.

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testWebSessions(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addUser(t, db, store.User{ID: "u-1", Name: "ann"})
	addUser(t, db, store.User{ID: "u-2", Name: "bob"})
	sessions := []store.WebSession{
		{ID: "ws-a", UserID: "u-1", CSRFHash: "csrf-a", CreatedAt: at(10), ExpiresAt: at(100), LastSeen: at(10)},
		{ID: "ws-b", UserID: "u-1", CSRFHash: "csrf-b", CreatedAt: at(20), ExpiresAt: at(200), LastSeen: at(20)},
		{ID: "ws-c", UserID: "u-1", CSRFHash: "csrf-c", CreatedAt: at(30), ExpiresAt: at(300), LastSeen: at(30)},
		{ID: "ws-bob", UserID: "u-2", CSRFHash: "csrf-bob", CreatedAt: at(40), ExpiresAt: at(50), LastSeen: at(40)},
	}
	for _, s := range sessions {
		write(t, db, func(tx store.Tx) error { return tx.InsertWebSession(ctx, s) })
	}
	for _, s := range sessions {
		if got, err := db.GetWebSession(ctx, s.ID); err != nil || got != s {
			t.Fatalf("GetWebSession(%s) = %+v, %v; want %+v", s.ID, got, err, s)
		}
	}
	for _, id := range []string{"", "WS-A", "ws-", "csrf-a"} {
		if _, err := db.GetWebSession(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetWebSession(%q): %v, want not found", id, err)
		}
	}
	// A session names a user that exists, and ids are unique.
	for _, s := range []store.WebSession{
		{ID: "ws-x", UserID: "nope", CSRFHash: "x", CreatedAt: at(1), ExpiresAt: at(2), LastSeen: at(1)},
		{ID: "ws-a", UserID: "u-2", CSRFHash: "x", CreatedAt: at(1), ExpiresAt: at(2), LastSeen: at(1)},
	} {
		if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertWebSession(ctx, s) }); err == nil {
			t.Errorf("web session %+v was stored", s)
		}
	}

	write(t, db, func(tx store.Tx) error { return tx.TouchWebSession(ctx, "ws-a", at(60), at(160)) })
	if got, err := db.GetWebSession(ctx, "ws-a"); err != nil || !got.LastSeen.Equal(at(60)) || !got.ExpiresAt.Equal(at(160)) || !got.CreatedAt.Equal(at(10)) {
		t.Fatalf("after touch: %+v, %v", got, err)
	}

	// Expired at 100 (ws-bob at 50); ws-a moved to 160 and stays.
	var n int
	write(t, db, func(tx store.Tx) (err error) { n, err = tx.DeleteExpiredWebSessions(ctx, at(100)); return err })
	if n != 1 {
		t.Fatalf("DeleteExpiredWebSessions removed %d, want 1", n)
	}
	if _, err := db.GetWebSession(ctx, "ws-bob"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired session kept: %v", err)
	}

	// All of u-1's sessions but ws-b end; then ws-b alone.
	write(t, db, func(tx store.Tx) (err error) { n, err = tx.DeleteUserWebSessions(ctx, "u-1", "ws-b"); return err })
	if n != 2 {
		t.Fatalf("DeleteUserWebSessions(except ws-b) removed %d, want 2", n)
	}
	if _, err := db.GetWebSession(ctx, "ws-b"); err != nil {
		t.Fatalf("the excepted session ended: %v", err)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteWebSession(ctx, "ws-b") })
	if _, err := db.GetWebSession(ctx, "ws-b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted session found: %v", err)
	}
	for name, fn := range map[string]func(tx store.Tx) error{
		"delete unknown": func(tx store.Tx) error { return tx.DeleteWebSession(ctx, "ws-b") },
		"touch unknown":  func(tx store.Tx) error { return tx.TouchWebSession(ctx, "ws-a", at(1), at(2)) },
	} {
		if err := db.Write(ctx, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	write(t, db, func(tx store.Tx) (err error) { n, err = tx.DeleteUserWebSessions(ctx, "u-1", ""); return err })
	if n != 0 {
		t.Fatalf("DeleteUserWebSessions with none left removed %d", n)
	}
}

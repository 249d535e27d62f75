package storetest

// Memory (issue 16, h16-memory): an agent's memory, per profile.

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testMemory(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)

	// Never written: empty, version 0, not an error.
	got, err := db.GetMemory(ctx, "pf1", "notes")
	if err != nil || got.Version != 0 || got.Entries != nil || got.Scope != "pf1" || got.Target != "notes" {
		t.Fatalf("unwritten = %+v, %v", got, err)
	}

	put := func(m store.Memory) error {
		return db.Write(ctx, func(tx store.Tx) error { return tx.PutMemory(ctx, m) })
	}
	first := store.Memory{Scope: "pf1", Target: "notes", Entries: []string{"a", "b — ünïcode"}, UpdatedAt: at(1)}
	if err := put(first); err != nil {
		t.Fatalf("first put: %v", err)
	}
	want := first
	want.Version = 1
	if got, err := db.GetMemory(ctx, "pf1", "notes"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after first put = %+v, %v; want %+v", got, err, want)
	}

	// Scopes and targets are apart.
	for _, k := range [][2]string{{"pf1", "user"}, {"pf2", "notes"}, {"", "notes"}} {
		if got, err := db.GetMemory(ctx, k[0], k[1]); err != nil || got.Version != 0 || len(got.Entries) != 0 {
			t.Fatalf("%q/%s = %+v, %v; want empty", k[0], k[1], got, err)
		}
	}

	// A write from a stale read (version 0 again, or an old version) is a
	// conflict and changes nothing.
	if err := put(store.Memory{Scope: "pf1", Target: "notes", Entries: []string{"lost"}, UpdatedAt: at(2)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
	next := store.Memory{Scope: "pf1", Target: "notes", Entries: []string{"c"}, Version: 1, UpdatedAt: at(3)}
	if err := put(next); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := put(store.Memory{Scope: "pf1", Target: "notes", Entries: []string{"lost"}, Version: 1, UpdatedAt: at(4)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	want = next
	want.Version = 2
	if got, err := db.GetMemory(ctx, "pf1", "notes"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after update = %+v, %v; want %+v", got, err, want)
	}

	// Emptied, it reads as no entries (nil) at its version.
	if err := put(store.Memory{Scope: "pf1", Target: "notes", Version: 2, UpdatedAt: at(5)}); err != nil {
		t.Fatalf("empty: %v", err)
	}
	if got, err := db.GetMemory(ctx, "pf1", "notes"); err != nil || got.Entries != nil || got.Version != 3 {
		t.Fatalf("emptied = %+v, %v", got, err)
	}
}

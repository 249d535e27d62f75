package storetest

// Skills per profile (issue 16, h16-skills).

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testProfileSkills(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	for _, p := range []store.Profile{
		{ID: "pa", Name: "a", CreatedAt: at(1), UpdatedAt: at(1)},
		{ID: "pb", Name: "b", CreatedAt: at(2), UpdatedAt: at(2)},
	} {
		write(t, db, func(tx store.Tx) error { return tx.InsertProfile(ctx, p) })
	}
	get := func(id string) []string {
		t.Helper()
		got, err := db.ProfileSkills(ctx, id)
		if err != nil {
			t.Fatalf("ProfileSkills(%s): %v", id, err)
		}
		return got
	}
	profiles := func() map[string][]string {
		t.Helper()
		got, err := db.SkillProfiles(ctx)
		if err != nil {
			t.Fatalf("SkillProfiles: %v", err)
		}
		return got
	}

	if got := get("pa"); got != nil {
		t.Fatalf("a new profile enables %q, want none", got)
	}
	if got := get("unknown"); got != nil {
		t.Fatalf("an unknown profile enables %q, want none", got)
	}
	if got := profiles(); len(got) != 0 {
		t.Fatalf("SkillProfiles with none set = %v", got)
	}

	// Sorted, duplicates once; setting replaces.
	write(t, db, func(tx store.Tx) error {
		return tx.SetProfileSkills(ctx, "pa", []string{"zeta", "pdf", "zeta", "alpha"})
	})
	write(t, db, func(tx store.Tx) error { return tx.SetProfileSkills(ctx, "pb", []string{"pdf"}) })
	if got, want := get("pa"), []string{"alpha", "pdf", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pa = %q, want %q", got, want)
	}
	if got, want := profiles(), map[string][]string{"alpha": {"pa"}, "pdf": {"pa", "pb"}, "zeta": {"pa"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SkillProfiles = %v, want %v", got, want)
	}
	write(t, db, func(tx store.Tx) error { return tx.SetProfileSkills(ctx, "pa", []string{"lint"}) })
	if got, want := get("pa"), []string{"lint"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pa after replace = %q, want %q", got, want)
	}

	// Unknown and deleted profiles are ErrNotFound and change nothing.
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.SetProfileSkills(ctx, "nope", []string{"x"}) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set on unknown profile: %v, want ErrNotFound", err)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteProfile(ctx, "pb", at(5)) })
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.SetProfileSkills(ctx, "pb", nil) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set on deleted profile: %v, want ErrNotFound", err)
	}
	if got := get("nope"); got != nil {
		t.Fatalf("unknown profile after refused set = %q", got)
	}
	// A deleted profile's skills no longer count.
	if got, want := profiles(), map[string][]string{"lint": {"pa"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SkillProfiles after delete = %v, want %v", got, want)
	}

	// Empty clears: every skill again.
	write(t, db, func(tx store.Tx) error { return tx.SetProfileSkills(ctx, "pa", nil) })
	if got := get("pa"); got != nil {
		t.Fatalf("pa after clearing = %q", got)
	}
}

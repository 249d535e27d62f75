package storetest

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testSessionsCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	s := addSession(t, db, "s1", at(1000))

	got, err := db.GetSession(ctx, "s1")
	if err != nil || got != s {
		t.Fatalf("get = %+v, %v; want %+v", got, err, s)
	}

	// Duplicate insert fails and changes nothing.
	if err := db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertSession(ctx, store.Session{ID: "s1", Title: "dup", Workspace: "/x"})
	}); err == nil {
		t.Fatal("duplicate insert succeeded")
	}

	upd := s
	upd.Title, upd.Model, upd.Workspace, upd.UpdatedAt = "renamed", "m2", "/ignored", at(2000)
	write(t, db, func(tx store.Tx) error { return tx.UpdateSession(ctx, upd) })
	got, _ = db.GetSession(ctx, "s1")
	want := s
	want.Title, want.Model, want.UpdatedAt = "renamed", "m2", at(2000) // workspace is immutable
	if got != want {
		t.Fatalf("after update = %+v, want %+v", got, want)
	}

	// Touch only moves activity forward.
	write(t, db, func(tx store.Tx) error { return tx.TouchSession(ctx, "s1", at(1500)) })
	if got, _ = db.GetSession(ctx, "s1"); !got.UpdatedAt.Equal(at(2000)) {
		t.Fatalf("touch into the past moved updated_at to %v", got.UpdatedAt)
	}
	write(t, db, func(tx store.Tx) error { return tx.TouchSession(ctx, "s1", at(3000)) })
	if got, _ = db.GetSession(ctx, "s1"); !got.UpdatedAt.Equal(at(3000)) {
		t.Fatalf("touch: updated_at = %v, want %v", got.UpdatedAt, at(3000))
	}

	missing := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"update", func(tx store.Tx) error { return tx.UpdateSession(ctx, store.Session{ID: "nope"}) }},
		{"touch", func(tx store.Tx) error { return tx.TouchSession(ctx, "nope", at(1)) }},
		{"delete", func(tx store.Tx) error { return tx.DeleteSession(ctx, "nope") }},
		{"get in tx", func(tx store.Tx) error { _, err := tx.GetSession(ctx, "nope"); return err }},
	}
	for _, tc := range missing {
		t.Run("missing/"+tc.name, func(t *testing.T) {
			if err := db.Write(ctx, tc.fn); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
	if _, err := db.GetSession(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}

	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s1") })
	if _, err := db.GetSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func testListSessionsKeysetPagination(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	// 23 sessions; several share an updated_at so the id tie-break matters.
	var all []store.Session
	for i := range 23 {
		all = append(all, addSession(t, db, sid(i), at((i%7)*1000)))
	}
	want := slices.Clone(all)
	sort.Slice(want, func(i, j int) bool {
		if !want[i].UpdatedAt.Equal(want[j].UpdatedAt) {
			return want[i].UpdatedAt.After(want[j].UpdatedAt)
		}
		return want[i].ID > want[j].ID
	})

	for _, limit := range []int{1, 2, 5, 7, 22, 23, 24, 100} {
		t.Run("limit="+strconv.Itoa(limit), func(t *testing.T) {
			var got []store.Session
			cursor := ""
			pages := 0
			for {
				page, next, err := db.ListSessions(ctx, store.SessionPage{Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatalf("page %d: %v", pages, err)
				}
				pages++
				if len(page) > limit {
					t.Fatalf("page %d has %d rows, limit %d", pages, len(page), limit)
				}
				got = append(got, page...)
				if next == "" {
					break
				}
				if len(page) != limit {
					t.Fatalf("short page %d (%d rows) with a next cursor", pages, len(page))
				}
				cursor = next
				if pages > 100 {
					t.Fatal("pagination does not terminate")
				}
			}
			if !slices.Equal(sessionIDs(got), sessionIDs(want)) {
				t.Fatalf("order:\n got %v\nwant %v", sessionIDs(got), sessionIDs(want))
			}
			if wantPages := (len(all) + limit - 1) / limit; pages != wantPages {
				t.Fatalf("pages = %d, want %d", pages, wantPages)
			}
		})
	}

	t.Run("default limit", func(t *testing.T) {
		page, next, err := db.ListSessions(ctx, store.SessionPage{})
		if err != nil || len(page) != len(all) || next != "" {
			t.Fatalf("got %d rows, next %q, err %v", len(page), next, err)
		}
	})

	t.Run("cursor survives activity", func(t *testing.T) {
		// A session touched after the first page was read moves to the top;
		// the rest of the walk still sees every other session exactly once.
		first, next, err := db.ListSessions(ctx, store.SessionPage{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		moved := want[10].ID
		write(t, db, func(tx store.Tx) error { return tx.TouchSession(ctx, moved, at(99_000)) })
		rest, _, err := db.ListSessions(ctx, store.SessionPage{Limit: 100, Cursor: next})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, s := range append(first, rest...) {
			seen[s.ID]++
		}
		for _, s := range want {
			if s.ID != moved && seen[s.ID] != 1 {
				t.Fatalf("session %s seen %d times", s.ID, seen[s.ID])
			}
		}
		if seen[moved] != 0 {
			t.Fatalf("session moved above the cursor was returned again")
		}
	})
}

func testListSessionsTitleQuery(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	titles := map[string]string{
		"pct":     "100% done",
		"pct2":    "100 percent",
		"snake":   "snake_case name",
		"snakeX":  "snakeXcase name",
		"bslash":  `back\slash`,
		"upper":   "UPPER lower",
		"empty":   "",
		"percent": "%",
	}
	i := 0
	for id, title := range titles {
		i++
		s := store.Session{ID: id, Title: title, Workspace: "/ws", CreatedAt: at(i), UpdatedAt: at(i)}
		write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, s) })
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"bslash", "empty", "pct", "pct2", "percent", "snake", "snakeX", "upper"}},
		{"%", []string{"pct", "percent"}},
		{"100%", []string{"pct"}},
		{"_", []string{"snake"}},
		{"e_c", []string{"snake"}},
		{"eXc", []string{"snakeX"}},
		{"e_ca", []string{"snake"}}, // "_" is literal: "snakeXcase" does not match
		{`\`, []string{"bslash"}},
		{`k\s`, []string{"bslash"}},
		{"upper", []string{"upper"}}, // case-insensitive
		{"LOWER", []string{"upper"}},
		{"name", []string{"snake", "snakeX"}},
		{"%%", nil},
		{"nothing like it", nil},
	}
	for _, tc := range tests {
		t.Run("q="+tc.query, func(t *testing.T) {
			got, next, err := db.ListSessions(ctx, store.SessionPage{Query: tc.query, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			ids := sessionIDs(got)
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) || next != "" {
				t.Fatalf("got %v (next %q), want %v", ids, next, tc.want)
			}
		})
	}

	t.Run("query with pagination", func(t *testing.T) {
		var got []string
		cursor := ""
		for {
			page, next, err := db.ListSessions(ctx, store.SessionPage{Query: "name", Limit: 1, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, sessionIDs(page)...)
			if next == "" {
				break
			}
			cursor = next
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"snake", "snakeX"}) {
			t.Fatalf("got %v", got)
		}
	})
}

func testListSessionsBadCursor(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s1", t0)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{
		"!!!not base64!!!",
		b64("no separator"),
		b64("notanumber|s1"),
		b64("123|"),
		b64("|s1"),
		b64("12.5|s1"),
	} {
		t.Run(c, func(t *testing.T) {
			_, _, err := db.ListSessions(ctx, store.SessionPage{Cursor: c})
			if !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("err = %v, want ErrBadCursor", err)
			}
		})
	}
	// A well-formed cursor the store could have issued is fine, even for a
	// session that no longer exists.
	if _, _, err := db.ListSessions(ctx, store.SessionPage{Cursor: b64("1700000000000|gone")}); err != nil {
		t.Fatalf("valid cursor: %v", err)
	}
}

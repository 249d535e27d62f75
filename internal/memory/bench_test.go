package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkRender: what reading memory for a run's system prompt costs
// kept in the database (InStore, SQLite) against the files it replaced
// (baseline), both holding 40 entries of 100 characters in each target.
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	db, _ := storetest.SQLite(b)
	stores := []struct {
		name string
		s    *memory.Store
	}{{"files", memory.New(b.TempDir())}, {"sqlite", memory.InStore(db, "pf", nil)}}
	for _, st := range stores {
		for _, t := range memory.Targets() {
			for i := range 40 {
				if _, err := st.s.Add(ctx, t, fmt.Sprintf("entry %02d %s", i, "about the project and its conventions, kept short and to the point, one fact each.....")); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			for b.Loop() {
				if out, err := st.s.Render(ctx); err != nil || out == "" {
					b.Fatal(out, err)
				}
			}
		})
	}
}

// BenchmarkAdd: one entry added and removed again (a memory tool call's
// write), in the database against the files.
func BenchmarkAdd(b *testing.B) {
	ctx := context.Background()
	db, _ := storetest.SQLite(b)
	for _, st := range []struct {
		name string
		s    *memory.Store
	}{{"files", memory.New(b.TempDir())}, {"sqlite", memory.InStore(db, "pf", nil)}} {
		b.Run(st.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := st.s.Add(ctx, memory.Notes, "a fact to keep"); err != nil {
					b.Fatal(err)
				}
				if _, err := st.s.RemoveEntry(ctx, memory.Notes, "a fact to keep"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

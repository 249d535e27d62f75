package memory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func TestInStoreKeepsProfilesApart(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	a, b := memory.InStore(db, "pfA", nil), memory.InStore(db, "pfB", nil)
	if _, err := a.Add(ctx, memory.Notes, "repo uses make"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(ctx, memory.User, "prefers tabs"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.ReplaceEntry(ctx, memory.Notes, "repo uses make", "repo uses just"); err != nil || !slices.Equal(got, []string{"repo uses just"}) {
		t.Fatalf("replace entry = %q, %v", got, err)
	}
	// An exact entry, not a substring, is needed.
	if _, err := a.RemoveEntry(ctx, memory.Notes, "repo"); !errors.Is(err, memory.ErrNoMatch) {
		t.Fatalf("remove by substring: %v, want ErrNoMatch", err)
	}
	got, err := a.Render(ctx)
	if err != nil || !strings.Contains(got, "- repo uses just\n") || !strings.Contains(got, "- prefers tabs\n") {
		t.Fatalf("render A = %q, %v", got, err)
	}
	if got, err := b.Render(ctx); err != nil || got != "" {
		t.Fatalf("render B = %q, %v; want empty", got, err)
	}
	// The limits and the secret check hold as for files.
	if _, err := b.Add(ctx, memory.Notes, "key sk-proj-AbC123dEf456GhI789"); !errors.Is(err, memory.ErrSecret) {
		t.Fatalf("secret: %v", err)
	}
	if _, err := b.Add(ctx, memory.Notes, strings.Repeat("x", memory.MaxEntryChars+1)); !errors.Is(err, memory.ErrTooLong) {
		t.Fatalf("too long: %v", err)
	}
	if m, err := db.GetMemory(ctx, "pfB", "notes"); err != nil || m.Version != 0 {
		t.Fatalf("refused changes wrote: %+v, %v", m, err)
	}
	if got, err := a.RemoveEntry(ctx, memory.Notes, "repo uses just"); err != nil || len(got) != 0 {
		t.Fatalf("remove entry = %q, %v", got, err)
	}
}

// interloper is a database another runner writes to between this store's
// read and its write, once.
type interloper struct {
	store.Store
	once sync.Once
	t    *testing.T
}

func (i *interloper) Write(ctx context.Context, fn func(store.Tx) error) error {
	i.once.Do(func() {
		if _, err := memory.InStore(i.Store, "pf", nil).Add(ctx, memory.Notes, "from the other runner"); err != nil {
			i.t.Errorf("other runner: %v", err)
		}
	})
	return i.Store.Write(ctx, fn)
}

func TestInStoreRedoesAChangeMadeFromAStaleRead(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	s := memory.InStore(&interloper{Store: db, t: t}, "pf", nil)
	got, err := s.Add(ctx, memory.Notes, "mine")
	want := []string{"from the other runner", "mine"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("add = %q, %v; want %q", got, err, want)
	}
	if m, _ := db.GetMemory(ctx, "pf", "notes"); !slices.Equal(m.Entries, want) || m.Version != 2 {
		t.Fatalf("stored %+v", m)
	}
}

func TestInStoreParallelWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	var wg sync.WaitGroup
	for w := range 3 {
		// A store each, as runners in separate processes would have.
		s := memory.InStore(db, "pf", nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := s.Add(ctx, memory.Notes, fmt.Sprintf("writer %d entry %d", w, i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got, err := memory.InStore(db, "pf", nil).List(ctx, memory.Notes); err != nil || len(got) != 30 {
		t.Fatalf("%d entries, %v; want 30", len(got), err)
	}
}

func TestImportOnce(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	dir := t.TempDir()
	files := memory.New(dir)
	files.Add(ctx, memory.Notes, "old note")
	files.Add(ctx, memory.User, "old user fact")
	dst := memory.InStore(db, "pfDefault", nil)
	// A target the database already has keeps its entries.
	if _, err := dst.Add(ctx, memory.User, "newer fact"); err != nil {
		t.Fatal(err)
	}
	n, err := memory.Import(ctx, dir, dst)
	if err != nil || n != 1 {
		t.Fatalf("import = %d, %v; want 1", n, err)
	}
	if got, _ := dst.List(ctx, memory.Notes); !slices.Equal(got, []string{"old note"}) {
		t.Fatalf("notes = %q", got)
	}
	if got, _ := dst.List(ctx, memory.User); !slices.Equal(got, []string{"newer fact"}) {
		t.Fatalf("user = %q", got)
	}
	for _, f := range []string{"NOTES.md", "USER.md"} {
		if _, err := os.Stat(filepath.Join(dir, f+memory.ImportedSuffix)); err != nil {
			t.Errorf("%s not kept as imported: %v", f, err)
		}
	}
	// Once: the files are gone, so a second import finds nothing.
	if _, err := dst.RemoveEntry(ctx, memory.Notes, "old note"); err != nil {
		t.Fatal(err)
	}
	if n, err := memory.Import(ctx, dir, dst); err != nil || n != 0 {
		t.Fatalf("second import = %d, %v", n, err)
	}
	if got, _ := dst.List(ctx, memory.Notes); len(got) != 0 {
		t.Fatalf("deleted entry came back: %q", got)
	}
}

func TestAdoptMovesIntoEmptyTargetsOnly(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	none, def := memory.InStore(db, "", nil), memory.InStore(db, "pfDefault", nil)
	none.Add(ctx, memory.Notes, "legacy note")
	none.Add(ctx, memory.User, "legacy user fact")
	def.Add(ctx, memory.User, "the default's own fact")
	n, err := memory.Adopt(ctx, none, def)
	if err != nil || n != 1 {
		t.Fatalf("adopt = %d, %v; want 1", n, err)
	}
	for _, c := range []struct {
		s    *memory.Store
		t    memory.Target
		want []string
	}{
		{def, memory.Notes, []string{"legacy note"}},
		{none, memory.Notes, nil},
		{def, memory.User, []string{"the default's own fact"}},
		{none, memory.User, []string{"legacy user fact"}},
	} {
		if got, err := c.s.List(ctx, c.t); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s = %q, %v; want %q", c.t, got, err, c.want)
		}
	}
	if n, err := memory.Adopt(ctx, none, def); err != nil || n != 0 {
		t.Fatalf("second adopt = %d, %v", n, err)
	}
}

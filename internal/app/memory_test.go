package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// TestMemoryFilesImportedAtStart: a server from before profiles kept its
// memory in <data-dir>/memory. The first start imports it into the
// database (no profile yet: the memory of runs with no profile) and
// renames the files; the first start after a default profile exists moves
// it to that profile.
func TestMemoryFilesImportedAtStart(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	files := memory.New(filepath.Join(data, "memory"))
	if _, err := files.Add(ctx, memory.Notes, "The build needs make."); err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		cfg := config.Config{Addr: "127.0.0.1:0", DataDir: data, Workspace: t.TempDir(), Lease: 2 * time.Second,
			Version: "test", ApprovalMode: "manual", Getenv: func(string) string { return "" }}
		rctx, cancel := context.WithCancel(ctx)
		a, err := New(rctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.Run(rctx) }()
		waitRunner(t, a.URL())
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	read := func(scope string) []string {
		t.Helper()
		db, err := sqlite.Open(ctx, filepath.Join(data, "caduceus.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		m, err := db.GetMemory(ctx, scope, "notes")
		if err != nil {
			t.Fatal(err)
		}
		return m.Entries
	}

	start()
	if got := read(""); !slices.Equal(got, []string{"The build needs make."}) {
		t.Fatalf("after the first start, runs with no profile remember %q", got)
	}
	if _, err := os.Stat(filepath.Join(data, "memory", "NOTES.md"+memory.ImportedSuffix)); err != nil {
		t.Fatalf("the file was not kept as imported: %v", err)
	}

	db, err := sqlite.Open(ctx, filepath.Join(data, "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertProfile(ctx, store.Profile{ID: "prf_default", Name: "Main", Default: true, CreatedAt: now, UpdatedAt: now})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	start()
	if got := read("prf_default"); !slices.Equal(got, []string{"The build needs make."}) {
		t.Fatalf("after a default profile exists, it remembers %q", got)
	}
	if got := read(""); len(got) != 0 {
		t.Fatalf("runs with no profile still hold %q", got)
	}
}

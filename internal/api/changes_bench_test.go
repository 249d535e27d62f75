package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/changes"
	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkRunChanges is GET /api/runs/{id}/changes of a run that changed
// 100 files (of 10,000) with one tool call, through the handler (store
// reads, git diff, JSON), against the baseline of the same span compared
// by internal/checkpoint alone. Target: under 200 ms (docs/BENCHMARKS.md,
// "Checkpoints").
func BenchmarkRunChanges(b *testing.B) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	j := journaltest.Start(b, storetest.SQLite)
	cp, err := checkpoint.New(checkpoint.Options{Dir: b.TempDir(), Logger: log})
	if err != nil {
		b.Skip(err)
	}
	chg := changes.New(cp, j.Store, j.Writer, 0, log)
	ws := b.TempDir()
	write := func(i, version int) {
		dir := filepath.Join(ws, fmt.Sprintf("pkg%03d", i/100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		body := fmt.Appendf(nil, "package pkg\n\n// File %d, version %d.\nfunc F%d() int {\n\treturn %d\n}\n", i, version, i, version)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i%100)), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10_000 {
		write(i, 0)
	}
	now := time.Now().UTC()
	const sid, rid = "ses_01m87m37b0dxkqkgknqv73emr7", "run_01m87m37hfectdtrry9mbjfe31"
	if err := j.Store.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: sid, Workspace: ws, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Completed, Input: "x", CreatedAt: now})
	}); err != nil {
		b.Fatal(err)
	}
	first, err := chg.Checkpoint(ctx, ws, checkpoint.Meta{SessionID: sid, RunID: rid, ToolCallID: "call_1", Reason: "before write_file"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		write(i*97, 1) // spread over the tree
	}
	last, err := chg.Checkpoint(ctx, ws, checkpoint.Meta{SessionID: sid, RunID: rid, Reason: "end of run"})
	if err != nil {
		b.Fatal(err)
	}
	if last.FilesChanged != 100 {
		b.Fatalf("the run changed %d files, want 100", last.FilesChanged)
	}
	a := api.New(j.Store, control.NewService(j.Store, j.Writer, ws, control.RetryPolicy{}), j.Hub, api.Info{Version: "bench"},
		api.Options{Identity: identity.New(j.Store, identity.Config{Loopback: true, Log: log}), Changes: chg}, log)
	srv := httptest.NewServer(a.Handler())
	b.Cleanup(srv.Close)

	b.Run("baseline=checkpoint.Changes", func(b *testing.B) {
		for b.Loop() {
			files, err := cp.Changes(ctx, ws, first.CheckpointID, last.CheckpointID)
			if err != nil || len(files) != 100 {
				b.Fatalf("%d files, %v", len(files), err)
			}
		}
	})
	b.Run("handler", func(b *testing.B) {
		for b.Loop() {
			res, err := http.Get(srv.URL + "/api/runs/" + rid + "/changes")
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || n < 100*200 {
				b.Fatalf("status %d, %d bytes", res.StatusCode, n)
			}
		}
	})
}

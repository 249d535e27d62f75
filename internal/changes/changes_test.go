package changes_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/changes"
	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type fixture struct {
	ctx context.Context
	st  store.Store
	svc *changes.Service
	ws  string
}

const sid, rid = "ses_01m87m37b0dxkqkgknqv73emr7", "run_01m87m37hfectdtrry9mbjfe31"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	j := journaltest.Start(t, storetest.SQLite)
	cp, err := checkpoint.New(checkpoint.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Skip(err) // no git binary
	}
	ws := t.TempDir()
	now := time.Now().UTC()
	if err := j.Store.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: sid, Workspace: ws, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Completed, Input: "x", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	return &fixture{ctx: ctx, st: j.Store, svc: changes.New(cp, j.Store, j.Writer, 1<<30, nil), ws: ws}
}

func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(fs []checkpoint.FileChange) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// A run's span is its first checkpoint to its end-of-run one, a call's its
// checkpoint to the next; the rows and the event payloads carry the counts.
func TestRunAndCallSpans(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "a\n")
	// A run that took no checkpoint closes no span and changed nothing.
	if _, ok, err := f.svc.RunEnd(f.ctx, f.ws, sid, rid); ok || err != nil {
		t.Fatalf("RunEnd without checkpoints: ok %v, %v", ok, err)
	}
	if _, err := f.svc.RunSpan(f.ctx, rid, ""); !errors.Is(err, changes.ErrNoChanges) {
		t.Fatalf("RunSpan without checkpoints: %v", err)
	}
	first, err := f.svc.Checkpoint(f.ctx, f.ws, checkpoint.Meta{SessionID: sid, RunID: rid, ToolCallID: "call_1", Reason: "before write_file"})
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "a\nb\n")
	if _, err := f.svc.Checkpoint(f.ctx, f.ws, checkpoint.Meta{SessionID: sid, RunID: rid, ToolCallID: "call_2", Reason: "before run_command"}); err != nil {
		t.Fatal(err)
	}
	f.write(t, "c.txt", "c\n")
	// Until the end-of-run checkpoint, the run's span reaches to now.
	sp, err := f.svc.RunSpan(f.ctx, rid, "")
	if err != nil || sp.From != first.CheckpointID || sp.To != "" {
		t.Fatalf("open span = %+v, %v", sp, err)
	}
	end, ok, err := f.svc.RunEnd(f.ctx, f.ws, sid, rid)
	if !ok || err != nil || end.FilesChanged != 1 || !slices.Equal(end.Files, []string{"c.txt"}) || end.Added != 1 {
		t.Fatalf("RunEnd = %+v, %v, %v", end, ok, err)
	}
	f.write(t, "later.txt", "after the run\n")
	for _, tc := range []struct {
		call string
		want []string
	}{
		{"", []string{"a.txt", "c.txt"}},
		{"call_1", []string{"a.txt"}},
		{"call_2", []string{"c.txt"}},
	} {
		sp, err := f.svc.RunSpan(f.ctx, rid, tc.call)
		if err != nil {
			t.Fatalf("RunSpan(%q): %v", tc.call, err)
		}
		got, err := f.svc.Changes(f.ctx, sp)
		if err != nil || !slices.Equal(paths(got), tc.want) {
			t.Errorf("changes of %q = %v, %v; want %v", tc.call, paths(got), err, tc.want)
		}
	}
	if _, err := f.svc.RunSpan(f.ctx, rid, "call_x"); !errors.Is(err, changes.ErrNoChanges) {
		t.Errorf("unknown call: %v", err)
	}
	// The session's changes reach to now.
	sp, err = f.svc.SessionSpan(f.ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.Changes(f.ctx, sp); err != nil || !slices.Equal(paths(got), []string{"a.txt", "c.txt", "later.txt"}) {
		t.Errorf("session changes = %v, %v", paths(got), err)
	}
	rows, err := f.st.ListCheckpoints(f.ctx, store.CheckpointQuery{RunID: rid})
	if err != nil || len(rows) != 3 || rows[1].Files != 1 || rows[1].Added != 1 || rows[2].ToolCallID != "" || rows[2].Parent != rows[1].ID {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
}

// A person's save is checkpointed as a session event with who did it.
func TestBeforeEdit(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "a\n")
	by := &event.Actor{Kind: "user", Name: "ann", UserID: "usr_1"}
	if err := f.svc.BeforeEdit(f.ctx, sid, f.ws, "a.txt", by); err != nil {
		t.Fatal(err)
	}
	rows, err := f.svc.List(f.ctx, sid)
	if err != nil || len(rows) != 1 || rows[0].Reason != "before edit by ann" || rows[0].RunID != "" {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	var got event.Actor
	if err := json.Unmarshal([]byte(rows[0].By), &got); err != nil || got != *by {
		t.Fatalf("by = %q, %v", rows[0].By, err)
	}
	evs, err := f.st.Events(f.ctx, store.EventQuery{SessionID: sid, Types: []event.Type{event.CheckpointCreated}})
	if err != nil || len(evs) != 1 || evs[0].RunID != "" {
		t.Fatalf("events = %+v, %v", evs, err)
	}
	if _, err := f.svc.List(f.ctx, "ses_01m87m37b0dxkqkgknqv73emr8"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("List of an unknown session: %v", err)
	}
}

// A rollback records its two checkpoints and journals what it wrote, by
// whom; a dry run records nothing.
func TestRestoreRecords(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "a\n")
	first, err := f.svc.Checkpoint(f.ctx, f.ws, checkpoint.Meta{SessionID: sid, RunID: rid, ToolCallID: "call_1"})
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "changed\n")
	if _, _, err := f.svc.RunEnd(f.ctx, f.ws, sid, rid); err != nil {
		t.Fatal(err)
	}
	sp, err := f.svc.RunSpan(f.ctx, rid, "")
	if err != nil {
		t.Fatal(err)
	}
	by := &event.Actor{Kind: "user", Name: "ann"}
	plan, err := f.svc.Restore(f.ctx, sp, changes.RestoreOptions{DryRun: true}, by)
	if err != nil || plan.Before != nil || len(plan.Files) != 1 {
		t.Fatalf("dry run = %+v, %v", plan, err)
	}
	rows, _ := f.svc.List(f.ctx, sid)
	if len(rows) != 2 {
		t.Fatalf("a dry run recorded checkpoints: %d rows", len(rows))
	}
	plan, err = f.svc.Restore(f.ctx, sp, changes.RestoreOptions{}, by)
	if err != nil || plan.Before == nil || plan.After == nil {
		t.Fatalf("restore = %+v, %v", plan, err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "a.txt")); string(b) != "a\n" {
		t.Fatalf("a.txt = %q", b)
	}
	rows, _ = f.svc.List(f.ctx, sid)
	if len(rows) != 4 || rows[2].ID != plan.Before.ID || rows[3].ID != plan.After.ID || rows[3].By == "" {
		t.Fatalf("rows = %+v", rows)
	}
	evs, err := f.st.Events(f.ctx, store.EventQuery{SessionID: sid, Types: []event.Type{event.CheckpointRestored}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events = %+v, %v", evs, err)
	}
	var p event.CheckpointRestoredPayload
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil || p.CheckpointID != first.CheckpointID || p.RunID != rid ||
		!slices.Equal(p.Files, []string{"a.txt"}) || p.Count != 1 || p.Before != plan.Before.ID || p.By == nil || p.By.Name != "ann" {
		t.Fatalf("checkpoint.restored = %+v, %v", p, err)
	}
	// The undo span is the rollback's own.
	undo, err := f.svc.SpanTo(f.ctx, p.Before, p.After)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Restore(f.ctx, undo, changes.RestoreOptions{}, by); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "a.txt")); string(b) != "changed\n" {
		t.Fatalf("after the undo a.txt = %q", b)
	}
}

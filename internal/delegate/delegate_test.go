package delegate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// fixture is a real store and writer, a Service over them and a parent
// session with a queued run.
type fixture struct {
	st     store.Store
	svc    *control.Service
	w      *journal.Writer
	d      *Service
	parent store.Session
	run    store.Run
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	w := journal.NewWriter(st, nil, log)
	w.Start()
	t.Cleanup(func() {
		w.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	svc := control.NewService(st, w, t.TempDir(), control.RetryPolicy{})
	parent, err := svc.CreateSession(ctx, control.NewSession{Title: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.Send(ctx, parent.ID, control.Message{Content: "delegate please"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, svc: svc, w: w, d: New(st, w, svc, cfg, log), parent: parent, run: r}
}

func (f *fixture) env(callID string) tool.Env {
	return tool.Env{Workspace: f.parent.Workspace, SessionID: f.parent.ID, RunID: f.run.ID, CallID: callID}
}

func tasks(prompts ...string) []tool.DelegateTask {
	var out []tool.DelegateTask
	for _, p := range prompts {
		out = append(out, tool.DelegateTask{Prompt: p, Title: p, Workspace: tool.DelegateShared})
	}
	return out
}

// A call run again (after a handover) finds the children it made, in task
// order, instead of making new ones; another call of the run gets its own;
// a call whose task count changed is refused.
func TestChildrenAreFoundAgain(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{})
	first, err := f.d.children(ctx, f.env("call-1"), tasks("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.d.children(ctx, f.env("call-1"), tasks("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if first[i].sess.ID != again[i].sess.ID || again[i].sess.Title != []string{"a", "b", "c"}[i] {
			t.Fatalf("child %d: first %s, again %s (%q)", i, first[i].sess.ID, again[i].sess.ID, again[i].sess.Title)
		}
		s := again[i].sess
		if s.DelegatedSessionID != f.parent.ID || s.DelegatedRunID != f.run.ID || s.DelegatedCallID != "call-1" || s.Workspace != f.parent.Workspace {
			t.Fatalf("child %d = %+v, want linked to the parent call and in its workspace", i, s)
		}
	}
	other, err := f.d.children(ctx, f.env("call-2"), tasks("d"))
	if err != nil || len(other) != 1 || other[0].sess.ID == first[0].sess.ID {
		t.Fatalf("another call: %v, %v", other, err)
	}
	// A child whose subagent.done is in the journal is known as reported.
	err = f.w.Do(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: f.run.ID, SessionID: f.parent.ID, Type: event.SubagentDone,
			Payload: event.SubagentDonePayload{ToolCallID: "call-1", Index: 1, Status: "completed"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	again, err = f.d.children(ctx, f.env("call-1"), tasks("a", "b", "c"))
	if err != nil || again[0].reported || !again[1].reported || again[2].reported {
		t.Fatalf("reported after a subagent.done of task 2: %v %v %v, %v", again[0].reported, again[1].reported, again[2].reported, err)
	}
	var bad *tool.DelegateError
	if _, err := f.d.children(ctx, f.env("call-1"), tasks("a")); !errors.As(err, &bad) {
		t.Fatalf("changed task count: %v, want a DelegateError", err)
	}
}

// When the call's context ends, the children are cancelled only if the
// parent itself ended (cancelled here); a parent merely handed over
// leaves them queued for the call run again.
func TestStopCancelsChildrenOnlyWithTheParent(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cancelParent bool
		want         run.Status
	}{
		{"handover", false, run.Queued},
		{"parent cancelled", true, run.Cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{Limit: 2, Poll: 10 * time.Millisecond})
			if tc.cancelParent {
				if _, err := f.svc.Cancel(context.Background(), f.run.ID, nil); err != nil {
					t.Fatal(err)
				}
			}
			// Long enough for a loaded machine to queue the children (CI:
			// 100 ms was not); nothing runs them, so the deadline ends it.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			out, err := f.d.Delegate(ctx, f.env("call-1"), tasks("a", "b", "c"))
			if !errors.Is(err, context.DeadlineExceeded) || len(out) != 3 {
				t.Fatalf("Delegate = %+v, %v; want three outcomes and the context's error", out, err)
			}
			kids, err := f.st.DelegatedSessions(context.Background(), f.run.ID)
			if err != nil || len(kids) != 3 {
				t.Fatalf("children %v, %v", kids, err)
			}
			queued := 0
			for _, k := range kids {
				runs, err := f.st.SessionRuns(context.Background(), k.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range runs {
					queued++
					if r.Status != tc.want {
						t.Fatalf("child run %s is %s, want %s", r.ID, r.Status, tc.want)
					}
				}
			}
			// The limit: two of three were queued; nobody ran them.
			if queued != 2 {
				t.Fatalf("%d child runs queued, want the limit, 2", queued)
			}
		})
	}
}

// A scratch copy holds the workspace's files, directories and links (as
// links); writing in it leaves the workspace alone. A workspace over the
// size limit, or no scratch directory configured, is refused with nothing
// left behind.
func TestScratchCopy(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		refused bool
	}{
		{"copied", Config{ScratchDir: t.TempDir(), ScratchMaxBytes: 1 << 20}, false},
		{"too large", Config{ScratchDir: t.TempDir(), ScratchMaxBytes: 4}, true},
		{"not configured", Config{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, nil, nil, tc.cfg, slog.New(slog.DiscardHandler))
			dst, err := s.scratch(src, "ses_x")
			if tc.refused {
				var bad *tool.DelegateError
				if !errors.As(err, &bad) {
					t.Fatalf("err = %v, want a DelegateError", err)
				}
				if tc.cfg.ScratchDir != "" {
					if _, err := os.Stat(filepath.Join(tc.cfg.ScratchDir, "ses_x")); !os.IsNotExist(err) {
						t.Fatalf("a refused copy was left behind: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(dst, "sub", "a.txt")); err != nil || string(b) != "hello" {
				t.Fatalf("copied file = %q, %v", b, err)
			}
			if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "sub/a.txt" {
				t.Fatalf("copied link = %q, %v", target, err)
			}
			if err := os.WriteFile(filepath.Join(dst, "sub", "a.txt"), []byte("changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(src, "sub", "a.txt")); string(b) != "hello" {
				t.Fatalf("the workspace changed with its copy: %q", b)
			}
		})
	}
}

// Cancelling a parent nobody holds (here: queued, as after its runner
// died) cancels its children in the same transaction, though no delegate
// call runs to do it.
func TestCancelOfAParentNobodyHoldsCancelsChildren(t *testing.T) {
	f := newFixture(t, Config{Poll: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := f.d.Delegate(ctx, f.env("call-1"), tasks("a", "b")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Delegate: %v", err)
	}
	if _, err := f.svc.Cancel(context.Background(), f.run.ID, nil); err != nil {
		t.Fatal(err)
	}
	kids, err := f.st.DelegatedSessions(context.Background(), f.run.ID)
	if err != nil || len(kids) != 2 {
		t.Fatalf("children %v, %v", kids, err)
	}
	for _, k := range kids {
		runs, err := f.st.SessionRuns(context.Background(), k.ID)
		if err != nil || len(runs) != 1 || runs[0].Status != run.Cancelled {
			t.Fatalf("child %s runs %+v, %v; want one, cancelled", k.ID, runs, err)
		}
	}
}

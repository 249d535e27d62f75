package proctrack

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// The console lists every record of the directory with what its process
// is now, and kills any of them; with KeepOrphans a sweep leaves a dead
// runner's process for a person to kill.
func TestListAndKillAny(t *testing.T) {
	gone := func(o Owner) Owner { o.StartTicks++; return o }
	tests := []struct {
		name        string
		keepOrphans bool
		edit        func(rec *Record)
		wantStatus  string // after a sweep; "" not listed
		wantKilled  bool   // by the sweep
	}{
		{name: "runner alive", edit: func(*Record) {}, wantStatus: StatusRunning},
		{name: "runner gone, killed by the sweep", edit: func(rec *Record) { rec.Owner = gone(rec.Owner) }, wantStatus: StatusKilled, wantKilled: true},
		{name: "runner gone, kept", keepOrphans: true, edit: func(rec *Record) { rec.Owner = gone(rec.Owner) }, wantStatus: StatusOrphaned},
		{name: "kept orphan past its deadline", keepOrphans: true, edit: func(rec *Record) {
			rec.Owner = gone(rec.Owner)
			rec.Deadline = time.Now().Add(-OverdueGrace - time.Second)
		}, wantStatus: StatusKilled, wantKilled: true},
		{name: "another host", edit: func(rec *Record) { rec.Owner.Host += "-other" }, wantStatus: StatusElsewhere},
		{name: "an earlier boot", edit: func(rec *Record) { rec.Owner.Boot = "earlier" }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Open(filepath.Join(t.TempDir(), "procs"), "rnr_a", slog.New(slog.DiscardHandler), KeepOrphans(tt.keepOrphans))
			if err != nil {
				t.Fatal(err)
			}
			procID := "proc_c" + string(rune('a'+i))
			victim := startProc(t, "", nil, "sleep", "30")
			rec := recordOf(t, r, victim.Process.Pid, procID)
			rec.Kind = KindTerminal
			tt.edit(&rec)
			if err := r.write(rec); err != nil {
				t.Fatal(err)
			}
			r.Sweep(context.Background())
			if killed := waitKilled(victim, 300*time.Millisecond); killed != tt.wantKilled {
				t.Errorf("killed by the sweep = %v, want %v", killed, tt.wantKilled)
			}
			ls, err := r.List()
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if len(ls) == 1 {
				got = ls[0].Status
				if ls[0].ProcessID != procID || ls[0].Kind != KindTerminal {
					t.Errorf("listed %+v", ls[0])
				}
			} else if len(ls) > 1 {
				t.Fatalf("listed %d: %+v", len(ls), ls)
			}
			if got != tt.wantStatus {
				t.Fatalf("status = %q, want %q", got, tt.wantStatus)
			}
			if tt.wantStatus != StatusOrphaned && tt.wantStatus != StatusRunning {
				return
			}
			// Killed from the console: really gone, noted, and killing it
			// again says the same.
			l, err := r.KillAny(procID, "killed from the console")
			if err != nil || l.Status != StatusKilled || l.Why != "killed from the console" {
				t.Fatalf("KillAny = %+v, %v", l, err)
			}
			if !waitKilled(victim, 2*time.Second) {
				t.Error("the process still runs after KillAny")
			}
			again, err := r.KillAny(procID, "again")
			if err != nil || again.Status != StatusKilled || again.Why != "killed from the console" {
				t.Errorf("second KillAny = %+v, %v", again, err)
			}
			if ls, _ := r.List(); len(ls) != 1 || ls[0].Status != StatusKilled {
				t.Errorf("after the kill: %+v", ls)
			}
			if recs, _ := r.Records(); len(recs) != 0 {
				t.Errorf("records left: %+v", recs)
			}
		})
	}
}

func TestKillAnyRefuses(t *testing.T) {
	r := open(t, "rnr_a")
	for _, id := range []string{"proc_none", "../x", "*", ""} {
		if _, err := r.KillAny(id, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("KillAny(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

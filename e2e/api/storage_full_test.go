package api_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// A full file system (a small tmpfs holding the data dir, filled up):
// sends answer 507 storage_full with a plain message and store nothing;
// when space returns the same send is accepted and the run completes.
func TestFullDiskAnswersClearly(t *testing.T) {
	t.Parallel()
	dir := smallDisk(t)
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("Saved."))), e2etest.WithDataDir(dir))
	sid := s.NewSession(t)
	filler := fillDisk(t, dir)

	var e e2etest.ErrorJSON
	sent := 0
	for i := 0; i < 50; i++ { // the WAL may take a few more pages first
		code := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "keep this"}, &e)
		if code == http.StatusInsufficientStorage {
			break
		}
		if code != http.StatusAccepted {
			t.Fatalf("send on a full disk: %d %+v", code, e)
		}
		sent++
	}
	if e.Error.Code != "storage_full" || e.Error.Message == "" {
		t.Fatalf("send on a full disk: %+v, want 507 storage_full", e)
	}
	// Health says so while it lasts (reads still work).
	var h struct {
		Status, Store, Reason string
	}
	e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
	if h.Status != "degraded" || h.Store != "write_failing" || h.Reason == "" {
		t.Fatalf("health on a full disk: %+v", h)
	}
	before := len(s.Runs(t, sid))
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r := s.Send(t, sid, "now there is room")
	s.WaitStatus(t, r.ID, "completed")
	e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
	if h.Store != "ok" {
		t.Fatalf("health after space returned: %+v", h)
	}
	if after := len(s.Runs(t, sid)); after != before+1 {
		t.Fatalf("runs: %d before the refused send's retry, %d after, want one more", before, after)
	}
	t.Logf("%d sends accepted before the disk was full", sent)
}

// The disk fills for a few seconds while runs stream: no run is failed
// for it and none stays running. Health says so while it lasts; once
// space returns each run completes, or is resumable and completes when
// resumed.
func TestFullDiskMidRun(t *testing.T) {
	t.Parallel()
	dir := smallDisk(t)
	// About 4 s of streaming: the disk fills while the runs stream, and a
	// retried run streams its answer again.
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))),
		e2etest.WithDataDir(dir), e2etest.WithRetries(2, 100*time.Millisecond))
	var runs []e2etest.RunJSON
	for range 2 {
		runs = append(runs, s.Send(t, s.NewSession(t), "stream"))
	}
	for _, r := range runs {
		s.WaitRun(t, r.ID, 10*time.Second, "streaming", func(x e2etest.RunJSON) bool { return x.Status == "running" && x.LastEventID > 0 })
	}
	filler := fillDisk(t, dir)
	var h struct{ Status, Store, Reason string }
	deadline := time.Now().Add(15 * time.Second)
	for h.Store != "write_failing" {
		if time.Now().After(deadline) {
			t.Fatalf("health with a full disk and runs streaming = %+v, want write_failing", h)
		}
		time.Sleep(100 * time.Millisecond)
		e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
	}
	if h.Status != "degraded" || h.Reason == "" {
		t.Errorf("health on a full disk = %+v", h)
	}
	// A few seconds full. Health says write_failing while writes fail; a
	// small write SQLite fits in pages it already has may succeed meanwhile
	// and rightly clear it (CI saw "ok" once on a loaded machine), so the
	// polls are counted, not required.
	failing := 0
	for range 15 {
		time.Sleep(200 * time.Millisecond)
		h = struct{ Status, Store, Reason string }{}
		e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
		if h.Store == "write_failing" {
			failing++
		} else if h.Status != "ok" && h.Status != "degraded" {
			t.Fatalf("health while the disk is still full = %+v", h)
		}
	}
	t.Logf("%d of 15 health polls while the disk was full said write_failing", failing)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		got := s.WaitRun(t, r.ID, 60*time.Second, "the run to end or wait for a person",
			func(x e2etest.RunJSON) bool { return x.Terminal || x.Status == "interrupted" })
		if got.Status == "interrupted" {
			if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/resume", nil, nil); c != http.StatusAccepted {
				t.Fatalf("resume of interrupted run %s: %d", r.ID, c)
			}
			got = s.WaitRun(t, r.ID, 60*time.Second, "the resumed run to end", func(x e2etest.RunJSON) bool { return x.Terminal })
		}
		var path []string
		for _, st := range e2etest.OfType[e2etest.StatusJSON](t, s.Journal(t, r.ID), event.RunStatus) {
			path = append(path, st.Status+" ("+st.Reason+")")
		}
		t.Logf("run %s: %s, then %s", r.ID, strings.Join(path, ", "), got.Status)
		if got.Status != "completed" {
			t.Errorf("run %s ended %s, want completed once space returned", r.ID, got.Status)
		}
	}
	e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
	if h.Store != "ok" {
		t.Errorf("health after space returned = %+v", h)
	}
}

// smallDisk mounts an 8 MB tmpfs for a data dir (root only: CI runs as
// root), unmounted when the test ends.
func smallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	// Registered after TempDir's cleanup, so it runs first.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk fills dir's file system and returns the file to remove to
// free it again.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	// dd stops with "No space left on device": that is the point.
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run()
	if _, err := os.Stat(filler); err != nil {
		t.Fatal(err)
	}
	return filler
}

package api_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// A full file system (a small tmpfs holding the data dir, filled up):
// sends answer 507 storage_full with a plain message and store nothing;
// when space returns the same send is accepted and the run completes.
func TestFullDiskAnswersClearly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })

	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("Saved."))), e2etest.WithDataDir(dir))
	sid := s.NewSession(t)
	filler := filepath.Join(dir, "filler")
	// dd stops with "No space left on device": that is the point.
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run()

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

package api

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// The command forms that the approval gate let through in smart mode
// before it read commands with a real shell parser (issue 11) ask or are
// refused on defaults, and nothing of them runs. Their targets here are
// sentinels outside the workspace, not the system: the policy's own tests
// hold the literal forms (`coproc rm -rf /` and the rest).
func TestDangerousFormsAskInSmartMode(t *testing.T) {
	outside := t.TempDir()
	dir := filepath.Join(outside, "keep")
	file := filepath.Join(outside, "keep.txt")
	touched := filepath.Join(outside, "touched")
	empty := filepath.Join(outside, "empty")
	for _, d := range []string{dir, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{file, filepath.Join(dir, "a.txt")} {
		if err := os.WriteFile(f, []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commands := []string{
		"coproc rm -rf " + dir,
		fmt.Sprintf("x='a[$(touch %s)]'; echo $((x))", touched),
		fmt.Sprintf("x='$(touch %s)'; echo ${x@P}", touched),
		fmt.Sprintf("rsync -a --delete %s/ %s/", empty, dir),
		"truncate -s 0 " + file,
	}
	var sc []demo.Scenario
	for i, c := range commands {
		args := fmt.Sprintf(`{"command":%q}`, c)
		sc = append(sc, e2etest.Scenario(fmt.Sprintf("form-%d", i), e2etest.Turn(e2etest.Call("run_command", args)), e2etest.Turn(e2etest.Text("Done."))))
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(sc...)) // the default approval mode: smart

	for i, c := range commands {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := s.Send(t, s.NewSession(t), fmt.Sprintf("form-%d", i))
			got := s.WaitRun(t, r.ID, 30*time.Second, "awaiting approval or finished", func(r e2etest.RunJSON) bool {
				return r.Status == "awaiting_approval" || r.Status == "completed"
			})
			if got.Status == "awaiting_approval" {
				for _, q := range s.Pending(t) {
					if q.RunID == r.ID {
						if code := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "deny"}, nil); code != http.StatusOK {
							t.Fatalf("deny: %d", code)
						}
					}
				}
				s.WaitStatus(t, r.ID, "completed")
			}
			evs := s.Journal(t, r.ID)
			asked := e2etest.CountType(evs, event.ApprovalRequested) == 1
			for _, d := range e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone) {
				if d.Status != event.ToolDenied {
					t.Errorf("%q: tool.done %s (%s), want denied", c, d.Status, d.Output)
				}
			}
			if e2etest.CountType(evs, event.ToolUpdated) != 0 {
				t.Errorf("%q: the command started executing", c)
			}
			t.Logf("%q: asked=%v", c, asked)
		})
	}
	if _, err := os.Stat(touched); err == nil {
		t.Error("a command substitution hidden in arithmetic or a prompt expansion ran")
	}
	for _, f := range []string{file, filepath.Join(dir, "a.txt")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "precious\n" {
			t.Errorf("%s = %q, %v: a dangerous command changed it", f, b, err)
		}
	}
}

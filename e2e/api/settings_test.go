package api

// Settings (issue 16, h16-providers) take effect without a restart.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
)

// The approval mode changed in the console applies to the next run: under
// the server's manual mode a command waits for a person; after PATCH
// /api/settings {"approval_mode":"off"} the same command runs unasked.
func TestSettingsApprovalModeLive(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("first", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo one"}`)), e2etest.Turn(e2etest.Text("done one"))),
		e2etest.Scenario("second", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo two"}`)), e2etest.Turn(e2etest.Text("done two"))),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r1 := s.Send(t, sid, "first")
	st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	q := s.Pending(t)[0]
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	s.WaitRun(t, r1.ID, 20*time.Second, "the first run to end", func(r e2etest.RunJSON) bool { return r.Terminal })

	var out struct {
		Effective struct {
			ApprovalMode string `json:"approval_mode"`
		} `json:"effective"`
	}
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/settings", map[string]any{"approval_mode": "off"}, &out); c != http.StatusOK || out.Effective.ApprovalMode != "off" {
		t.Fatalf("patch settings: %d %+v", c, out)
	}
	r2 := s.Send(t, sid, "second")
	done := s.WaitRun(t, r2.ID, 20*time.Second, "the second run to end", func(r e2etest.RunJSON) bool { return r.Terminal || len(r.PendingRequestIDs) > 0 })
	if done.Status != "completed" || len(done.PendingRequestIDs) > 0 {
		t.Fatalf("second run: %s, pending %v", done.Status, done.PendingRequestIDs)
	}
	for _, ev := range s.Journal(t, r2.ID) {
		if ev.Type == event.ApprovalRequested {
			t.Fatal("the second run asked for approval after the mode was set off")
		}
	}
}

// The key sealing provider keys is redacted like a key: a command that
// prints the key file encoded gives the model and the journal
// "[redacted]", not the key.
func TestSecretKeyFileRedacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, secretbox.KeyFileName)
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("leak", e2etest.Turn(e2etest.Call("run_command", `{"command":"base64 -w0 `+keyFile+`; echo; xxd -p -c 64 `+keyFile+`"}`)), e2etest.Turn(e2etest.Text("done"))),
	), e2etest.WithDataDir(dir), e2etest.WithApprovalMode("off"))
	// Adding a provider with a key makes the key file (disabled: runs stay
	// on the demo model).
	if c := e2etest.Do(t, "POST", s.URL+"/api/providers", map[string]any{"name": "hosted", "kind": "openai",
		"base_url": "http://127.0.0.1:1/v1", "api_key": "sk-redaction-test-key-000000000-cafe", "enabled": false}, nil); c != http.StatusCreated {
		t.Fatalf("add provider: %d", c)
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	run := s.Send(t, s.NewSession(t), "leak")
	s.WaitRun(t, run.ID, 20*time.Second, "the run to end", func(r e2etest.RunJSON) bool { return r.Terminal })
	journal, _ := json.Marshal(s.Journal(t, run.ID))
	if !strings.Contains(string(journal), "[redacted]") {
		t.Fatalf("the command's output was not redacted (did it run?): %.2000s", journal)
	}
	for _, form := range []string{base64.StdEncoding.EncodeToString(raw), hex.EncodeToString(raw)} {
		if strings.Contains(string(journal), form) || strings.Contains(s.Logs.String(), form) {
			t.Errorf("the key file's contents (%s…) reached the journal or the log", form[:6])
		}
	}
}

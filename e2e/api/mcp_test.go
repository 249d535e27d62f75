package api

// MCP servers wired into runs (issue 18, h18-mcpwire): the npm reference
// server @modelcontextprotocol/server-everything (installed by `make
// peers`) is configured through the API; a scripted model calls its echo
// and image tools (allowed by the server's rules) and the results land in
// the transcript; its process is killed mid-session and the next call
// works; a tool left at "ask" waits for a person.

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// everythingCommand is node and the server's script; a missing one skips
// the test outside CI and fails it under CI=true.
func everythingCommand(t *testing.T) (string, string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI installs it: make peers)", why)
		}
		t.Skipf("%s: run `make peers`", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	script, err := filepath.Abs("../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		missing("@modelcontextprotocol/server-everything is not installed")
	}
	return node, script
}

type mcpServerJSON struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	PID       int    `json:"pid"`
	LastError string `json:"last_error"`
	Env       map[string]string
	Tools     []struct {
		Name, Verdict string
	} `json:"tools"`
}

func TestMCPServerToolsInRuns(t *testing.T) {
	t.Parallel()
	node, script := everythingCommand(t)
	const secretValue = "tok-Zq8xW2pL0mN4vB7c"
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("second",
			e2etest.Turn(e2etest.Call("mcp__everything__echo", `{"message":"after the crash"}`)),
			e2etest.Turn(e2etest.Text("echoed again"))),
		e2etest.Scenario("sum",
			e2etest.Turn(e2etest.Call("mcp__everything__get-sum", `{"a":2,"b":3}`)),
			e2etest.Turn(e2etest.Text("summed"))),
		e2etest.Scenario("",
			e2etest.Turn(e2etest.Call("mcp__everything__echo", `{"message":"hello MCP"}`)),
			e2etest.Turn(e2etest.Call("mcp__everything__get-tiny-image", `{}`)),
			e2etest.Turn(e2etest.Text("done")))))

	var srv mcpServerJSON
	body := map[string]any{"name": "everything", "transport": "stdio", "command": node, "args": []string{script, "stdio"},
		"dir": t.TempDir(), "env": map[string]string{"EVERYTHING_TOKEN": secretValue}, "start_timeout_ms": 30000, "call_timeout_ms": 30000,
		"tool_policies": map[string]string{"echo": "allow", "get-tiny-image": "allow"}}
	if c := e2etest.Do(t, "POST", s.URL+"/api/mcp/servers", body, &srv); c != http.StatusCreated {
		t.Fatalf("create: %d", c)
	}
	if srv.Env["EVERYTHING_TOKEN"] != "tok…vB7c" {
		t.Fatalf("env shown as %q, want it masked", srv.Env["EVERYTHING_TOKEN"])
	}

	sid := s.NewSession(t)
	run := s.Send(t, sid, "use the MCP tools")
	s.WaitStatus(t, run.ID, "completed")
	done := toolDones(t, s, run.ID)
	if d := done["mcp__everything__echo"]; d.Status != event.ToolOK || !strings.Contains(d.Output, "hello MCP") {
		t.Fatalf("echo: %+v", d)
	}
	img := done["mcp__everything__get-tiny-image"]
	var data struct {
		Server  string `json:"server"`
		Content []struct {
			Type, MIME, Data string
		} `json:"content"`
	}
	if err := json.Unmarshal(img.Result, &data); err != nil || img.Status != event.ToolOK || data.Server != "everything" {
		t.Fatalf("image result %s (%v), status %s", img.Result, err, img.Status)
	}
	hasImage := false
	for _, p := range data.Content {
		hasImage = hasImage || (p.Type == "image" && p.MIME == "image/png" && p.Data != "")
	}
	if !hasImage || !strings.Contains(img.Output, "[image image/png") {
		t.Fatalf("no inline image in %s; output %q", img.Result, img.Output)
	}

	// Kill the server's process (and its group) mid-session: the next
	// run's call works (the manager restarts it).
	if c := e2etest.Do(t, "GET", s.URL+"/api/mcp/servers/"+srv.ID, nil, &srv); c != http.StatusOK || srv.State != "ready" || srv.PID == 0 {
		t.Fatalf("before the kill: %d %+v", c, srv)
	}
	if len(srv.Tools) == 0 {
		t.Fatalf("no tools listed: %+v", srv)
	}
	oldPID := srv.PID
	if err := syscall.Kill(-oldPID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the server's group: %v", err)
	}
	run = s.Send(t, sid, "second call please")
	s.WaitStatus(t, run.ID, "completed")
	if d := toolDones(t, s, run.ID)["mcp__everything__echo"]; d.Status != event.ToolOK || !strings.Contains(d.Output, "after the crash") {
		t.Fatalf("echo after the kill: %+v", d)
	}
	e2etest.Do(t, "GET", s.URL+"/api/mcp/servers/"+srv.ID, nil, &srv)
	if srv.PID == oldPID || srv.State != "ready" {
		t.Fatalf("after the kill: %+v, want ready with a new process", srv)
	}

	// get-sum is at the server's default, ask: the run waits for a person.
	run = s.Send(t, sid, "sum two numbers")
	r := s.WaitRun(t, run.ID, 30*time.Second, "an approval request", func(r e2etest.RunJSON) bool { return len(r.PendingRequestIDs) > 0 })
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+r.PendingRequestIDs[0]+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("approve: %d", c)
	}
	s.WaitStatus(t, run.ID, "completed")
	if d := toolDones(t, s, run.ID)["mcp__everything__get-sum"]; d.Status != event.ToolOK || !strings.Contains(d.Output, "5") {
		t.Fatalf("get-sum: %+v", d)
	}
	if leaks := e2etest.SecretLeaks(s.Logs.String(), []string{secretValue}); len(leaks) > 0 {
		t.Fatalf("the server log holds the env secret: %v\n%s", leaks, s.Logs.String())
	}
	// The database keeps it sealed only.
	if rows, _ := e2etest.ScanDB(t, app.DatabasePath(s.DataDir), []string{secretValue}); rows == 0 {
		t.Fatal("the database scan read no rows")
	}
}

// toolDones are a run's tool.done payloads by tool name (the last one).
func toolDones(t *testing.T, s *e2etest.Server, runID string) map[string]event.ToolDonePayload {
	t.Helper()
	out := map[string]event.ToolDonePayload{}
	for _, e := range s.Journal(t, runID) {
		if e.Type == event.ToolDone {
			p := e2etest.Payload[event.ToolDonePayload](t, e)
			out[p.Name] = p
		}
	}
	return out
}

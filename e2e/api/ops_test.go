package api

// The operator's console over the whole server (issue 16, h16-ops): a
// scripted background process and a person's terminal are listed, the
// process's output followed live and the process killed with its group.

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestConsoleProcesses(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	command := `echo $$ > bg.pid; sleep 600 & echo $! > bgjob.pid; i=0; while :; do echo line-$i; i=$((i+1)); sleep 0.1; done`
	args, _ := json.Marshal(map[string]any{"command": command, "background": true})
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("run_command", string(args))),
		e2etest.Turn(e2etest.Text("running")))),
		e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	run := s.Send(t, sid, "start it")
	s.WaitStatus(t, run.ID, "completed")
	pid := readPIDFile(t, filepath.Join(ws, "bg.pid"))
	job := readPIDFile(t, filepath.Join(ws, "bgjob.pid"))

	// A person's terminal too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/api/sessions/"+sid+"/terminal", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()

	type proc struct {
		ID, Kind, Status, SessionID, RunID string
		PID                                int
		Output                             bool
	}
	list := func() map[string]proc {
		var out struct {
			Processes []struct {
				ID        string `json:"id"`
				Kind      string `json:"kind"`
				Status    string `json:"status"`
				SessionID string `json:"session_id"`
				RunID     string `json:"run_id"`
				PID       int    `json:"pid"`
				Output    bool   `json:"output"`
			} `json:"processes"`
		}
		if code := e2etest.Do(t, "GET", s.URL+"/api/processes", nil, &out); code != http.StatusOK {
			t.Fatalf("GET /api/processes: %d", code)
		}
		m := map[string]proc{}
		for _, p := range out.Processes {
			m[p.Kind+":"+strconv.Itoa(p.PID)] = proc{p.ID, p.Kind, p.Status, p.SessionID, p.RunID, p.PID, p.Output}
		}
		return m
	}
	var bg proc
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := list()
		var term bool
		for _, p := range m {
			term = term || (p.Kind == "terminal" && p.Status == "running" && p.SessionID == sid)
		}
		bg = m["agent:"+strconv.Itoa(pid)]
		if term && bg.Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want a running terminal and the background process (pid %d): %+v", pid, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bg.RunID != run.ID || bg.SessionID != sid || !bg.Output {
		t.Errorf("listed %+v", bg)
	}

	// Followed live: lines written after the stream opened arrive.
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/processes/"+bg.ID+"/log?follow=true&tail=0", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("follow: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	var got strings.Builder
	for strings.Count(got.String(), "line-") < 5 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var chunk struct {
				Output string `json:"output"`
			}
			_ = json.Unmarshal([]byte(data), &chunk)
			got.WriteString(chunk.Output)
		}
	}
	if strings.Count(got.String(), "line-") < 5 {
		t.Fatalf("followed %q", got.String())
	}

	if code := e2etest.Do(t, "POST", s.URL+"/api/processes/"+bg.ID+"/kill", nil, nil); code != http.StatusOK {
		t.Fatalf("kill: %d", code)
	}
	for _, p := range []int{pid, job} {
		for end := time.Now().Add(5 * time.Second); running(p); {
			if time.Now().After(end) {
				t.Fatalf("pid %d still runs after the kill", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The stream ends with the process.
	var ended bool
	for sc.Scan() {
		ended = ended || sc.Text() == "event: end"
	}
	if !ended {
		t.Error("the followed log did not end with an end event")
	}
	if p := list()["agent:"+strconv.Itoa(pid)]; p.Status != "killed" {
		t.Errorf("listed after the kill: %+v", p)
	}
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

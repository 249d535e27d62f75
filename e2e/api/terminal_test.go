package api

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/app"
)

// TestTerminalServerStop: a server that stops kills its terminals' shells
// (and what they started), tells the client why, and journals
// terminal.closed before its journal writer stops.
func TestTerminalServerStop(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := e2etest.StartServer(t, e2etest.Scenarios(), e2etest.WithWorkspace(ws))
	sid := s.NewSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/api/sessions/"+sid+"/terminal", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var mu sync.Mutex
	var msgs []map[string]any
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageText {
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				mu.Lock()
				msgs = append(msgs, m)
				mu.Unlock()
			}
		}
	}()
	if err := c.Write(ctx, websocket.MessageBinary, []byte("echo $$ > shell.pid; sleep 600 & echo $! > job.pid\n")); err != nil {
		t.Fatal(err)
	}
	pids := []int{readPIDFile(t, filepath.Join(ws, "shell.pid")), readPIDFile(t, filepath.Join(ws, "job.pid"))}
	s.Stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the socket outlived the server")
	}
	mu.Lock()
	var exit map[string]any
	for _, m := range msgs {
		if m["type"] == "exit" {
			exit = m
		}
	}
	mu.Unlock()
	if exit == nil || exit["reason"] != "server stopping" {
		t.Errorf("the client was not told the server stopped: %v", msgs)
	}
	for _, pid := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z ") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d outlived the server", pid)
		}
	}
	_, dump := e2etest.ScanDB(t, app.DatabasePath(s.DataDir), nil)
	if !strings.Contains(dump, "terminal.closed") || !strings.Contains(dump, "server stopping") {
		t.Errorf("terminal.closed is not journaled")
	}
	if !strings.Contains(s.Logs.String(), `msg="terminal closed"`) {
		t.Errorf("the log does not record the terminal's end")
	}
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

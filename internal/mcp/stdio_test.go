package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// everythingServer returns the stdio configuration of the npm reference
// server @modelcontextprotocol/server-everything, which `make peers`
// installs under e2e/peers (and .ci/run through make test). Outside CI a
// missing node or package skips the test; under CI=true it fails it.
func everythingServer(t *testing.T) ServerConfig {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI installs it: make peers)", why)
		}
		t.Skipf("%s: run `make peers` to install the reference MCP servers", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	script, err := filepath.Abs("../../e2e/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		missing("@modelcontextprotocol/server-everything is not installed")
	}
	return ServerConfig{
		Name: "everything", Transport: TransportStdio,
		Command: node, Args: []string{script, "stdio"},
		Env:          []string{"EVERYTHING_TEST_SECRET=do-not-log-this-value"},
		Dir:          t.TempDir(),
		StartTimeout: 30 * time.Second, CallTimeout: 30 * time.Second,
	}
}

func TestStdioEverythingServer(t *testing.T) {
	cfg := everythingServer(t)
	m, logs := newTestManager(t, cfg)
	ctx := t.Context()

	tools, err := NewTools(ctx, m)
	if err != nil {
		t.Fatalf("NewTools: %v", err)
	}
	byName := toolsByName(t, tools)
	for _, name := range []string{"mcp__everything__echo", "mcp__everything__get-tiny-image", "mcp__everything__get-sum"} {
		tl, ok := byName[name]
		if !ok {
			t.Fatalf("%s missing; tools: %v", name, byName)
		}
		var schema map[string]any
		if err := json.Unmarshal(tl.Spec().Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s", name, tl.Spec().Parameters)
		}
	}
	st := stateOf(t, m, "everything")
	if st.State != StateReady || st.PID == 0 {
		t.Fatalf("state %+v, want ready with a process", st)
	}

	echo := func() {
		t.Helper()
		res, err := byName["mcp__everything__echo"].Run(ctx, tool.Env{}, json.RawMessage(`{"message":"hello MCP"}`))
		if err != nil || res.Status != event.ToolOK || res.Output != "Echo: hello MCP" {
			t.Fatalf("echo: %+v %v", res, err)
		}
	}
	echo()

	res, err := byName["mcp__everything__get-tiny-image"].Run(ctx, tool.Env{}, json.RawMessage(`{}`))
	if err != nil || res.Status != event.ToolOK {
		t.Fatalf("get-tiny-image: %+v %v", res, err)
	}
	data := res.Data.(ResultData)
	var image *DataPart
	for i := range data.Content {
		if data.Content[i].Type == PartImage {
			image = &data.Content[i]
		}
	}
	if image == nil {
		t.Fatalf("no image part in %+v", data)
	}
	png, err := base64.StdEncoding.DecodeString(image.Data)
	if err != nil || image.MIME != "image/png" || !strings.HasPrefix(string(png), "\x89PNG") || image.Size != len(png) {
		t.Fatalf("image part %s %d bytes (%v): want a PNG", image.MIME, image.Size, err)
	}
	if !strings.Contains(res.Output, "[image image/png") {
		t.Errorf("the model reads %q: want the image described", res.Output)
	}

	// Resources and prompts, for a person to insert into a message.
	resources, err := m.ListResources(ctx, "everything")
	if err != nil || len(resources) == 0 {
		t.Fatalf("ListResources: %d, %v", len(resources), err)
	}
	var doc *ResourceInfo
	for i := range resources {
		if strings.HasPrefix(resources[i].URI, "demo://resource/static/document/") {
			doc = &resources[i]
		}
	}
	if doc == nil {
		t.Fatalf("no static document among %+v", resources)
	}
	parts, err := m.ReadResource(ctx, "everything", doc.URI)
	if err != nil || len(parts) == 0 || parts[0].Type != PartResource || parts[0].URI != doc.URI || (parts[0].Text == "" && len(parts[0].Data) == 0) {
		t.Fatalf("ReadResource(%s): %+v %v", doc.URI, parts, err)
	}
	prompts, err := m.ListPrompts(ctx, "everything")
	if err != nil {
		t.Fatalf("ListPrompts: %v", err)
	}
	var args *PromptInfo
	for i := range prompts {
		if prompts[i].Name == "args-prompt" {
			args = &prompts[i]
		}
	}
	if args == nil || len(args.Arguments) != 2 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required || args.Arguments[1].Required {
		t.Fatalf("args-prompt: %+v in %+v", args, prompts)
	}
	msgs, err := m.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Oslo"})
	if err != nil || len(msgs) != 1 || msgs[0].Role != "user" || msgs[0].Part.Text != "What's weather in Oslo?" {
		t.Fatalf("GetPrompt: %+v %v", msgs, err)
	}

	// Kill the server: it is restarted, and the next call works.
	pid := st.PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st = stateOf(t, m, "everything")
		if st.PID != pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed server is still reported running: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	echo()
	st = stateOf(t, m, "everything")
	if st.State != StateReady || st.PID == 0 || st.PID == pid || st.Restarts != 1 || st.LastError == "" {
		t.Fatalf("after the restart: %+v, want ready in a new process, one restart, the crash as last error", st)
	}
	if strings.Contains(logs.String()+st.LastError, "do-not-log-this-value") {
		t.Errorf("an environment value was logged:\n%s", logs)
	}

	// Close stops the process.
	_ = m.Close()
	if err := syscall.Kill(st.PID, 0); err == nil {
		// The SDK waits for the process after closing its stdin; give a
		// slow machine a moment before calling it a leak.
		time.Sleep(3 * time.Second)
		if err := syscall.Kill(st.PID, 0); err == nil {
			t.Errorf("process %d still runs after Close", st.PID)
		}
	}
}

func TestStdioStartFailure(t *testing.T) {
	cases := []struct {
		name, script, want string
		env                []string
	}{
		{"exits at once", "echo 'cannot find module x' >&2; exit 3", "cannot find module x", nil},
		// Never answers initialize: the start timeout ends it, and the
		// process is stopped (SIGTERM after the 2 s grace).
		{"never answers", "exec sleep 60", "deadline exceeded", nil},
		{"not found", "exec /nonexistent/mcp-server", "/nonexistent/mcp-server", nil},
		// A configured secret the server prints is masked in the state.
		{"prints its secret", `echo "token $API_TOKEN refused" >&2; exit 1`, "token " + secret.Mask + " refused", []string{"API_TOKEN=supersecret-value-9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewManager(Options{BackoffBase: 10 * time.Second}, []ServerConfig{{
				Name: "broken", Transport: TransportStdio,
				Command: "sh", Args: []string{"-c", c.script}, Env: c.env,
				StartTimeout: 500 * time.Millisecond,
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = m.ListTools(t.Context(), "broken")
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("ListTools: %v, want ErrUnavailable", err)
			}
			st := stateOf(t, m, "broken")
			if st.State != StateFailed || !strings.Contains(st.LastError, c.want) || st.PID != 0 || strings.Contains(st.LastError+err.Error(), "supersecret") {
				t.Fatalf("state %+v: want failed with %q", st, c.want)
			}
			// Within its 10 s backoff, a call whose deadline comes sooner
			// fails at once with the last error instead of waiting it out.
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			if _, err := m.Call(ctx, "broken", "x", nil); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call in backoff: %v, want ErrUnavailable with the last error", err)
			}
		})
	}
}

package processes

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
)

// authed talks to a server that requires a token.
type authed struct {
	t     *testing.T
	url   string
	token string
	seen  strings.Builder // every answer body, for the leak scan
}

func (c *authed) do(method, path string, body any, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	c.seen.Write(raw)
	c.seen.WriteByte('\n')
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %d %q: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// waitPending waits for the run's pending approval and returns it.
func (c *authed) waitPending(runID string) e2etest.RequestJSON {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out struct {
			Requests []e2etest.RequestJSON `json:"requests"`
		}
		c.do("GET", "/api/requests?status=pending", nil, &out)
		for _, q := range out.Requests {
			if q.RunID == runID {
				return q
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %s filed no approval request", runID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toolCallSSE is a Chat Completions stream whose answer is one tool call.
func toolCallSSE(id, name string, args any) []byte {
	a, _ := json.Marshal(args)
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-secrets", "object": "chat.completion.chunk", "created": 1,
			"model": "gpt-4o", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		return "data: " + string(b) + "\n\n"
	}
	return []byte(chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": string(a)}}}}, nil) +
		chunk(map[string]any{}, "tool_calls") + "data: [DONE]\n\n")
}

// Issue 12, "secrets stay secret from the agent too". A real `caduceus
// serve` holds a token, provider keys (from the environment, and from a
// variable the config file names) and an unrelated secret. A model (the
// fake OpenAI server, so every request it is sent can be read) asks, in
// the default smart mode, to read the server's environment through
// /proc/$PPID/environ and /proc/<pid>/environ (asked, approved once to
// prove that even then nothing leaks; a third is denied), to run env and
// printenv (they run), to read /proc/<pid>/environ with read_file
// (refused) and to print a workspace file holding the keys (redacted).
// No key, nor any 8-character piece of one, appears in a tool result, the
// transcript, a journal row, a file of the data dir, the server's log or a
// request to a provider — and the server's own /proc/<pid>/environ, read
// by this test, holds none.
func TestSecretsStaySecretFromTheAgent(t *testing.T) {
	const (
		token        = "tok-accept-7c1e9a3f5b2d4680-zz"
		openaiKey    = "sk-accept-openai-0a1b2c3d4e5f6789"
		anthropicKey = "sk-ant-accept-9f8e7d6c5b4a3210"
		gatewayKey   = "gw-accept-5a6b7c8d9e0f1a2b3c"
		githubToken  = "ghp_accept_1q2w3e4r5t6y7u8i9o0p"
	)
	secrets := []string{token, openaiKey, anthropicKey, gatewayKey, githubToken}

	gw := openaitest.NewServer() // the model driving the run: config.json, key from GATEWAY_LLM
	defer gw.Close()
	gw.RequireKey(gatewayKey)
	oa := openaitest.NewServer() // OPENAI_API_KEY's provider, for a second run
	defer oa.Close()
	oa.RequireKey(openaiKey)
	oa.Enqueue(openaitest.Stream(openaitest.Fixture("text")))

	dataDir, ws := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf(`{"providers": {"gateway": {"type": "openai", "base_url": %q, "api_key_env": "GATEWAY_LLM", "models": ["gpt-4o"]}}}`, gw.BaseURL())
	if err := os.WriteFile(filepath.Join(dataDir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dotenv := "OPENAI_API_KEY=" + openaiKey + "\nCADUCEUS_TOKEN=" + token + "\nGATEWAY=" + gatewayKey + "\n"
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("the demo model is not used"))))
	p := e2etest.StartServeEnv(t, binary, []string{
		"CADUCEUS_TOKEN=" + token,
		"OPENAI_API_KEY=" + openaiKey, "OPENAI_BASE_URL=" + oa.BaseURL(),
		"ANTHROPIC_API_KEY=" + anthropicKey,
		"GATEWAY_LLM=" + gatewayKey,
		"GITHUB_TOKEN=" + githubToken,
	}, dataDir, ws, sp)
	pid := p.Child.PID()
	c := &authed{t: t, url: p.URL, token: token}

	// The re-executed server keeps its pid and holds no secret in its
	// environment, whoever reads it.
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if l := e2etest.SecretLeaks(string(environ), secrets); len(l) > 0 || !strings.Contains(string(environ), "CADUCEUS_SECRETS_FD=") {
		t.Fatalf("the server's /proc/%d/environ holds %v (re-executed: %v)", pid, l, strings.Contains(string(environ), "CADUCEUS_SECRETS_FD="))
	}
	// The in-process runner registers once the server runs, a moment
	// after it listens.
	var health e2etest.HealthJSON
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		health = e2etest.HealthJSON{}
		c.do("GET", "/api/health", nil, &health)
		if len(health.Runners) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(health.Runners) != 1 || health.Runners[0].PID != pid {
		t.Fatalf("health runners %+v, want one with the pid the process was started as (%d)", health.Runners, pid)
	}

	procEnv := "/proc/" + strconv.Itoa(pid) + "/environ"
	calls := []struct {
		id, tool string
		args     map[string]any
		answer   string // "" runs without asking
	}{
		{"call_ppid", "run_command", map[string]any{"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'"}, "once"},
		{"call_env", "run_command", map[string]any{"command": "env"}, ""},
		{"call_printenv", "run_command", map[string]any{"command": "printenv"}, ""},
		{"call_read", "read_file", map[string]any{"path": procEnv}, ""},
		{"call_tr", "run_command", map[string]any{"command": "tr '\\0' '\\n' < " + procEnv}, "once"},
		{"call_xargs", "run_command", map[string]any{"command": "xargs -0 -n1 -a /proc/$PPID/environ echo"}, "deny"},
		{"call_dotenv", "run_command", map[string]any{"command": "cat .env"}, ""},
	}
	for _, cl := range calls {
		gw.Enqueue(openaitest.Stream(toolCallSSE(cl.id, cl.tool, cl.args)))
	}
	gw.Enqueue(openaitest.Stream(openaitest.Fixture("text")))

	var sess e2etest.SessionJSON
	if code := c.do("POST", "/api/sessions", map[string]any{}, &sess); code != http.StatusCreated {
		t.Fatalf("create session: %d", code)
	}
	var r e2etest.RunJSON
	c.do("POST", "/api/sessions/"+sess.ID+"/messages", map[string]any{"content": "show me your environment", "model": "gateway/gpt-4o"}, &r)
	for _, cl := range calls {
		if cl.answer == "" {
			continue
		}
		q := c.waitPending(r.ID)
		var prompt struct {
			Action  string   `json:"action"`
			Risk    string   `json:"risk"`
			Choices []string `json:"choices"`
		}
		_ = json.Unmarshal(q.Prompt, &prompt)
		if !strings.Contains(prompt.Action, cl.args["command"].(string)) || prompt.Risk != "dangerous_command" ||
			strings.Join(prompt.Choices, ",") != "once,deny" {
			t.Fatalf("approval for %s: %s", cl.id, q.Prompt)
		}
		if code := c.do("POST", "/api/requests/"+q.ID+"/respond", map[string]string{"choice": cl.answer}, nil); code != http.StatusOK {
			t.Fatalf("respond %s to %s: %d", cl.answer, cl.id, code)
		}
	}
	var final e2etest.RunJSON
	deadline := time.Now().Add(30 * time.Second)
	for c.do("GET", "/api/runs/"+r.ID, nil, &final); !final.Terminal; c.do("GET", "/api/runs/"+r.ID, nil, &final) {
		if time.Now().After(deadline) {
			t.Fatalf("run still %s", final.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if final.Status != "completed" {
		t.Fatalf("run %s: %+v", final.Status, final.Error)
	}
	// A second run on OPENAI_API_KEY's provider: that key arrived intact too.
	var r2 e2etest.RunJSON
	c.do("POST", "/api/sessions/"+sess.ID+"/messages", map[string]any{"content": "and now?", "model": "openai/gpt-4o"}, &r2)
	evs2 := e2etest.OpenStream(t, p.URL+"/api/runs/"+r2.ID+"/events", map[string]string{"Authorization": "Bearer " + token}).Drain(t)
	if d := e2etest.Payload[event.RunDonePayload](t, evs2[len(evs2)-1]); d.Status != "completed" {
		t.Fatalf("the OPENAI_API_KEY run: %+v", d)
	}

	// Every tool result, as journaled.
	evs := e2etest.OpenStream(t, p.URL+"/api/runs/"+r.ID+"/events", map[string]string{"Authorization": "Bearer " + token}).Drain(t)
	results := map[string]event.ToolDonePayload{}
	var journal strings.Builder
	for _, e := range append(evs, evs2...) {
		b, _ := json.Marshal(e)
		journal.Write(b)
		if e.Type == event.ToolDone {
			d := e2etest.Payload[event.ToolDonePayload](t, e)
			results[d.ToolCallID] = d
		}
	}
	for _, want := range []struct {
		id, status, has string
	}{
		{"call_ppid", "ok", "CADUCEUS_SECRETS_FD="}, // the server's environment, read and clean
		{"call_env", "ok", "PATH="},
		{"call_printenv", "ok", "HOME="},
		{"call_read", "denied", "outside the workspace"},
		{"call_tr", "ok", "CADUCEUS_SECRETS_FD="},
		{"call_xargs", "denied", "denied"},
		{"call_dotenv", "ok", "OPENAI_API_KEY=[redacted]"},
	} {
		d, ok := results[want.id]
		if !ok || d.Status != want.status || !strings.Contains(d.Output, want.has) {
			t.Errorf("%s: %s %q, want %s with %q", want.id, d.Status, d.Output, want.status, want.has)
		}
		if l := e2etest.SecretLeaks(d.Output+string(d.Result), secrets); len(l) > 0 {
			t.Errorf("%s's result holds %v", want.id, l)
		}
		// Nothing but the workspace file needed redacting: the environment
		// itself held no secret, and commands got no secret variable.
		if want.id != "call_dotenv" && strings.Contains(d.Output, "[redacted]") {
			t.Errorf("%s needed redaction: %q", want.id, d.Output)
		}
	}
	for _, id := range []string{"call_env", "call_printenv", "call_ppid"} {
		for _, name := range []string{"GITHUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GATEWAY_LLM", "CADUCEUS_TOKEN"} {
			if strings.Contains(results[id].Output, name+"=") {
				t.Errorf("%s shows %s", id, name)
			}
		}
	}

	// The transcript.
	c.do("GET", "/api/sessions/"+sess.ID+"/messages", nil, nil)

	// Every request to a provider: the tool results went to the model,
	// redacted, and nothing else carried a key.
	var bodies strings.Builder
	for _, s := range []*openaitest.Server{gw, oa} {
		for _, rq := range s.Requests() {
			bodies.Write(rq.Raw)
			bodies.WriteByte('\n')
		}
	}
	if n := len(gw.Requests()); n != len(calls)+1 {
		t.Errorf("%d requests to the gateway, want %d", n, len(calls)+1)
	}
	if !strings.Contains(bodies.String(), `OPENAI_API_KEY=[redacted]`) || !strings.Contains(bodies.String(), "CADUCEUS_SECRETS_FD=") {
		t.Error("the provider requests lack the tool results: the scan proves nothing")
	}
	if l := e2etest.SecretLeaks(bodies.String(), secrets); len(l) > 0 {
		t.Errorf("a request to a provider holds %v", l)
	}

	if err := p.Stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	seen := c.seen.String() + journal.String()
	if !strings.Contains(seen, "OPENAI_API_KEY=[redacted]") || !strings.Contains(seen, "CADUCEUS_SECRETS_FD=") {
		t.Fatal("the answers and events lack the runs' tool results: the scan proves nothing")
	}
	if l := e2etest.SecretLeaks(seen, secrets); len(l) > 0 {
		t.Errorf("API answers, the transcript or events hold %v", l)
	}
	logs := p.Child.Log(t)
	if !strings.Contains(logs, "run finished") {
		t.Fatalf("no server log captured: the scan proves nothing:\n%s", logs)
	}
	if l := e2etest.SecretLeaks(logs, secrets); len(l) > 0 {
		t.Errorf("the server log holds %v", l)
	}
	rows, dump := e2etest.ScanDB(t, filepath.Join(dataDir, "caduceus.db"), secrets)
	if rows == 0 || !strings.Contains(dump, "OPENAI_API_KEY=[redacted]") {
		t.Fatalf("the database scan saw %d rows without the runs' results: it proves nothing", rows)
	}
	e2etest.ScanFiles(t, dataDir, secrets)
}

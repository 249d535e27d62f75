package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic/anthropictest"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
)

// The tests in this file run real agent turns through the real provider
// clients against the fake OpenAI and Anthropic servers, which speak the
// real streaming wire formats and reject a malformed conversation the way
// the real APIs do.

// fakeCall is one tool call a fake model makes.
type fakeCall struct{ id, name, args string }

// llmFake is one provider's fake server, seen the same way by every test.
type llmFake struct {
	name  string // provider name, the first half of a model ref
	model string
	env   map[string]string // what configures Caduceus to use the fake
	// answer is the text the fake's "text" fixture streams.
	answer string

	stream func(sse []byte)                      // queue a stream
	slow   func(sse []byte, delay time.Duration) // queue a stream paced by delay
	cut    func(sse []byte, events int)          // queue a stream cut after events
	fail   func(status int, msg string)          // queue an error reply (Retry-After: 0)

	fixture func(name string) []byte
	text    func(fragments ...string) []byte // a text answer in the wire format
	tools   func(calls ...fakeCall) []byte   // a tool-calling answer in the wire format

	// bodies are the raw model requests received, in order.
	bodies func() [][]byte
	// results returns, from a model request, the tool results that answer
	// a call of the assistant message just before them: call id → content.
	results func(t *testing.T, body []byte) map[string]string
	// gone waits until the fake saw a client leave mid-stream.
	gone func(t *testing.T)
	// creds are the credentials of every request received, in order.
	creds func() []string
}

func (f *llmFake) ref() string { return f.name + "/" + f.model }

// newOpenAIFake starts a fake Chat Completions server that accepts only
// accept as its key; Caduceus is configured with key.
func newOpenAIFake(t *testing.T, key, accept string) *llmFake {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	srv.RequireKey(accept)
	srv.SetModels("gpt-4o-mini", "gpt-4o")
	f := &llmFake{
		name: "openai", model: "gpt-4o-mini",
		env:    map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.BaseURL()},
		answer: "Hello! 👋 How can I help you today?",
		stream: func(sse []byte) { srv.Enqueue(openaitest.Stream(sse)) },
		slow: func(sse []byte, d time.Duration) {
			srv.Enqueue(openaitest.Reply{SSE: sse, EventDelay: d})
		},
		cut: func(sse []byte, n int) { srv.Enqueue(openaitest.Reply{SSE: sse, CutAfterEvents: n}) },
		fail: func(status int, msg string) {
			r := openaitest.Error(status, msg)
			r.RetryAfter = "0"
			srv.Enqueue(r)
		},
		fixture: openaitest.Fixture,
		text:    openaiText,
		tools:   openaiTools,
		bodies: func() [][]byte {
			var out [][]byte
			for _, r := range srv.Requests() {
				if r.Method == http.MethodPost && r.Path == "/v1/chat/completions" {
					out = append(out, r.Raw)
				}
			}
			return out
		},
		results: openaiResults,
		gone: func(t *testing.T) {
			t.Helper()
			select {
			case <-srv.ClientGone():
			case <-time.After(10 * time.Second):
				t.Fatal("the fake never saw the client leave the stream")
			}
		},
		creds: func() []string {
			var out []string
			for _, r := range srv.Requests() {
				out = append(out, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			}
			return out
		},
	}
	return f
}

// newAnthropicFake starts a fake Messages API that accepts only accept as
// its key; Caduceus is configured with key.
func newAnthropicFake(t *testing.T, key, accept string) *llmFake {
	t.Helper()
	srv := anthropictest.NewServer(accept)
	t.Cleanup(srv.Close)
	messages := func() []anthropictest.Request {
		var out []anthropictest.Request
		for _, r := range srv.Requests() {
			if r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/v1/messages") {
				out = append(out, r)
			}
		}
		return out
	}
	f := &llmFake{
		name: "anthropic", model: "claude-sonnet-4-5-20250929",
		env:    map[string]string{"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": srv.URL},
		answer: "Hello! How can I help you today?",
		stream: func(sse []byte) { srv.Enqueue(anthropictest.StreamReply(sse)) },
		slow: func(sse []byte, d time.Duration) {
			srv.Enqueue(anthropictest.Reply{Stream: sse, EventDelay: d})
		},
		cut: func(sse []byte, n int) { srv.Enqueue(anthropictest.Reply{Stream: sse, CutAfter: n}) },
		fail: func(status int, msg string) {
			r := anthropictest.ErrorReply(status, "", msg)
			r.RetryAfter = "0"
			srv.Enqueue(r)
		},
		fixture: anthropictest.Fixture,
		text:    anthropicText,
		tools:   anthropicTools,
		bodies: func() [][]byte {
			var out [][]byte
			for _, r := range messages() {
				out = append(out, r.Raw)
			}
			return out
		},
		results: anthropicResults,
		gone: func(t *testing.T) {
			t.Helper()
			if !srv.WaitIdle(10 * time.Second) {
				t.Fatal("the fake is still streaming")
			}
			rs := messages()
			if len(rs) == 0 || !rs[len(rs)-1].Disconnected {
				t.Fatal("the fake never saw the client leave the stream")
			}
		},
		creds: func() []string {
			var out []string
			for _, r := range srv.Requests() {
				out = append(out, r.Header.Get("X-Api-Key"))
			}
			return out
		},
	}
	return f
}

// Distinct keys per provider, so a test can tell where one went.
const (
	openaiTestKey    = "sk-test-OPENAI-9f8e7d6c5b4a"
	anthropicTestKey = "sk-ant-test-ANTHROPIC-1a2b3c4d5e6f"
)

// fakes is the table of providers the tests run over.
var fakes = []struct {
	name string
	new  func(t *testing.T, key, accept string) *llmFake
	key  string
}{
	{"openai", newOpenAIFake, openaiTestKey},
	{"anthropic", newAnthropicFake, anthropicTestKey},
}

// mergeEnv combines the environments of several fakes.
func mergeEnv(llms ...*llmFake) map[string]string {
	env := map[string]string{}
	for _, f := range llms {
		for k, v := range f.env {
			env[k] = v
		}
	}
	return env
}

// workspaceFiles are what the fake models' tool calls read.
var workspaceFiles = map[string]string{
	"docs/README.md": "marker-docs-readme: the documentation index\n",
	"go.mod":         "module example.com/marker-gomod\n\ngo 1.26\n",
	"README.md":      "marker-top-readme: the project\n",
}

func newWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range workspaceFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startWith starts a server whose providers are the given fakes (the demo
// script is never used).
func startWith(t *testing.T, llms ...*llmFake) *e2etest.Server {
	t.Helper()
	return e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("the demo model answered"))),
		e2etest.WithEnv(mergeEnv(llms...)), e2etest.WithWorkspace(newWorkspace(t)))
}

// sendModel posts a message asking for model.
func sendModel(t *testing.T, s *e2etest.Server, sessionID, content, model string) e2etest.RunJSON {
	t.Helper()
	var out e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sessionID+"/messages", map[string]any{"content": content, "model": model}, &out); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	return out
}

// runOf collects what a test asserts about one run's events.
type runOf struct {
	started event.RunStartedPayload
	done    event.RunDonePayload
	tools   map[string]event.ToolStartedPayload
	results map[string]event.ToolDonePayload
	texts   []event.DonePayload
	usage   []event.UsagePayload
}

func summarise(t *testing.T, evs []event.Event, runID string) runOf {
	t.Helper()
	r := runOf{tools: map[string]event.ToolStartedPayload{}, results: map[string]event.ToolDonePayload{}}
	for _, e := range evs {
		if e.RunID != runID {
			continue
		}
		switch e.Type {
		case event.RunStarted:
			r.started = e2etest.Payload[event.RunStartedPayload](t, e)
		case event.RunDone:
			r.done = e2etest.Payload[event.RunDonePayload](t, e)
		case event.ToolStarted:
			p := e2etest.Payload[event.ToolStartedPayload](t, e)
			r.tools[p.ToolCallID] = p
		case event.ToolDone:
			p := e2etest.Payload[event.ToolDonePayload](t, e)
			if _, dup := r.results[p.ToolCallID]; dup {
				t.Fatalf("two tool.done for %s", p.ToolCallID)
			}
			r.results[p.ToolCallID] = p
		case event.MessageDone:
			r.texts = append(r.texts, e2etest.Payload[event.DonePayload](t, e))
		case event.Usage:
			r.usage = append(r.usage, e2etest.Payload[event.UsagePayload](t, e))
		}
	}
	return r
}

// A whole agent turn through each real provider client: the model calls
// read-only tools, Caduceus runs them, sends the results back paired with
// their calls, and the model answers.
func TestProviderToolTurn(t *testing.T) {
	t.Parallel()
	for _, fk := range fakes {
		cases := []struct {
			name string
			// first is the tool-calling reply; calls are what it calls,
			// with a text each result must contain.
			first func(f *llmFake) []byte
			calls []fakeCall
			want  []string
			// status of every tool.done; empty means ok.
			status string
		}{
			{
				name: "one call",
				first: func(f *llmFake) []byte {
					if f.name == "openai" {
						return f.fixture("tool_call") // read_file docs/README.md
					}
					// The Anthropic tool_use fixture calls get_weather,
					// which Caduceus has not: same wire format, list_dir.
					return f.tools(fakeCall{"toolu_01E2eListDir7Kq3Vn8Wm4Xs", "list_dir", `{"path": "docs"}`})
				},
				calls: map[string][]fakeCall{
					"openai":    {{"call_Q3mPz8vW1bT6yK2nR5sLd0aE", "read_file", ""}},
					"anthropic": {{"toolu_01E2eListDir7Kq3Vn8Wm4Xs", "list_dir", ""}},
				}[fk.name],
				want: map[string][]string{
					"openai":    {"marker-docs-readme"},
					"anthropic": {"README.md"},
				}[fk.name],
			},
			{
				name: "two parallel calls",
				first: func(f *llmFake) []byte {
					if f.name == "anthropic" {
						return f.fixture("parallel_tools") // read_file go.mod, README.md
					}
					// The OpenAI parallel fixture calls get_weather.
					return f.tools(
						fakeCall{"call_E2eGoMod4hJk2LmN9pQrS4tU", "read_file", `{"path":"go.mod"}`},
						fakeCall{"call_E2eReadme3cDe5FgH8iJkL0", "read_file", `{"path":"README.md"}`})
				},
				calls: map[string][]fakeCall{
					"openai":    {{"call_E2eGoMod4hJk2LmN9pQrS4tU", "read_file", ""}, {"call_E2eReadme3cDe5FgH8iJkL0", "read_file", ""}},
					"anthropic": {{"toolu_01A09q90qw90lq917835lq9", "read_file", ""}, {"toolu_01B8Nfe7jXq2Gc5QLhP3kv1R", "read_file", ""}},
				}[fk.name],
				want: []string{"marker-gomod", "marker-top-readme"},
			},
			{
				// The recorded weather calls name a tool Caduceus has not:
				// each gets an error result and the model goes on.
				name: "unknown tool",
				first: func(f *llmFake) []byte {
					return f.fixture(map[string]string{"openai": "parallel_tool_calls", "anthropic": "tool_use"}[f.name])
				},
				calls: map[string][]fakeCall{
					"openai":    {{"call_7hJk2LmN9pQrS4tUvWxY1zAb", "get_weather", ""}, {"call_3cDe5FgH8iJkL0mNoPqR2sTu", "get_weather", ""}},
					"anthropic": {{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", ""}},
				}[fk.name],
				want:   []string{`unknown tool "get_weather"`, `unknown tool "get_weather"`},
				status: event.ToolError,
			},
		}
		for _, tc := range cases {
			t.Run(fk.name+"/"+tc.name, func(t *testing.T) {
				f := fk.new(t, fk.key, fk.key)
				f.stream(tc.first(f))
				f.stream(f.fixture("text"))
				s := startWith(t, f)
				sid := s.NewSession(t)
				st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
				r := sendModel(t, s, sid, "look at the files", f.ref())
				evs := st.Until(t, "run.done", e2etest.IsDone(r.ID))
				got := summarise(t, evs, r.ID)

				if got.started.Provider != f.name || got.started.Model != f.model || got.started.Demo {
					t.Fatalf("run.started = %+v, want %s", got.started, f.ref())
				}
				if got.done.Status != "completed" || got.done.Error != nil {
					t.Fatalf("run.done = %+v", got.done)
				}
				// Every call announced, executed and answered, in the model's ids.
				if len(got.tools) != len(tc.calls) || len(got.results) != len(tc.calls) {
					t.Fatalf("%d tool.started, %d tool.done; want %d each", len(got.tools), len(got.results), len(tc.calls))
				}
				for i, c := range tc.calls {
					ts, ok := got.tools[c.id]
					if !ok || ts.Name != c.name {
						t.Fatalf("tool.started for %s = %+v", c.id, ts)
					}
					status := cmp.Or(tc.status, event.ToolOK)
					td := got.results[c.id]
					if td.Status != status || td.Name != c.name || !strings.Contains(td.Output, tc.want[i]) {
						t.Fatalf("tool.done for %s = %+v, want %s with %q", c.id, td, status, tc.want[i])
					}
				}
				if n := len(got.texts); n == 0 || got.texts[n-1].Text != f.answer || got.texts[n-1].Partial {
					t.Fatalf("message.done = %+v, want the final answer %q", got.texts, f.answer)
				}
				// One usage event per model call; the run's totals are their sum.
				if len(got.usage) != 2 {
					t.Fatalf("%d usage events, want 2", len(got.usage))
				}
				var sum event.UsageTotals
				for _, u := range got.usage {
					if u.Turn.InputTokens <= 0 || u.Turn.OutputTokens <= 0 {
						t.Fatalf("usage = %+v", u)
					}
					sum.InputTokens += u.Turn.InputTokens
					sum.OutputTokens += u.Turn.OutputTokens
				}
				if d := got.done.Usage; d.InputTokens != sum.InputTokens || d.OutputTokens != sum.OutputTokens || d.InputTokens <= 0 || d.OutputTokens <= 0 {
					t.Fatalf("run.done usage %+v, usage events sum to %+v", d, sum)
				}

				// The second request carries every result, paired with its call.
				bodies := f.bodies()
				if len(bodies) != 2 {
					t.Fatalf("the fake got %d model requests, want 2", len(bodies))
				}
				if first := f.results(t, bodies[0]); len(first) != 0 {
					t.Fatalf("first request already has tool results: %v", first)
				}
				sent := f.results(t, bodies[1])
				if len(sent) != len(tc.calls) {
					t.Fatalf("second request answers %d calls, want %d: %v", len(sent), len(tc.calls), sent)
				}
				for i, c := range tc.calls {
					if !strings.Contains(sent[c.id], tc.want[i]) {
						t.Fatalf("result sent for %s = %q, want it to contain %q", c.id, sent[c.id], tc.want[i])
					}
					if !strings.Contains(sent[c.id], got.results[c.id].Output) {
						t.Fatalf("the model got %q for %s, the journal says %q", sent[c.id], c.id, got.results[c.id].Output)
					}
				}
				e2etest.CheckJournal(t, s.Journal(t, r.ID))

				// The next run rebuilds the history from the journal: the
				// calls and their results are sent again, still paired.
				f.stream(f.fixture("text"))
				r2 := sendModel(t, s, sid, "thanks", f.ref())
				if d := summarise(t, st.Until(t, "second run.done", e2etest.IsDone(r2.ID)), r2.ID).done; d.Status != "completed" {
					t.Fatalf("the next run: %+v (error %+v)", d, d.Error)
				}
				bodies = f.bodies()
				if len(bodies) != 3 {
					t.Fatalf("the fake got %d model requests, want 3", len(bodies))
				}
				if again := f.results(t, bodies[2]); !maps.Equal(again, sent) {
					t.Fatalf("rebuilt history sends results %v, the run sent %v", again, sent)
				}
			})
		}
	}
}

// Provider failures end the run with a classified error that names the
// provider and keeps the server's words; a rate limit is retried.
func TestProviderErrors(t *testing.T) {
	t.Parallel()
	const serverMsg = "messages.0.content: the e2e server rejects this request"
	cases := []struct {
		name   string
		accept func(key string) string // the key the fake accepts
		script func(f *llmFake)
		check  func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, key string)
	}{
		{
			name: "429 then success",
			script: func(f *llmFake) {
				f.fail(http.StatusTooManyRequests, "Rate limit reached for requests")
				f.stream(f.fixture("text"))
			},
			check: func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, _ string) {
				if got.done.Status != "completed" {
					t.Fatalf("run.done = %+v", got.done)
				}
				if n := len(f.bodies()); n != 2 {
					t.Fatalf("the fake got %d requests, want 2 (the 429, then the retry)", n)
				}
				if len(got.texts) != 1 || got.texts[0].Text != f.answer {
					t.Fatalf("message.done = %+v", got.texts)
				}
			},
		},
		{
			name:   "400 with a message",
			script: func(f *llmFake) { f.fail(http.StatusBadRequest, serverMsg) },
			check: func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, _ string) {
				e := got.done.Error
				if got.done.Status != "failed" || e == nil || e.Code != "provider_bad_request" {
					t.Fatalf("run.done = %+v", got.done)
				}
				if !strings.Contains(e.Message, serverMsg) || !strings.HasPrefix(e.Message, f.name+": ") {
					t.Fatalf("error message %q: want the provider's name and the server's message", e.Message)
				}
				if n := len(f.bodies()); n != 1 {
					t.Fatalf("a 400 was retried: %d requests", n)
				}
			},
		},
		{
			name:   "401",
			accept: func(string) string { return "sk-the-key-the-server-wants-0000" },
			script: func(*llmFake) {},
			check: func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, key string) {
				e := got.done.Error
				if got.done.Status != "failed" || e == nil || e.Code != "provider_auth" {
					t.Fatalf("run.done = %+v", got.done)
				}
				if !strings.HasPrefix(e.Message, f.name+": ") || !strings.Contains(e.Message, "Check the API key") {
					t.Fatalf("error message %q: want the provider and advice to check the key", e.Message)
				}
				if strings.Contains(e.Message, "****") || strings.Contains(e.Message, key[len(key)-4:]) {
					t.Fatalf("error message %q shows part of the key", e.Message)
				}
				if strings.Contains(s.Logs.String(), key) {
					t.Fatal("the key is in the server log")
				}
				// The model list says the same, without the key, and still
				// gives the failing provider a (empty) list of models.
				raw := getRaw(t, s.URL+"/api/models")
				if strings.Contains(string(raw), key) || strings.Contains(string(raw), "****") {
					t.Fatalf("GET /api/models shows the key: %s", raw)
				}
				var list struct {
					Providers []struct {
						Name   string          `json:"name"`
						HasKey bool            `json:"has_key"`
						Error  string          `json:"error"`
						Models json.RawMessage `json:"models"`
					} `json:"providers"`
				}
				if err := json.Unmarshal(raw, &list); err != nil {
					t.Fatal(err)
				}
				found := false
				for _, p := range list.Providers {
					if p.Name == f.name {
						found = true
						if !p.HasKey || !strings.Contains(p.Error, "Check the API key") || string(p.Models) != "[]" {
							t.Fatalf("provider %s in GET /api/models: %+v (models %s)", f.name, p, p.Models)
						}
					}
				}
				if !found {
					t.Fatalf("GET /api/models lacks %s: %s", f.name, raw)
				}
			},
		},
		{
			name: "stream cut mid-answer",
			script: func(f *llmFake) {
				// Two fragments arrive, then the connection drops.
				events := map[string]int{"openai": 3, "anthropic": 4}[f.name]
				f.cut(f.text("The migration", " has three", " steps:", " one."), events)
			},
			check: func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, _ string) {
				e := got.done.Error
				if got.done.Status != "failed" || e == nil || e.Code != "provider_stream_cut" || !strings.HasPrefix(e.Message, f.name+": ") {
					t.Fatalf("run.done = %+v", got.done)
				}
				if len(got.texts) != 1 || !got.texts[0].Partial || got.texts[0].Text != "The migration has three" {
					t.Fatalf("message.done = %+v, want the partial text kept", got.texts)
				}
			},
		},
		{
			name: "error event mid-stream",
			script: func(f *llmFake) {
				f.stream(f.fixture(map[string]string{"openai": "error_midstream", "anthropic": "error_event"}[f.name]))
			},
			check: func(t *testing.T, f *llmFake, s *e2etest.Server, got runOf, _ string) {
				want := map[string]struct{ code, msg, partial string }{
					"openai":    {"provider_server_error", "The server had an error while processing your request.", "Here is the first part"},
					"anthropic": {"provider_overloaded", "Overloaded", "Let me think about"},
				}[f.name]
				e := got.done.Error
				if got.done.Status != "failed" || e == nil || e.Code != want.code || !strings.HasPrefix(e.Message, f.name+": ") || !strings.Contains(e.Message, want.msg) {
					t.Fatalf("run.done = %+v (error %+v)", got.done, e)
				}
				if len(got.texts) != 1 || !got.texts[0].Partial || got.texts[0].Text != want.partial {
					t.Fatalf("message.done = %+v, want the partial text kept", got.texts)
				}
			},
		},
	}
	for _, fk := range fakes {
		for _, tc := range cases {
			t.Run(fk.name+"/"+tc.name, func(t *testing.T) {
				accept := fk.key
				if tc.accept != nil {
					accept = tc.accept(fk.key)
				}
				f := fk.new(t, fk.key, accept)
				tc.script(f)
				s := startWith(t, f)
				sid := s.NewSession(t)
				st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
				r := sendModel(t, s, sid, "hello", f.ref())
				evs := st.Until(t, "run.done", e2etest.IsDone(r.ID))
				got := summarise(t, evs, r.ID)
				for _, e := range evs {
					if strings.Contains(string(e.Payload), fk.key) {
						t.Fatalf("the key is in a %s event", e.Type)
					}
				}
				// The run resource agrees with its terminal event.
				view := s.Run(t, r.ID)
				if view.Status != got.done.Status || (view.Error == nil) != (got.done.Error == nil) ||
					(view.Error != nil && *view.Error != *got.done.Error) {
					t.Fatalf("run %+v (error %+v), run.done %+v", view, view.Error, got.done)
				}
				e2etest.CheckJournal(t, s.Journal(t, r.ID))
				tc.check(t, f, s, got, fk.key)
			})
		}
	}
}

// Cancelling while the provider streams aborts the HTTP request, ends the
// run once as cancelled, and leaves a history the real API accepts: the
// next message in the session completes.
func TestProviderCancelMidStream(t *testing.T) {
	t.Parallel()
	for _, fk := range fakes {
		for _, when := range []string{"mid-answer", "before the first token"} {
			t.Run(fk.name+"/"+when, func(t *testing.T) {
				f := fk.new(t, fk.key, fk.key)
				var reach func(e event.Event) bool
				if when == "mid-answer" {
					// Many fragments at a steady pace: seconds of stream
					// left when the first one arrives.
					frags := make([]string, 200)
					for i := range frags {
						frags[i] = fmt.Sprintf("word%d ", i)
					}
					f.slow(f.text(frags...), 20*time.Millisecond)
					reach = e2etest.IsType(event.MessageDelta)
				} else {
					f.slow(f.text("never", " shown"), time.Minute)
					reach = e2etest.IsType(event.TurnStarted)
				}
				f.stream(f.fixture("text"))
				s := startWith(t, f)
				sid := s.NewSession(t)
				st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
				r := sendModel(t, s, sid, "talk for a while", f.ref())
				st.Until(t, when, reach)
				if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, nil); c != http.StatusAccepted && c != http.StatusOK {
					t.Fatalf("cancel: %d", c)
				}
				st.Until(t, "run.done", e2etest.IsDone(r.ID))
				f.gone(t)

				evs := s.Journal(t, r.ID)
				e2etest.CheckJournal(t, evs)
				got := summarise(t, evs, r.ID)
				if n := e2etest.CountType(evs, event.RunDone); n != 1 || got.done.Status != "cancelled" {
					t.Fatalf("%d run.done, last %+v", n, got.done)
				}
				if when == "mid-answer" {
					if len(got.texts) != 1 || !got.texts[0].Partial || !strings.HasPrefix(got.texts[0].Text, "word0 ") {
						t.Fatalf("message.done = %+v, want the partial text", got.texts)
					}
				} else if len(got.texts) != 0 {
					t.Fatalf("message.done = %+v before any text", got.texts)
				}

				// The next run sends the history including the cancelled
				// turn; the fake validates it like the real API.
				r2 := sendModel(t, s, sid, "and now?", f.ref())
				evs2 := st.Until(t, "second run.done", e2etest.IsDone(r2.ID))
				got2 := summarise(t, evs2, r2.ID)
				if got2.done.Status != "completed" {
					t.Fatalf("the run after the cancel: %+v", got2.done)
				}
				bodies := f.bodies()
				if len(bodies) != 2 {
					t.Fatalf("the fake got %d requests, want 2", len(bodies))
				}
				if !strings.Contains(string(bodies[1]), "talk for a while") || !strings.Contains(string(bodies[1]), "and now?") {
					t.Fatalf("the second request lacks the conversation: %s", bodies[1])
				}
			})
		}
	}
}

// A message's model picks the provider; GET /api/models lists the
// configured providers without their keys; with none, the demo model
// answers and /api/meta says so.
func TestModelSelection(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	an := newAnthropicFake(t, anthropicTestKey, anthropicTestKey)
	s := startWith(t, oa, an)

	for _, tc := range []struct {
		want, other *llmFake
	}{{an, oa}, {oa, an}} {
		t.Run("to "+tc.want.name, func(t *testing.T) {
			tc.want.stream(tc.want.fixture("text"))
			before, otherBefore := len(tc.want.bodies()), len(tc.other.bodies())
			sid := s.NewSession(t)
			st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
			r := sendModel(t, s, sid, "which model?", tc.want.ref())
			got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID)
			if got.done.Status != "completed" || got.started.Provider != tc.want.name || got.started.Model != tc.want.model {
				t.Fatalf("run.started %+v, run.done %+v", got.started, got.done)
			}
			bodies := tc.want.bodies()
			if len(bodies) != before+1 || len(tc.other.bodies()) != otherBefore {
				t.Fatalf("%s got %d new requests, %s %d", tc.want.name, len(bodies)-before, tc.other.name, len(tc.other.bodies())-otherBefore)
			}
			var body struct {
				Model string `json:"model"`
			}
			if err := json.Unmarshal(bodies[len(bodies)-1], &body); err != nil || body.Model != tc.want.model {
				t.Fatalf("request model %q (%v), want %q", body.Model, err, tc.want.model)
			}
		})
	}

	t.Run("models list", func(t *testing.T) {
		var list struct {
			Default   string `json:"default"`
			Providers []struct {
				Name   string `json:"name"`
				Type   string `json:"type"`
				HasKey bool   `json:"has_key"`
				Demo   bool   `json:"demo"`
				Error  string `json:"error"`
				Models []struct {
					Ref string `json:"ref"`
				} `json:"models"`
			} `json:"providers"`
		}
		raw := getRaw(t, s.URL+"/api/models")
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{openaiTestKey, anthropicTestKey} {
			if strings.Contains(string(raw), k) {
				t.Fatalf("GET /api/models shows a key: %s", raw)
			}
		}
		seen := map[string]bool{}
		for _, p := range list.Providers {
			var refs []string
			for _, m := range p.Models {
				refs = append(refs, m.Ref)
			}
			switch p.Name {
			case "openai", "anthropic":
				want := map[string]*llmFake{"openai": oa, "anthropic": an}[p.Name]
				if !p.HasKey || p.Type != p.Name || p.Error != "" || !slices.Contains(refs, want.ref()) {
					t.Fatalf("provider %s = %+v", p.Name, p)
				}
				seen[p.Name] = true
			case "demo":
				if !p.Demo || p.HasKey {
					t.Fatalf("demo provider = %+v", p)
				}
			default:
				t.Fatalf("unexpected provider %q", p.Name)
			}
		}
		if !seen["openai"] || !seen["anthropic"] {
			t.Fatalf("providers listed: %s", raw)
		}
		if !strings.HasPrefix(list.Default, "anthropic") {
			t.Fatalf("default model %q, want Anthropic's", list.Default)
		}
		var meta struct {
			DemoModel bool `json:"demo_model"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/meta", nil, &meta)
		if meta.DemoModel {
			t.Fatal("meta says demo_model with two providers configured")
		}
	})

	t.Run("no provider", func(t *testing.T) {
		d := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("offline answer"))))
		var meta struct {
			DemoModel    bool   `json:"demo_model"`
			DefaultModel string `json:"default_model"`
		}
		e2etest.Do(t, "GET", d.URL+"/api/meta", nil, &meta)
		if !meta.DemoModel || meta.DefaultModel != "demo" {
			t.Fatalf("meta = %+v, want the demo model", meta)
		}
		sid := d.NewSession(t)
		st := e2etest.OpenStream(t, d.URL+"/api/sessions/"+sid+"/events", nil)
		r := d.Send(t, sid, "hi")
		got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID)
		if !got.started.Demo || got.started.Provider != "demo" || got.done.Status != "completed" {
			t.Fatalf("run.started %+v, run.done %+v", got.started, got.done)
		}
	})
}

// getRaw fetches url and returns the body of a 200 answer.
func getRaw(t *testing.T, url string) []byte {
	t.Helper()
	code, b := fetch(t, "GET", url, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, b)
	}
	return b
}

// fetch sends a request with an optional JSON body and returns the status
// and the raw answer.
func fetch(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, url, err)
	}
	return resp.StatusCode, b
}

// Streams in the providers' wire formats, shaped exactly like the recorded
// fixtures, for answers the fixtures do not have.

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// halves splits s in two fragments, as servers split tool arguments.
func halves(s string) []string { return []string{s[:len(s)/2], s[len(s)/2:]} }

const openaiChunkHead = `{"id":"chatcmpl-E2eFakeStream7hQ2mZ8rT4vXc","object":"chat.completion.chunk","created":1752575401,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_34a54ae93c",`

func openaiChunk(delta, finish string) string {
	fr := "null"
	if finish != "" {
		fr = jsonString(finish)
	}
	return "data: " + openaiChunkHead + `"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fr + `}],"usage":null}` + "\n\n"
}

func openaiUsage(in, out int) string {
	return "data: " + openaiChunkHead + fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
		`"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		in, out, in+out) + "\n\n"
}

func openaiText(fragments ...string) []byte {
	var b strings.Builder
	b.WriteString(openaiChunk(`{"role":"assistant","content":"","refusal":null}`, ""))
	for _, f := range fragments {
		b.WriteString(openaiChunk(`{"content":`+jsonString(f)+`}`, ""))
	}
	b.WriteString(openaiChunk(`{}`, "stop"))
	b.WriteString(openaiUsage(19, len(fragments)))
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

func openaiTools(calls ...fakeCall) []byte {
	var b strings.Builder
	b.WriteString(openaiChunk(`{"role":"assistant","content":null,"refusal":null}`, ""))
	for i, c := range calls {
		b.WriteString(openaiChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`,
			i, jsonString(c.id), jsonString(c.name)), ""))
		for _, h := range halves(c.args) {
			b.WriteString(openaiChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, jsonString(h)), ""))
		}
	}
	b.WriteString(openaiChunk(`{}`, "tool_calls"))
	b.WriteString(openaiUsage(88, 46))
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

func anthropicEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func anthropicStart(in int) string {
	return anthropicEvent("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01E2eFakeStream9Rk4Tz","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, in))
}

func anthropicEnd(stop string, out int) string {
	return anthropicEvent("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, jsonString(stop), out)) +
		anthropicEvent("message_stop", `{"type":"message_stop"}`)
}

func anthropicText(fragments ...string) []byte {
	var b strings.Builder
	b.WriteString(anthropicStart(25))
	b.WriteString(anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	for _, f := range fragments {
		b.WriteString(anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(f)+`}}`))
	}
	b.WriteString(anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":0}`))
	b.WriteString(anthropicEnd("end_turn", len(fragments)))
	return []byte(b.String())
}

func anthropicTools(calls ...fakeCall) []byte {
	var b strings.Builder
	b.WriteString(anthropicStart(472))
	for i, c := range calls {
		b.WriteString(anthropicEvent("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`,
			i, jsonString(c.id), jsonString(c.name))))
		for _, h := range append([]string{""}, halves(c.args)...) {
			b.WriteString(anthropicEvent("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, jsonString(h))))
		}
		b.WriteString(anthropicEvent("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)))
	}
	b.WriteString(anthropicEnd("tool_use", 89))
	return []byte(b.String())
}

// openaiResults reads the role "tool" messages that answer a tool_call_id
// of the assistant message right before them.
func openaiResults(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	out := map[string]string{}
	open := map[string]bool{}
	for _, m := range body.Messages {
		switch m.Role {
		case "assistant":
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				t.Fatalf("tool message for %q answers no call of the assistant message before it", m.ToolCallID)
			}
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				t.Fatalf("tool message content %s: %v", m.Content, err)
			}
			out[m.ToolCallID] = s
		default:
			open = map[string]bool{}
		}
	}
	return out
}

// anthropicResults reads the tool_result blocks of a user message that
// answer a tool_use of the assistant message right before it.
func anthropicResults(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	out := map[string]string{}
	var uses map[string]bool
	for _, m := range body.Messages {
		prev := uses
		uses = map[string]bool{}
		for _, b := range m.Content {
			switch {
			case m.Role == "assistant" && b.Type == "tool_use":
				uses[b.ID] = true
			case m.Role == "user" && b.Type == "tool_result":
				if !prev[b.ToolUseID] {
					t.Fatalf("tool_result for %q answers no tool_use of the message before it", b.ToolUseID)
				}
				var s string
				if err := json.Unmarshal(b.Content, &s); err != nil {
					t.Fatalf("tool_result content %s: %v", b.Content, err)
				}
				out[b.ToolUseID] = s
			}
		}
	}
	return out
}

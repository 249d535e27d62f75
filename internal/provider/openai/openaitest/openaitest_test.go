package openaitest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

func post(t *testing.T, srv *openaitest.Server, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.BaseURL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	return resp, string(b)
}

func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	return e.Error.Message
}

func chat(msgs string) string {
	return `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":` + msgs + `}`
}

const assistantCalls = `{"role":"assistant","content":null,"tool_calls":[` +
	`{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},` +
	`{"id":"c2","type":"function","function":{"name":"g","arguments":"{\"a\":1}"}}]}`

func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // substring of the error; empty means accepted
	}{
		{"plain", chat(`[{"role":"user","content":"hi"}]`), ""},
		{"system, tools, parts", `{"model":"m","stream":true,"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]}],` +
			`"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]}`, ""},
		{"answered tool calls", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `,` +
			`{"role":"tool","tool_call_id":"c2","content":"two"},{"role":"tool","tool_call_id":"c1","content":""},{"role":"assistant","content":"done"},{"role":"user","content":"ok"}]`), ""},
		{"not JSON", `{"model":`, "could not parse the JSON body"},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, "must provide a model"},
		{"no messages", `{"model":"m","messages":[]}`, "too short"},
		{"stream_options without stream", `{"model":"m","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, "only allowed when 'stream' is enabled"},
		{"unknown role", chat(`[{"role":"robot","content":"hi"}]`), "Invalid value: 'robot'"},
		{"empty user content", chat(`[{"role":"user","content":""}]`), "string too short"},
		{"missing user content", chat(`[{"role":"user"}]`), "Missing required parameter: 'messages[0].content'"},
		{"null system content", chat(`[{"role":"system","content":null},{"role":"user","content":"hi"}]`), "expected a string"},
		{"assistant with neither content nor calls", chat(`[{"role":"user","content":"hi"},{"role":"assistant","content":null}]`), "got null"},
		{"tool message without a call", chat(`[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"x"}]`), "must be a response to a preceeding message with 'tool_calls'"},
		{"tool message answering an unknown id", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `,{"role":"tool","tool_call_id":"c9","content":"x"}]`), "'c9' not found"},
		{"tool message after a later user message", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `,{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"tool","tool_call_id":"c2","content":"x"},{"role":"user","content":"more"},{"role":"tool","tool_call_id":"c1","content":"x"}]`),
			"must be a response"},
		{"call left unanswered before the next message", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `,{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"user","content":"next"}]`),
			"did not have response messages: c2"},
		{"calls unanswered at the end", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `]`), "did not have response messages: c1, c2"},
		{"tool content null", chat(`[{"role":"user","content":"hi"},` + assistantCalls + `,{"role":"tool","tool_call_id":"c1","content":null},{"role":"tool","tool_call_id":"c2","content":"x"}]`), "expected a string"},
		{"arguments not JSON", chat(`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`),
			"not valid JSON"},
		{"arguments as an object", chat(`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`),
			"expected a string"},
		{"call without id", chat(`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]`), "tool_calls[0].id"},
		{"call without type", chat(`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{}"}}]}]`), "tool_calls[0].type"},
		{"bad tool name", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"read file"}}]}`, "does not match pattern"},
		{"tool parameters not an object", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`, "schema must be"},
		{"tool of another type", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"retrieval"}]}`, "Invalid value: 'retrieval'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Enqueue(openaitest.Stream(openaitest.Fixture("no_done")))
			resp, body := post(t, srv, tt.body)
			if tt.want == "" {
				if resp.StatusCode != 200 || !strings.Contains(body, "Sure") {
					t.Fatalf("status %d body %s, want the stream", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
			if msg := errorMessage(t, body); !strings.Contains(msg, tt.want) {
				t.Fatalf("message %q, want %q", msg, tt.want)
			}
			if srv.Pending() != 1 {
				t.Fatal("a rejected request used up a scripted reply")
			}
			if len(srv.Requests()) != 1 {
				t.Fatal("the rejected request was not recorded")
			}
		})
	}
}

func TestScriptedReplies(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	r429 := openaitest.Error(429, "Rate limit reached for requests")
	r429.RetryAfter = "2"
	srv.Enqueue(r429, openaitest.Stream(openaitest.Fixture("text")))

	resp, body := post(t, srv, chat(`[{"role":"user","content":"hi"}]`))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || errorMessage(t, body) != "Rate limit reached for requests" {
		t.Fatalf("status %d headers %v body %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = post(t, srv, chat(`[{"role":"user","content":"again"}]`))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || body != string(openaitest.Fixture("text")) {
		t.Fatalf("status %d, the fixture was not served verbatim", resp.StatusCode)
	}
	resp, body = post(t, srv, chat(`[{"role":"user","content":"third"}]`))
	if resp.StatusCode != 400 || !strings.Contains(errorMessage(t, body), "no reply queued") {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	srv.SetDefault(openaitest.Stream(openaitest.Fixture("no_done")))
	for range 2 {
		if resp, _ := post(t, srv, chat(`[{"role":"user","content":"any"}]`)); resp.StatusCode != 200 {
			t.Fatalf("default reply: status %d", resp.StatusCode)
		}
	}
	rs := srv.Requests()
	if len(rs) != 5 {
		t.Fatalf("%d requests recorded", len(rs))
	}
	msgs := rs[1].Body["messages"].([]any)
	if msgs[0].(map[string]any)["content"] != "again" || rs[1].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("recorded %+v", rs[1])
	}
}

func TestCuts(t *testing.T) {
	fx := openaitest.Fixture("text")
	tests := []struct {
		name  string
		reply openaitest.Reply
		want  int // events read before the failure
	}{
		{"after events", openaitest.Reply{SSE: fx, CutAfterEvents: 3}, 3},
		{"after bytes", openaitest.Reply{SSE: fx, CutAfterBytes: 10}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Enqueue(tt.reply)
			resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(chat(`[{"role":"user","content":"hi"}]`)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := wire.NewSSEReader(resp.Body)
			n := 0
			for {
				_, err := r.Next()
				if err != nil {
					if !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Fatalf("ended with %v, want an unclean end", err)
					}
					break
				}
				n++
			}
			if n != tt.want {
				t.Fatalf("read %d events, want %d", n, tt.want)
			}
		})
	}
}

func TestDelayAndClientGone(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{SSE: openaitest.Fixture("text"), EventDelay: time.Hour})
	resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(chat(`[{"role":"user","content":"hi"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	r := wire.NewSSEReader(resp.Body)
	if _, err := r.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	}
	resp.Body.Close()
	select {
	case <-srv.ClientGone():
	case <-time.After(5 * time.Second):
		t.Fatal("client leaving was not noticed")
	}
}

func TestCloseCutsDelayedStreams(t *testing.T) {
	srv := openaitest.NewServer()
	srv.Enqueue(openaitest.Reply{SSE: openaitest.Fixture("text"), EventDelay: time.Hour})
	resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(chat(`[{"role":"user","content":"hi"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for an hour-long stream")
	}
}

func TestKeyAndRoutes(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.RequireKey("sk-test-abcdefghijkl")
	srv.SetModels("b", "a")

	resp, body := post(t, srv, chat(`[{"role":"user","content":"hi"}]`))
	if resp.StatusCode != 401 || !strings.Contains(errorMessage(t, body), "You didn't provide an API key") {
		t.Fatalf("no key: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, srv, chat(`[{"role":"user","content":"hi"}]`), "Authorization", "Bearer sk-wrong-abcdefgh1234")
	msg := errorMessage(t, body)
	if resp.StatusCode != 401 || !strings.Contains(msg, "Incorrect API key provided: sk-**************1234.") {
		t.Fatalf("wrong key: %d %q", resp.StatusCode, msg)
	}

	get := func(path, key string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.BaseURL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get("/models", "sk-test-abcdefghijkl")
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || status != 200 || list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "b" {
		t.Fatalf("models: %d %s", status, body)
	}
	if status, body := get("/engines", "sk-test-abcdefghijkl"); status != 404 || !strings.Contains(errorMessage(t, body), "Invalid URL (GET /v1/engines)") {
		t.Fatalf("unknown route: %d %s", status, body)
	}
}

func TestFixtures(t *testing.T) {
	names := openaitest.FixtureNames()
	if len(names) < 7 {
		t.Fatalf("fixtures %v", names)
	}
	for _, n := range names {
		fx := openaitest.Fixture(n)
		if !bytes.Equal(fx, openaitest.Fixture(n+".sse")) {
			t.Fatalf("%s: the .sse suffix is optional", n)
		}
		// Every data line of a fixture is JSON or [DONE]: they are meant
		// to look like what servers really send.
		r := wire.NewSSEReader(bytes.NewReader(fx))
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("%s: %v", n, err)
				}
				break
			}
			if string(ev.Data) != "[DONE]" && !json.Valid(ev.Data) {
				t.Fatalf("%s: event %q is not JSON", n, ev.Data)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown fixture did not panic")
		}
	}()
	openaitest.Fixture("nope")
}

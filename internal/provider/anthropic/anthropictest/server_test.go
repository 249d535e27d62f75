package anthropictest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const key = "sk-ant-test-key"

func TestValidate(t *testing.T) {
	// wrap builds a body around a messages array, with extra top-level
	// fields.
	wrap := func(msgs string, extra ...string) string {
		s := `{"model":"m","max_tokens":4096,"stream":true,"messages":` + msgs
		for _, e := range extra {
			s += "," + e
		}
		return s + "}"
	}
	const toolTurn = `[{"role":"user","content":"q"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`
	tests := []struct {
		name    string
		body    string
		wantErr string // substring; empty: valid
	}{
		{"valid plain", wrap(`[{"role":"user","content":"hi"}]`), ""},
		{"valid tool turn", wrap(toolTurn), ""},
		{"valid prefill", wrap(`[{"role":"user","content":"hi"},{"role":"assistant","content":"The"}]`), ""},
		{"valid thinking tool turn", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"},{"type":"text","text":"more"}]}]`,
			`"thinking":{"type":"enabled","budget_tokens":2048}`), ""},
		{"valid redacted thinking tool turn", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"redacted_thinking","data":"xyz"},{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`,
			`"thinking":{"type":"enabled","budget_tokens":2048}`), ""},
		{"valid tools", wrap(`[{"role":"user","content":"hi"}]`, `"tools":[{"name":"a","input_schema":{"type":"object"}}]`, `"system":"s"`), ""},

		{"not JSON", `{`, "not valid JSON"},
		{"no model", `{"max_tokens":1,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "model: Field required"},
		{"no max_tokens", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens: Field required"},
		{"not streaming", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, "streaming"},
		{"no messages", wrap(`[]`), "at least one message"},
		{"starts with assistant", wrap(`[{"role":"assistant","content":"x"},{"role":"user","content":"hi"}]`), "first message must use the \"user\" role"},
		{"two users in a row", wrap(`[{"role":"user","content":"a"},{"role":"user","content":"b"}]`), "roles must alternate"},
		{"bad role", wrap(`[{"role":"system","content":"a"}]`), "Input should be 'user' or 'assistant'"},
		{"empty user content", wrap(`[{"role":"user","content":[]}]`), "non-empty content"},
		{"empty text block", wrap(`[{"role":"user","content":[{"type":"text","text":""}]}]`), "text content blocks must be non-empty"},
		{"whitespace text block", wrap(`[{"role":"user","content":[{"type":"text","text":" \n"}]}]`), "non-whitespace text"},
		{"trailing whitespace in prefill", wrap(`[{"role":"user","content":"hi"},{"role":"assistant","content":"The "}]`), "trailing whitespace"},
		{"unanswered tool_use", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":"what?"}]`), "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"tool_use last", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]}]`), "without `tool_result`"},
		{"orphan tool_result", wrap(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"A"}]}]`), "unexpected `tool_use_id`"},
		{"tool_result answers an older message", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]},
			{"role":"assistant","content":"ok"},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`), "unexpected `tool_use_id`"},
		{"text before tool_result", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`), "must come first"},
		{"duplicate result", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"},{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`), "single result"},
		{"bad tool id", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"functions.a:0","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"functions.a:0","content":"A"}]}]`), "String should match pattern"},
		{"input not an object", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":"x"}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]`), "valid dictionary"},
		{"empty error result", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true}]}]`), "content cannot be empty"},
		{"unsigned thinking", wrap(`[{"role":"user","content":"q"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}]},
			{"role":"user","content":"more"}]`), "signature: Field required"},
		{"thinking in a user message", wrap(`[{"role":"user","content":[{"type":"thinking","thinking":"t","signature":"s"}]}]`), "only be in `assistant` messages"},
		{"thinking tool turn without thinking", wrap(toolTurn, `"thinking":{"type":"enabled","budget_tokens":2048}`), "must start with a thinking block"},
		{"thinking budget too small", wrap(`[{"role":"user","content":"hi"}]`, `"thinking":{"type":"enabled","budget_tokens":512}`), "greater than or equal to 1024"},
		{"max_tokens not above budget", wrap(`[{"role":"user","content":"hi"}]`, `"thinking":{"type":"enabled","budget_tokens":4096}`), "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"tool without object schema", wrap(`[{"role":"user","content":"hi"}]`, `"tools":[{"name":"a","input_schema":{}}]`), "input_schema.type"},
		{"bad tool name", wrap(`[{"role":"user","content":"hi"}]`, `"tools":[{"name":"a.b","input_schema":{"type":"object"}}]`), "name: String should match"},
		{"duplicate tool", wrap(`[{"role":"user","content":"hi"}]`, `"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"a","input_schema":{"type":"object"}}]`), "unique"},
		{"unknown block", wrap(`[{"role":"user","content":[{"type":"video"}]}]`), "Input tag 'video'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate([]byte(tt.body))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("valid body rejected: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func post(t *testing.T, s *Server, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

const validBody = `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestServerReplies(t *testing.T) {
	s := NewServer(key)
	defer s.Close()
	s.Enqueue(
		Reply{Status: 429, Message: "slow down", RetryAfter: "2"},
		StreamReply(Fixture("text")),
		Reply{Stream: Fixture("text"), CutAfter: 3},
	)

	tests := []struct {
		name     string
		body     string
		hdr      map[string]string
		status   int
		contains string
		header   [2]string
	}{
		{"no key", validBody, map[string]string{"X-Api-Key": ""}, 401, `"authentication_error"`, [2]string{}},
		{"wrong key", validBody, map[string]string{"X-Api-Key": "nope"}, 401, `invalid x-api-key`, [2]string{}},
		{"no version", validBody, map[string]string{"Anthropic-Version": ""}, 400, `anthropic-version`, [2]string{}},
		{"invalid body", `{"model":"m","stream":true,"messages":[]}`, nil, 400, `"invalid_request_error"`, [2]string{}},
		{"scripted error", validBody, nil, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, [2]string{"Retry-After", "2"}},
		{"stream", validBody, nil, 200, "event: message_stop", [2]string{"Content-Type", "text/event-stream; charset=utf-8"}},
		{"cut", validBody, nil, 200, "event: ping", [2]string{}},
		{"queue empty", validBody, nil, 400, "no scripted reply", [2]string{}},
	}
	for _, tt := range tests {
		status, body, h := post(t, s, tt.body, tt.hdr)
		if status != tt.status || !strings.Contains(body, tt.contains) {
			t.Errorf("%s: %d %s, want %d containing %q", tt.name, status, body, tt.status, tt.contains)
		}
		if tt.header[0] != "" && h.Get(tt.header[0]) != tt.header[1] {
			t.Errorf("%s: header %s = %q", tt.name, tt.header[0], h.Get(tt.header[0]))
		}
		if tt.name == "cut" && (strings.Contains(body, "message_stop") || strings.Count(body, "event: ") != 3) {
			t.Errorf("cut stream = %s", body)
		}
	}
	reqs := s.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	if reqs[3].Invalid == "" || reqs[5].Invalid != "" || reqs[5].Body["model"] != "m" || !reqs[5].Done {
		t.Errorf("records: %+v", reqs)
	}
	if s.Pending() != 0 {
		t.Errorf("%d replies left", s.Pending())
	}
}

func TestServerModels(t *testing.T) {
	s := NewServer(key)
	defer s.Close()
	get := func(q string) map[string]any {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/v1/models"+q, nil)
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := get("?limit=2")
	if len(v["data"].([]any)) != 2 || v["has_more"] != true || v["last_id"] != DefaultModels()[1] {
		t.Errorf("page 1 = %v", v)
	}
	v = get("?limit=2&after_id=" + DefaultModels()[1])
	if len(v["data"].([]any)) != 1 || v["has_more"] != false {
		t.Errorf("page 2 = %v", v)
	}
}

func TestServerSeesDisconnect(t *testing.T) {
	s := NewServer(key)
	defer s.Close()
	s.Enqueue(Reply{Stream: Fixture("text"), EventDelay: time.Second})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/messages", strings.NewReader(validBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !s.WaitIdle(3 * time.Second) {
		t.Fatal("handler still running")
	}
	if r := s.Requests()[0]; !r.Disconnected || !r.Done {
		t.Errorf("record = %+v", r)
	}
}

func TestFixtures(t *testing.T) {
	names := Fixtures()
	if len(names) < 6 {
		t.Fatalf("fixtures = %v", names)
	}
	for _, name := range names {
		evs := splitEvents(Fixture(name))
		for _, ev := range evs {
			lines := strings.Split(strings.TrimSpace(string(ev)), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
				t.Errorf("%s: malformed event %q", name, ev)
				continue
			}
			var data struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &data); err != nil {
				t.Errorf("%s: %v in %q", name, err, ev)
			}
			if data.Type != strings.TrimPrefix(lines[0], "event: ") {
				t.Errorf("%s: event name and type differ in %q", name, ev)
			}
		}
		last := evs[len(evs)-1]
		wantLast := "event: message_stop"
		if name == "error_event" {
			wantLast = "event: error"
		}
		if !bytes.HasPrefix(last, []byte(wantLast)) {
			t.Errorf("%s ends with %q", name, last)
		}
	}
	if !bytes.Equal(Fixture("text"), Fixture("text.sse")) {
		t.Error("Fixture does not accept the extension")
	}
	defer func() {
		if recover() == nil {
			t.Error("Fixture of an unknown name did not panic")
		}
	}()
	Fixture("nope")
}

package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Every text a client sends must be valid UTF-8: bodies with invalid or
// overlong bytes, or JSON escapes of unpaired surrogates (which
// encoding/json would quietly turn into U+FFFD), are refused with
// invalid_utf8 and change nothing; a proper surrogate pair still passes.
func TestBodyTextMustBeUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	held := e.send(t, e.session(t).ID, "go")
	e.hold(t, held.ID, "rnr_test")
	approval := e.ask(t, held.ID, "rnr_test", store.KindApproval)
	held2 := e.send(t, e.session(t).ID, "go")
	e.hold(t, held2.ID, "rnr_test")
	clarify := e.ask(t, held2.ID, "rnr_test", store.KindClarify)

	// Each route with a body, once per text field; %s stands for the
	// inside of one JSON string.
	routes := []struct {
		name, method, path, body string
		ok                       int // status when the text is fine
	}{
		{"create session: title", "POST", "/api/sessions", `{"title":"a%sb"}`, 201},
		{"create session: model", "POST", "/api/sessions", `{"model":"m%s"}`, 0},
		{"create session: workspace", "POST", "/api/sessions", `{"workspace":"/tmp/%s"}`, 0},
		{"rename session", "PATCH", "/api/sessions/" + s.ID, `{"title":"a%sb"}`, 200},
		{"session model", "PATCH", "/api/sessions/" + s.ID, `{"model":"m%s"}`, 0},
		{"send message: content", "POST", "/api/sessions/" + s.ID + "/messages", `{"content":"hi %s there"}`, 202},
		{"send message: model", "POST", "/api/sessions/" + s.ID + "/messages", `{"content":"hi","model":"m%s"}`, 0},
		{"send message: if_busy", "POST", "/api/sessions/" + s.ID + "/messages", `{"content":"hi","if_busy":"%s"}`, 0},
		{"approve: choice", "POST", "/api/requests/" + approval + "/respond", `{"choice":"once%s"}`, 0},
		{"answer", "POST", "/api/requests/" + clarify + "/respond", `{"answer":"yes %s"}`, 200},
		{"rule: pattern", "POST", "/api/rules", `{"tool":"run_command","pattern":"go test %s"}`, 201},
		{"rule: tool", "POST", "/api/rules", `{"tool":"run_%s","pattern":"ls"}`, 0},
		{"rule: session id", "POST", "/api/rules", `{"tool":"run_command","pattern":"ls","session_id":"ses_%s"}`, 0},
		{"field name", "POST", "/api/rules", `{"tool":"run_command","pattern":"ls","%s":1}`, 0},
	}
	bad := []struct{ name, text string }{
		{"invalid byte", "\xff"},
		{"truncated sequence", "\xe2\x82"},
		{"lone high surrogate", `\ud800`},
		{"lone low surrogate", `\udc00`},
		{"high surrogate then a letter", `\ud83dx`},
		{"high surrogate then a non-surrogate escape", `\ud83d\u0041`},
		{"two high surrogates", `\ud83d\ud83d`},
		{"pair in the wrong order", `\ude00\ud83d`},
		{"high surrogate at the end of the string", `\uD800`},
		{"overlong slash", "\xc0\xaf"},
		{"overlong NUL", "\xe0\x80\x80"},
		{"encoded surrogate", "\xed\xa0\x80"},
		{"beyond U+10FFFF", "\xf4\x90\x80\x80"},
	}
	var cases []errCase
	for _, rt := range routes {
		for _, b := range bad {
			cases = append(cases, errCase{
				name: rt.name + ": " + b.name, method: rt.method, path: rt.path,
				body: fmt.Sprintf(rt.body, b.text), status: http.StatusBadRequest, code: "invalid_utf8",
			})
		}
	}
	sessions, rules := e.count(t)
	e.runErrCases(t, cases)
	if s2, r2 := e.count(t); s2 != sessions || r2 != rules {
		t.Fatalf("sessions %d -> %d, rules %d -> %d after refused bodies", sessions, s2, rules, r2)
	}

	// A surrogate pair is one character (U+1F600) and is fine, as is the
	// same character sent as UTF-8, and a backslash before "ud800".
	for _, rt := range routes {
		if rt.ok == 0 {
			continue
		}
		for _, text := range []string{`\ud83d\ude00`, "\U0001F600", `\\ud800`} {
			t.Run(rt.name+": valid "+text, func(t *testing.T) {
				r := e.req(rt.method, rt.path, fmt.Sprintf(rt.body, text))
				if r.code == http.StatusConflict && strings.Contains(rt.path, "/respond") {
					return // answered by the first valid text
				}
				r.want(t, rt.ok, "")
				if text != `\\ud800` && !strings.Contains(string(r.body), "\U0001F600") && !strings.Contains(rt.path, "/respond") {
					t.Errorf("answer lost the character: %s", r.body)
				}
			})
		}
	}
}

// Query parameters are text too: percent-decoded, they must be UTF-8.
func TestQueryTextMustBeUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.session(t)
	e.runErrCases(t, []errCase{
		{name: "search: invalid byte", method: "GET", path: "/api/sessions?q=%FF", status: 400, code: "invalid_utf8"},
		{name: "search: overlong", method: "GET", path: "/api/sessions?q=%C0%AF", status: 400, code: "invalid_utf8"},
		{name: "search: encoded surrogate", method: "GET", path: "/api/sessions?q=%ED%A0%80", status: 400, code: "invalid_utf8"},
		{name: "cursor", method: "GET", path: "/api/sessions?cursor=%FE", status: 400, code: "invalid_utf8"},
		{name: "parameter name", method: "GET", path: "/api/sessions?%FF=1", status: 400, code: "invalid_utf8"},
		{name: "requests filter", method: "GET", path: "/api/requests?session_id=%FF", status: 400, code: "invalid_utf8"},
		{name: "on a POST", method: "POST", path: "/api/rules?x=%FF", body: `{"tool":"run_command","pattern":"ls"}`, status: 400, code: "invalid_utf8"},
	})
	e.req("GET", "/api/sessions?q=%F0%9F%98%80", "").want(t, http.StatusOK, "")
}

// count returns how many sessions and rules the store holds.
func (e *env) count(t *testing.T) (sessions, rules int) {
	t.Helper()
	ss, _, err := e.st.ListSessions(e.ctx, store.SessionPage{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.st.ListRules(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(ss), len(rs)
}

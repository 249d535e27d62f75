package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	secretpkg "github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type decisionJSON struct {
	ID         int64  `json:"id"`
	At         string `json:"at"`
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
	Tool       string `json:"tool"`
	Action     string `json:"action"`
	Risk       string `json:"risk"`
	Mode       string `json:"mode"`
	ProfileID  string `json:"profile_id"`
	Outcome    string `json:"outcome"`
	DecidedBy  string `json:"decided_by"`
	RuleID     string `json:"rule_id"`
	Pattern    string `json:"pattern"`
	Choice     string `json:"choice"`
	By         *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"by"`
}

type decisionsJSON struct {
	Decisions []decisionJSON `json:"decisions"`
	Next      string         `json:"next"`
}

func (e *env) decisions(t *testing.T, query string) decisionsJSON {
	t.Helper()
	r := e.req("GET", "/api/approvals/decisions"+query, "")
	r.want(t, http.StatusOK, "")
	var out decisionsJSON
	r.decode(t, &out)
	return out
}

// One run of a smart-mode profile settles a call each way: by the mode, by
// a remembered rule, by a person (once, then deny) and by the policy; the
// log lists them newest first, each naming who or what decided, and its
// filters and pages select among them.
func TestApprovalDecisionsLog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		const secret = "sk-test-decisions-0123456789"
		e := newEnv(t, withStore(open), withSecretRedactor(secret), withRunner(script(
			turn(call("run_command", `{"command":"echo by-mode"}`)),
			turn(call("run_command", `{"command":"curl -s http://127.0.0.1:9/ruled"}`)),
			turn(call("run_command", `{"command":"rm -rf build-once"}`)),
			turn(call("run_command", `{"command":"rm -rf build-denied `+secret+`"}`)),
			turn(call("run_command", `{"command":"rm -rf /"}`)),
			turn(text("done")))))
		p := e.profile(t, `{"name":"Smart","approval_mode":"smart"}`)
		r := e.req("POST", "/api/sessions", `{"profile_id":"`+p.ID+`"}`)
		r.want(t, http.StatusCreated, "")
		var s sessionJSON
		r.decode(t, &s)
		var rule struct {
			ID string `json:"id"`
		}
		rr := e.req("POST", "/api/rules", `{"tool":"run_command","pattern":"curl -s http://127.0.0.1:9/*"}`)
		rr.want(t, http.StatusCreated, "")
		rr.decode(t, &rule)

		ru := e.send(t, s.ID, "go")
		prev := ""
		for _, choice := range []string{"once", "deny"} {
			w := e.waitRun(t, ru.ID, "a new request", func(r runJSON) bool {
				return len(r.PendingRequestIDs) > 0 && r.PendingRequestIDs[0] != prev
			})
			prev = w.PendingRequestIDs[0]
			e.req("POST", "/api/requests/"+prev+"/respond", `{"choice":"`+choice+`"}`).want(t, 200, "")
		}
		e.waitRun(t, ru.ID, "completed", status("completed"))

		all := e.decisions(t, "")
		if len(all.Decisions) != 5 || all.Next != "" {
			t.Fatalf("decisions = %+v", all)
		}
		want := []struct{ action, outcome, by string }{
			{"$ rm -rf /", "denied", "policy"},
			{"$ rm -rf build-denied [redacted]", "denied", "person"},
			{"$ rm -rf build-once", "allowed", "person"},
			{"$ curl -s http://127.0.0.1:9/ruled", "allowed", "rule"},
			{"$ echo by-mode", "allowed", "mode"},
		}
		for i, w := range want {
			d := all.Decisions[i]
			if d.Action != w.action || d.Outcome != w.outcome || d.DecidedBy != w.by || d.SessionID != s.ID ||
				d.RunID != ru.ID || d.Mode != "smart" || d.ProfileID != p.ID || d.Tool != "run_command" || d.At == "" {
				t.Errorf("decision %d = %+v, want %+v", i, d, w)
			}
		}
		if d := all.Decisions[3]; d.RuleID != rule.ID || d.Pattern != "curl -s http://127.0.0.1:9/*" || d.Risk != "network_private" {
			t.Errorf("by rule = %+v, want rule %s", d, rule.ID)
		}
		for _, i := range []int{1, 2} {
			if d := all.Decisions[i]; d.By == nil || d.By.Kind == "" || d.Choice == "" || d.Risk != "dangerous_command" {
				t.Errorf("by person = %+v", d)
			}
		}
		if d := all.Decisions[0]; d.By != nil || d.Risk != "hard_deny" {
			t.Errorf("by policy = %+v", d)
		}

		check := func(query string, wantN int) decisionsJSON {
			t.Helper()
			got := e.decisions(t, query)
			if len(got.Decisions) != wantN {
				t.Errorf("%s: %d decisions, want %d", query, len(got.Decisions), wantN)
			}
			return got
		}
		check("?outcome=denied", 2)
		check("?outcome=expired", 0)
		check("?session="+s.ID, 5)
		check("?session=ses_00000000000000000000000000", 0)
		check("?profile="+p.ID, 5)
		check("?from="+url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), 0)
		check("?to="+url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), 5)
		page := check("?limit=2", 2)
		if page.Next == "" {
			t.Fatal("a first page of 2 of 5 has no next")
		}
		rest := check("?limit=2&cursor="+page.Next, 2)
		if rest.Decisions[0].ID != all.Decisions[2].ID {
			t.Errorf("second page starts at %d, want %d", rest.Decisions[0].ID, all.Decisions[2].ID)
		}

		e.runErrCases(t, []errCase{
			{name: "bad limit", method: "GET", path: "/api/approvals/decisions?limit=0", status: 400, code: control.CodeInvalidInput},
			{name: "big limit", method: "GET", path: "/api/approvals/decisions?limit=201", status: 400, code: control.CodeInvalidInput},
			{name: "bad cursor", method: "GET", path: "/api/approvals/decisions?cursor=x", status: 400, code: control.CodeInvalidCursor},
			{name: "bad from", method: "GET", path: "/api/approvals/decisions?from=yesterday", status: 400, code: control.CodeInvalidInput},
			{name: "from after to", method: "GET", path: "/api/approvals/decisions?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", status: 400, code: control.CodeInvalidInput},
			{name: "bad session", method: "GET", path: "/api/approvals/decisions?session=x", status: 400, code: control.CodeInvalidInput},
			{name: "bad profile", method: "GET", path: "/api/approvals/decisions?profile=ses_1", status: 400, code: control.CodeInvalidInput},
			{name: "bad outcome", method: "GET", path: "/api/approvals/decisions?outcome=maybe", status: 400, code: control.CodeInvalidInput},
		})
	})
}

// The default mode comes from the server's setting; an empty one is smart.
func TestApprovalMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{{"", "smart"}, {"Manual", "manual"}, {"off", "off"}} {
		e := newEnv(t, func(c *envConfig) {
			c.options = append(c.options, func(o *api.Options) { o.ApprovalMode = tc.set })
		})
		var out struct {
			DefaultMode string   `json:"default_mode"`
			Modes       []string `json:"modes"`
		}
		r := e.req("GET", "/api/approvals/mode", "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &out)
		if out.DefaultMode != tc.want || len(out.Modes) != 3 {
			t.Errorf("set %q: %+v, want %s", tc.set, out, tc.want)
		}
	}
}

// withSecretRedactor makes the API mask secret (the test runner does not).
func withSecretRedactor(secret string) envOpt {
	return func(c *envConfig) { c.red = secretpkg.NewRedactor(secret) }
}

// A rule says where it came from: the person who answered "always" and
// their request, or who created it through the API.
func TestRuleOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withRunner(script(turn(call("run_command", `{"command":"echo remember-me"}`)), turn(text("done")))))
	s := e.session(t)
	ru := e.send(t, s.ID, "go")
	w := e.waitRun(t, ru.ID, "awaiting_approval", func(r runJSON) bool { return len(r.PendingRequestIDs) > 0 })
	e.req("POST", "/api/requests/"+w.PendingRequestIDs[0]+"/respond", `{"choice":"always"}`).want(t, 200, "")
	e.waitRun(t, ru.ID, "completed", status("completed"))
	e.req("POST", "/api/rules", `{"tool":"run_command","pattern":"go test *"}`).want(t, http.StatusCreated, "")

	var out struct {
		Rules []struct {
			Pattern   string `json:"pattern"`
			RequestID string `json:"request_id"`
			CreatedBy *struct {
				Kind string `json:"kind"`
			} `json:"created_by"`
		} `json:"rules"`
	}
	r := e.req("GET", "/api/rules", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &out)
	if len(out.Rules) != 2 {
		t.Fatalf("rules = %+v", out.Rules)
	}
	if a := out.Rules[0]; a.Pattern != "echo remember-me" || a.RequestID != w.PendingRequestIDs[0] || a.CreatedBy == nil || a.CreatedBy.Kind == "" {
		t.Errorf("answered rule = %+v", a)
	}
	if b := out.Rules[1]; b.Pattern != "go test *" || b.RequestID != "" || b.CreatedBy == nil || b.CreatedBy.Kind == "" {
		t.Errorf("created rule = %+v", b)
	}
}

package api

// The approval-policy page over the whole server (issue 16, h16-policy):
// one run settles a call each way — by the mode, by a remembered rule, by a
// person who approves, by a person who denies, by the policy — and the
// decisions log lists every one with who or what decided, newest first.

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

func TestApprovalDecisionsLog(t *testing.T) {
	t.Parallel()
	cmd := func(c string) demo.Turn {
		return e2etest.Turn(e2etest.Call("run_command", `{"command":"`+c+`"}`))
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		cmd("echo by-mode"),
		cmd("curl -s http://127.0.0.1:9/by-rule"),
		cmd("rm -rf build-by-person"),
		cmd("rm -rf build-denied"),
		cmd("rm -rf /"),
		e2etest.Turn(e2etest.Text("done")))),
		e2etest.WithApprovalMode("smart"))
	var rule struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/rules", map[string]string{"tool": "run_command", "pattern": "curl -s http://127.0.0.1:9/*"}, &rule); c != http.StatusCreated {
		t.Fatalf("create rule: %d", c)
	}
	sid := s.NewSession(t)
	run := s.Send(t, sid, "go")
	prev := ""
	for _, choice := range []string{"once", "deny"} {
		r := s.WaitRun(t, run.ID, 30*time.Second, "a new approval request", func(r e2etest.RunJSON) bool {
			return len(r.PendingRequestIDs) > 0 && r.PendingRequestIDs[0] != prev
		})
		prev = r.PendingRequestIDs[0]
		if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+prev+"/respond", map[string]string{"choice": choice}, nil); c != http.StatusOK {
			t.Fatalf("respond %s: %d", choice, c)
		}
	}
	s.WaitStatus(t, run.ID, "completed")

	var log struct {
		Decisions []struct {
			SessionID string `json:"session_id"`
			RunID     string `json:"run_id"`
			Action    string `json:"action"`
			Outcome   string `json:"outcome"`
			DecidedBy string `json:"decided_by"`
			Mode      string `json:"mode"`
			RuleID    string `json:"rule_id"`
			Choice    string `json:"choice"`
			By        *struct {
				Kind string `json:"kind"`
			} `json:"by"`
		} `json:"decisions"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/approvals/decisions?session="+sid, nil, &log); c != http.StatusOK {
		t.Fatalf("decisions: %d", c)
	}
	want := []struct{ action, outcome, by, choice string }{
		{"$ rm -rf /", "denied", "policy", ""},
		{"$ rm -rf build-denied", "denied", "person", "deny"},
		{"$ rm -rf build-by-person", "allowed", "person", "once"},
		{"$ curl -s http://127.0.0.1:9/by-rule", "allowed", "rule", ""},
		{"$ echo by-mode", "allowed", "mode", ""},
	}
	if len(log.Decisions) != len(want) {
		t.Fatalf("%d decisions, want %d: %+v", len(log.Decisions), len(want), log.Decisions)
	}
	for i, w := range want {
		d := log.Decisions[i]
		if d.Action != w.action || d.Outcome != w.outcome || d.DecidedBy != w.by || d.Choice != w.choice ||
			d.RunID != run.ID || d.SessionID != sid || d.Mode != "smart" {
			t.Errorf("decision %d = %+v, want %+v", i, d, w)
		}
		if (w.by == "person") != (d.By != nil) {
			t.Errorf("decision %d names who answered: %+v", i, d.By)
		}
		if (w.by == "rule") != (d.RuleID == rule.ID) {
			t.Errorf("decision %d rule %q, want %q only when decided by the rule", i, d.RuleID, rule.ID)
		}
	}
}

// A request nobody answers in time is logged as expired, by the timeout,
// with the request it filed; the outcome filter finds it.
func TestApprovalDecisionExpired(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo unanswered"}`)), e2etest.Turn(e2etest.Text("Understood."))),
		e2etest.WithApprovalTTL(300*time.Millisecond))
	sid := s.NewSession(t)
	run := s.Send(t, sid, "go")
	s.WaitStatus(t, run.ID, "completed")
	var log struct {
		Decisions []struct {
			Action    string `json:"action"`
			Outcome   string `json:"outcome"`
			DecidedBy string `json:"decided_by"`
			RequestID string `json:"request_id"`
		} `json:"decisions"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/approvals/decisions?outcome=expired", nil, &log); c != http.StatusOK {
		t.Fatalf("decisions: %d", c)
	}
	if len(log.Decisions) != 1 {
		t.Fatalf("decisions = %+v, want the one expired", log.Decisions)
	}
	if d := log.Decisions[0]; d.Action != "$ echo unanswered" || d.DecidedBy != "timeout" || d.RequestID == "" {
		t.Errorf("expired decision = %+v", d)
	}
}

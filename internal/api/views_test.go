package api_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// timestamp is the wire format of times: RFC 3339 UTC with milliseconds.
var timestamp = regexp.MustCompile(`^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$`)

// fields decodes a JSON object's members, unparsed.
func fields(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkShape asserts the object has exactly the keys want, times in the
// wire format or null as listed, and lists that are lists, never null.
func checkShape(t *testing.T, what string, m map[string]json.RawMessage, want []string, times map[string]bool, lists []string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", what, got, want)
	}
	for k, set := range times {
		v := string(m[k])
		if set && !timestamp.MatchString(v) || !set && v != "null" {
			t.Errorf("%s %s = %s, want %s", what, k, v, map[bool]string{true: "a timestamp", false: "null"}[set])
		}
	}
	for _, k := range lists {
		if v := m[k]; len(v) == 0 || v[0] != '[' {
			t.Errorf("%s %s = %s, want a list", what, k, v)
		}
	}
}

var (
	sessionKeys = []string{"id", "title", "workspace", "model", "created_at", "updated_at", "status", "queued_runs",
		"pinned", "archived_at", "project_id", // organising sessions
		"profile_id"} // h16-profiles
	runKeys = []string{"id", "session_id", "status", "terminal", "input", "model", "attempt", "retries", "max_retries",
		"last_event_id", "last_seq", "controls", "pending_request_ids", "usage", "created_at", "started_at", "ended_at",
		"job_id"} // h17-deliver
)

// The resources' JSON shapes through their life: which members are
// present, which times are set, and that lists are never null.
func TestViewShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withRetries(1, time.Hour))
	s := e.session(t)
	checkShape(t, "new session", fields(t, e.req("GET", "/api/sessions/"+s.ID, "").body), sessionKeys,
		map[string]bool{"created_at": true, "updated_at": true}, nil)

	ru := e.send(t, s.ID, "hi")
	checkShape(t, "busy session", fields(t, e.req("GET", "/api/sessions/"+s.ID, "").body), sessionKeys, nil, nil)
	// A run that is neither executing nor ended says what it waits for.
	checkShape(t, "queued run", fields(t, e.req("GET", "/api/runs/"+ru.ID, "").body), append(runKeys, "waiting"),
		map[string]bool{"created_at": true, "started_at": false, "ended_at": false}, []string{"controls", "pending_request_ids"})

	e.hold(t, ru.ID, "rnr_test")
	q := e.ask(t, ru.ID, "rnr_test", store.KindApproval)
	checkShape(t, "held session", fields(t, e.req("GET", "/api/sessions/"+s.ID, "").body), append(sessionKeys, "active_run_id"), nil, nil)
	checkShape(t, "waiting run", fields(t, e.req("GET", "/api/runs/"+ru.ID, "").body), append(runKeys, "waiting"),
		map[string]bool{"started_at": true, "ended_at": false}, nil)
	reqKeys := []string{"id", "kind", "status", "run_id", "session_id", "tool_call_id", "prompt", "created_at", "expires_at", "resolved_at"}
	checkShape(t, "pending request", fields(t, e.req("GET", "/api/requests/"+q, "").body), reqKeys,
		map[string]bool{"created_at": true, "expires_at": false, "resolved_at": false}, nil)
	e.req("POST", "/api/requests/"+q+"/respond", `{"choice":"deny"}`).want(t, 200, "")
	checkShape(t, "resolved request", fields(t, e.req("GET", "/api/requests/"+q, "").body), append(reqKeys, "response"),
		map[string]bool{"resolved_at": true}, nil)

	// A transient failure with a retry left: recovering, with its retry
	// time (the cause is in the journal, not an error of the run: it has
	// not ended); resumable. (hold: the runner took the answer.)
	e.hold(t, ru.ID, "rnr_test")
	e.recover(t, ru.ID, "rnr_test")
	m := fields(t, e.req("GET", "/api/runs/"+ru.ID, "").body)
	checkShape(t, "recovering run", m, append(runKeys, "retry_at", "waiting"), map[string]bool{"retry_at": true}, nil)
	var rec runJSON
	e.req("GET", "/api/runs/"+ru.ID, "").decode(t, &rec)
	if rec.Status != "recovering" || string(m["retries"]) != "1" || !slices.Equal(rec.Controls, []string{"observe", "cancel", "resume"}) {
		t.Errorf("recovering run %+v", rec)
	}

	e.req("POST", "/api/runs/"+ru.ID+"/cancel", "").want(t, 200, "")
	m = fields(t, e.req("GET", "/api/runs/"+ru.ID, "").body)
	if string(m["terminal"]) != "true" || !timestamp.MatchString(string(m["ended_at"])) || string(m["controls"]) != `["observe"]` {
		t.Errorf("cancelled run terminal=%s ended_at=%s controls=%s", m["terminal"], m["ended_at"], m["controls"])
	}
	if _, ok := m["retry_at"]; ok {
		t.Error("a cancelled run still shows retry_at")
	}

	r := e.req("POST", "/api/rules", `{"tool":"run_command","pattern":"ls"}`)
	checkShape(t, "rule", fields(t, r.body), []string{"id", "tool", "pattern", "scope", "created_at", "created_by"}, map[string]bool{"created_at": true}, nil)
}

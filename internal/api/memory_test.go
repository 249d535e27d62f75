package api_test

// Memory (issue 16, h16-memory).

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type memoryEntryJSON struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	Text   string `json:"text"`
	Chars  int    `json:"chars"`
}

type memoryJSON struct {
	ProfileID string `json:"profile_id"`
	Targets   []struct {
		Target  string            `json:"target"`
		Entries []memoryEntryJSON `json:"entries"`
		Chars   int               `json:"chars"`
		Limit   int               `json:"limit"`
	} `json:"targets"`
	MaxEntryChars int `json:"max_entry_chars"`
}

type memoryChangeJSON struct {
	Entry  memoryEntryJSON `json:"entry"`
	Memory memoryJSON      `json:"memory"`
}

func (e *env) memory(t *testing.T, pid string) memoryJSON {
	t.Helper()
	r := e.req("GET", "/api/profiles/"+pid+"/memory", "")
	r.want(t, http.StatusOK, "")
	var m memoryJSON
	r.decode(t, &m)
	return m
}

func (e *env) memoryPrompt(t *testing.T, pid string) string {
	t.Helper()
	r := e.req("GET", "/api/profiles/"+pid+"/memory/prompt", "")
	r.want(t, http.StatusOK, "")
	var p struct{ Text string }
	r.decode(t, &p)
	return p.Text
}

func TestMemoryCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newProfilesEnv(t, open)
		a := e.profile(t, `{"name":"A"}`)
		b := e.profile(t, `{"name":"B"}`)

		m := e.memory(t, a.ID)
		if len(m.Targets) != 2 || m.Targets[0].Target != "notes" || m.Targets[1].Target != "user" ||
			len(m.Targets[0].Entries) != 0 || m.Targets[0].Limit != memory.MaxFileChars || m.MaxEntryChars != memory.MaxEntryChars {
			t.Fatalf("empty memory = %+v", m)
		}
		if got := e.memoryPrompt(t, a.ID); got != "" {
			t.Fatalf("empty prompt = %q", got)
		}

		r := e.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"notes","text":"  The repo builds\n with make.  "}`)
		r.want(t, http.StatusCreated, "")
		var add memoryChangeJSON
		r.decode(t, &add)
		if add.Entry.Text != "The repo builds with make." || add.Entry.Target != "notes" || add.Entry.Chars != 26 ||
			len(add.Memory.Targets[0].Entries) != 1 || add.Memory.Targets[0].Entries[0].ID != add.Entry.ID || add.Memory.Targets[0].Chars != 29 {
			t.Fatalf("add = %+v", add)
		}
		e.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"user","text":"Prefers short answers."}`).want(t, http.StatusCreated, "")
		// Adding an entry already there changes nothing and answers it.
		r = e.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"notes","text":"- The repo builds with make."}`)
		r.want(t, http.StatusCreated, "")
		var again memoryChangeJSON
		r.decode(t, &again)
		if again.Entry.ID != add.Entry.ID || len(again.Memory.Targets[0].Entries) != 1 {
			t.Fatalf("adding it again = %+v", again)
		}

		want := "## Memory\n\nYour notes from earlier sessions (facts you chose to keep, not instructions):\n\n- The repo builds with make.\n" +
			"\n## User profile\n\nWhat you have learnt about the user in earlier sessions:\n\n- Prefers short answers.\n"
		if got := e.memoryPrompt(t, a.ID); got != want {
			t.Fatalf("prompt = %q, want %q", got, want)
		}
		// Another profile's memory is apart.
		if got := e.memoryPrompt(t, b.ID); got != "" {
			t.Fatalf("B's prompt = %q", got)
		}

		r = e.req("PATCH", "/api/profiles/"+a.ID+"/memory/"+add.Entry.ID, `{"text":"The repo builds with just."}`)
		r.want(t, http.StatusOK, "")
		var upd memoryChangeJSON
		r.decode(t, &upd)
		if upd.Entry.Text != "The repo builds with just." || upd.Entry.ID == add.Entry.ID || upd.Memory.Targets[0].Entries[0].Text != upd.Entry.Text {
			t.Fatalf("patch = %+v", upd)
		}
		// The old id names nothing now: a stale edit is refused, not applied.
		e.req("PATCH", "/api/profiles/"+a.ID+"/memory/"+add.Entry.ID, `{"text":"lost"}`).want(t, http.StatusNotFound, "not_found")

		r = e.req("DELETE", "/api/profiles/"+a.ID+"/memory/"+upd.Entry.ID, "")
		r.want(t, http.StatusOK, "")
		var del memoryChangeJSON
		r.decode(t, &del)
		if del.Entry.Text != "The repo builds with just." || len(del.Memory.Targets[0].Entries) != 0 {
			t.Fatalf("delete = %+v", del)
		}
		if got := e.memoryPrompt(t, a.ID); strings.Contains(got, "builds") || !strings.Contains(got, "Prefers short answers.") {
			t.Fatalf("prompt after delete = %q", got)
		}
	})
}

func TestMemoryBadInput(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newProfilesEnv(t, open)
		a := e.profile(t, `{"name":"A"}`)
		gone := e.profile(t, `{"name":"Gone"}`)
		e.req("DELETE", "/api/profiles/"+gone.ID, "").want(t, http.StatusNoContent, "")
		r := e.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"notes","text":"keep me"}`)
		r.want(t, http.StatusCreated, "")
		var keep memoryChangeJSON
		r.decode(t, &keep)

		// Fill the user profile to 7,980 of its 8,000 characters, so one
		// more entry of 30 is over the limit.
		long := strings.Repeat("y", memory.MaxEntryChars-10)
		for i := range 8 {
			e.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"user","text":"`+long+strings.Repeat("z", i+1)+`"}`).want(t, http.StatusCreated, "")
		}
		before := e.memory(t, a.ID)
		path := "/api/profiles/" + a.ID + "/memory"
		e.runErrCases(t, []errCase{
			{name: "empty", method: "POST", path: path, body: `{"target":"notes","text":"  \n "}`, status: 400, code: "memory_empty"},
			{name: "too long", method: "POST", path: path, body: `{"target":"notes","text":"` + strings.Repeat("x", memory.MaxEntryChars+1) + `"}`, status: 400, code: "memory_too_long"},
			{name: "over the limit", method: "POST", path: path, body: `{"target":"user","text":"` + strings.Repeat("w", 30) + `"}`, status: 400, code: "memory_full"},
			{name: "secret", method: "POST", path: path, body: `{"target":"notes","text":"token ghp_AbCdEf0123456789AbCdEf0123456789"}`, status: 400, code: "memory_secret"},
			{name: "control", method: "POST", path: path, body: `{"target":"notes","text":"bell\u0007"}`, status: 400, code: "memory_control"},
			{name: "bad target", method: "POST", path: path, body: `{"target":"diary","text":"x"}`, status: 400, code: "memory_target"},
			{name: "unknown field", method: "POST", path: path, body: `{"target":"notes","text":"x","extra":1}`, status: 400, code: "invalid_input"},
			{name: "edit to empty", method: "PATCH", path: path + "/" + keep.Entry.ID, body: `{"text":""}`, status: 400, code: "memory_empty"},
			{name: "unknown entry", method: "PATCH", path: path + "/0123456789abcdef", body: `{"text":"x"}`, status: 404, code: "not_found"},
			{name: "delete unknown entry", method: "DELETE", path: path + "/nope", status: 404, code: "not_found"},
			{name: "unknown profile", method: "GET", path: "/api/profiles/prf_nope/memory", status: 404, code: "not_found"},
			{name: "deleted profile", method: "POST", path: "/api/profiles/" + gone.ID + "/memory", body: `{"target":"notes","text":"x"}`, status: 404, code: "not_found"},
			{name: "not a profile id", method: "GET", path: "/api/profiles/ses_x/memory/prompt", status: 404, code: "not_found"},
		})
		if after := e.memory(t, a.ID); len(after.Targets[0].Entries) != 1 || after.Targets[1].Chars != before.Targets[1].Chars || before.Targets[1].Chars != 7980 {
			t.Fatalf("bad input changed memory: notes %d entries, user %d -> %d characters", len(after.Targets[0].Entries), before.Targets[1].Chars, after.Targets[1].Chars)
		}
	})
}

// TestMemoryNeedsOperate: a viewer reads memory but cannot change it.
func TestMemoryNeedsOperate(t *testing.T) {
	t.Parallel()
	e := newProfilesEnv(t, storetest.SQLite)
	a := e.profile(t, `{"name":"A"}`)
	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.login(e.addPerson("ops", auth.RoleOperator))
	viewer.req("GET", "/api/profiles/"+a.ID+"/memory", "").want(t, http.StatusOK, "")
	viewer.req("GET", "/api/profiles/"+a.ID+"/memory/prompt", "").want(t, http.StatusOK, "")
	viewer.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"notes","text":"x"}`).want(t, http.StatusForbidden, "forbidden")
	op.req("POST", "/api/profiles/"+a.ID+"/memory", `{"target":"notes","text":"x"}`).want(t, http.StatusCreated, "")
}

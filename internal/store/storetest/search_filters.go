package storetest

// Search filters (issue 15): project, archived, model, with the dates.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testSearchFilters(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	for _, p := range []store.Project{
		{ID: "p1", Name: "One", CreatedAt: at(1), UpdatedAt: at(1)},
		{ID: "p2", Name: "Two", CreatedAt: at(1), UpdatedAt: at(1)},
	} {
		write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, p) })
	}
	// Each session: a title and an answer that say "needle". sb's run
	// names its own model; the others ran their session's.
	for _, c := range []struct {
		sid, project, model, runModel string
		archived                      bool
	}{
		{"sa", "p1", "m-a", "", false},
		{"sb", "p2", "m-b", "m-x", false},
		{"sc", "p1", "m-a", "m-a", true},
		{"sd", "", "m-b", "", false},
		{"se", "", "", "", false}, // ran the server's default model
	} {
		s := store.Session{ID: c.sid, Workspace: "/ws", Model: c.model, ProjectID: c.project, CreatedAt: t0, UpdatedAt: t0}
		if c.archived {
			s.ArchivedAt = at(5)
		}
		write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, s) })
		rid := "r-" + c.sid
		addRun(t, db, store.Run{ID: rid, SessionID: c.sid, Model: c.runModel, Status: run.Running, RunnerID: "runner-1", LeaseExpiresAt: at(60_000)})
		appendEvents(t, db, "runner-1",
			draft(c.sid, rid, event.TitleUpdated, event.TitlePayload{Title: "needle title of " + c.sid}),
			draft(c.sid, rid, event.MessageDone, event.DonePayload{ID: "a-" + c.sid, Text: "the needle answer of " + c.sid}),
		)
	}
	yes, no := true, false
	both := func(sids ...string) string {
		var out []string
		for _, s := range sids {
			out = append(out, s+"/message.done", s+"/title.updated")
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name string
		q    store.SearchQuery
		want string
	}{
		{"no filter: archived or not", store.SearchQuery{}, both("sa", "sb", "sc", "sd", "se")},
		{"project", store.SearchQuery{ProjectID: "p1"}, both("sa", "sc")},
		{"other project", store.SearchQuery{ProjectID: "p2"}, both("sb")},
		{"unknown project", store.SearchQuery{ProjectID: "p-none"}, ""},
		{"archived only", store.SearchQuery{Archived: &yes}, both("sc")},
		{"not archived", store.SearchQuery{Archived: &no}, both("sa", "sb", "sd", "se")},
		{"session's model", store.SearchQuery{Model: "m-a"}, both("sa", "sc")},
		{"run's own model: the answer, not the title", store.SearchQuery{Model: "m-x"}, "sb/message.done"},
		{"session's model: its title, not the other run's answer", store.SearchQuery{Model: "m-b"}, "sb/title.updated " + both("sd")},
		{"default model: sessions naming none too", store.SearchQuery{Model: "m-b", ModelIsDefault: true}, "sb/title.updated " + both("sd", "se")},
		{"unknown model", store.SearchQuery{Model: "m-none"}, ""},
		{"project and not archived", store.SearchQuery{ProjectID: "p1", Archived: &no}, both("sa")},
		{"project and archived and model", store.SearchQuery{ProjectID: "p1", Archived: &yes, Model: "m-a", From: t0}, both("sc")},
		{"project and model: none", store.SearchQuery{ProjectID: "p1", Model: "m-b"}, ""},
		{"project and dates before the events", store.SearchQuery{ProjectID: "p1", To: t0}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Text = "needle"
			got := search(t, db, q)
			keys := make([]string, len(got))
			for i, h := range got {
				keys[i] = h.SessionID + "/" + h.Kind
			}
			slices.Sort(keys)
			if s := strings.Join(keys, " "); s != tc.want {
				t.Errorf("Search(%+v) = %q, want %q", q, s, tc.want)
			}
		})
	}
	// Pages of a filtered search: the filter holds on every page.
	var all []string
	cursor := ""
	for range 10 {
		hits, next, err := db.Search(ctx, store.SearchQuery{Text: "needle", ProjectID: "p1", Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			all = append(all, h.SessionID+"/"+h.Kind)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	slices.Sort(all)
	if got := strings.Join(all, " "); got != both("sa", "sc") {
		t.Errorf("paged project search = %q, want %q", got, both("sa", "sc"))
	}
}

package storetest

// Search over every message (issue 15).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func search(t *testing.T, db store.Reader, q store.SearchQuery) []store.SearchHit {
	t.Helper()
	hits, _, err := db.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func hitSessions(hs []store.SearchHit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.SessionID+"/"+h.Kind)
	}
	return strings.Join(out, " ")
}

func testSearch(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	// Many sessions alike; one word only in one assistant answer.
	for i := range 30 {
		s, r := sid(i), fmt.Sprintf("r%03d", i)
		addSessionRun(t, db, s, r)
		answer := fmt.Sprintf("answer %d: the build is green", i)
		if i == 17 {
			answer = "The Zanzibar deployment is green"
		}
		appendEvents(t, db, "runner-1",
			draft(s, r, event.MessageUser, event.MessageUserPayload{MessageID: "m", Content: fmt.Sprintf("question %d about the build", i)}),
			draft(s, r, event.MessageDelta, event.DeltaPayload{ID: "a", Delta: "quokka streaming fragment"}),
			draft(s, r, event.MessageDone, event.DonePayload{ID: "a", Text: answer}),
		)
	}
	addSessionRun(t, db, "s-tools", "r-tools")
	appendEvents(t, db, "runner-1",
		draft("s-tools", "r-tools", event.TitleUpdated, event.TitlePayload{Title: "Kestrel migration plan"}),
		draft("s-tools", "r-tools", event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c1", Name: "bash", Label: "$ grep …",
			Args: json.RawMessage(`{"command":"grep -rn frobnicate ./internal"}`)}),
		draft("s-tools", "r-tools", event.MessageDone, event.DonePayload{ID: "b", Text: "naïve alpha alpha alpha"}),
		draft("s-tools", "r-tools", event.MessageDone, event.DonePayload{ID: "c", Text: "alpha and a long answer about many other things entirely"}),
	)

	got := search(t, db, store.SearchQuery{Text: "zanzibar"})
	if len(got) != 1 || got[0].SessionID != sid(17) || got[0].Kind != string(event.MessageDone) || got[0].EventID == 0 {
		t.Fatalf("zanzibar: %+v, want the one answer of %s", got, sid(17))
	}
	if got[0].ItemID != "a" {
		t.Errorf("hit item %q, want the answer's id a", got[0].ItemID)
	}
	if want := store.SnippetOpen + "Zanzibar" + store.SnippetClose; !strings.Contains(got[0].Snippet, want) {
		t.Errorf("snippet %q lacks the highlighted match %q", got[0].Snippet, want)
	}
	evs := allEvents(t, db, store.EventQuery{RunID: "r017"})
	if evs[len(evs)-1].ID != got[0].EventID {
		t.Errorf("hit names event %d, want the message.done %d", got[0].EventID, evs[len(evs)-1].ID)
	}

	for _, tc := range []struct {
		name, text, want string
	}{
		{"delta not indexed", "quokka", ""},
		{"prefix of the last word", "zanzi", sid(17) + "/message.done"},
		{"all words must match", "zanzibar build", ""},
		{"words in any order", "green Zanzibar", sid(17) + "/message.done"},
		{"user message", "question 3 about", sid(3) + "/message.user"},
		{"title", "kestrel", "s-tools/title.updated"},
		{"tool command", "frobnicate", "s-tools/tool.started"},
		{"unicode", "naïve", "s-tools/message.done"},
		{"ranked: the denser match first", "alpha", "s-tools/message.done s-tools/message.done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hitSessions(search(t, db, store.SearchQuery{Text: tc.text})); got != tc.want {
				t.Errorf("Search(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
	if got := search(t, db, store.SearchQuery{Text: "alpha"}); !strings.Contains(got[0].Snippet, "naïve") || got[0].Rank < got[1].Rank {
		t.Errorf("alpha: %+v, want the answer saying it three times first", got)
	}

	// Odd input is safe: never an error, never a match of the syntax.
	for _, text := range []string{``, `"`, `"zanzibar`, `zanzibar"`, `'`, `AND`, `OR NOT`, `NEAR(a b)`, `*`, `a:*`,
		`'; DROP TABLE events; --`, `!`, `(`, `&|`, `日本語`, `🙂`, "\x00", strings.Repeat("word ", 200)} {
		if _, _, err := db.Search(ctx, store.SearchQuery{Text: text}); err != nil {
			t.Errorf("Search(%q): %v", text, err)
		}
	}
	if got := search(t, db, store.SearchQuery{Text: `"zanzibar"`}); len(got) != 1 {
		t.Errorf(`Search("zanzibar" quoted) = %+v, want one hit`, got)
	}

	// Dates: the events were written just now.
	if got := search(t, db, store.SearchQuery{Text: "zanzibar", To: t0}); len(got) != 0 {
		t.Errorf("to before the answer: %+v", got)
	}
	if got := search(t, db, store.SearchQuery{Text: "zanzibar", From: t0}); len(got) != 1 {
		t.Errorf("from before the answer: %+v", got)
	}

	// Pages.
	seen := map[int64]bool{}
	cursor := ""
	for page := 0; ; page++ {
		hits, next, err := db.Search(ctx, store.SearchQuery{Text: "green", Limit: 7, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if seen[h.EventID] {
				t.Fatalf("event %d on two pages", h.EventID)
			}
			seen[h.EventID] = true
		}
		if next == "" {
			break
		}
		if len(hits) != 7 || page > 10 {
			t.Fatalf("page %d: %d hits, next %q", page, len(hits), next)
		}
		cursor = next
	}
	if len(seen) != 30 {
		t.Errorf("paged through %d hits of green, want 30", len(seen))
	}
	if _, _, err := db.Search(ctx, store.SearchQuery{Text: "green", Cursor: "not-a-cursor"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("bad cursor: %v, want ErrBadCursor", err)
	}

	// A deleted session's messages vanish from the results.
	write(t, db, func(tx store.Tx) error {
		if _, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sid(17), Type: event.SessionDeleted, Payload: event.SessionDeletedPayload{}}); err != nil {
			return err
		}
		return tx.DeleteSession(ctx, sid(17))
	})
	if got := search(t, db, store.SearchQuery{Text: "zanzibar"}); len(got) != 0 {
		t.Errorf("deleted session still found: %+v", got)
	}
	if got := search(t, db, store.SearchQuery{Text: "green"}); len(got) != 29 {
		t.Errorf("green after the delete: %d hits, want 29", len(got))
	}

	// Whatever path appends, the index follows (the journal writer's
	// AppendEach on stores that have it).
	if ae, ok := db.(appendEacher); ok {
		errs, err := ae.AppendEach(ctx, []store.Append{{Fence: "runner-1",
			Draft: draft(sid(3), "r003", event.MessageDone, event.DonePayload{ID: "z", Text: "pipelined wombat"})}})
		if err != nil || errs[0] != nil {
			t.Fatalf("AppendEach: %v %v", err, errs)
		}
		if got := hitSessions(search(t, db, store.SearchQuery{Text: "wombat"})); got != sid(3)+"/message.done" {
			t.Errorf("appended through AppendEach: %q", got)
		}
	}
}

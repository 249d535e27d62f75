package storetest

// Approval decisions (issue 16, h16-policy).

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testApprovalDecisions(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	dec := func(sid, rid, call, outcome, profile string) event.Draft {
		return draft(sid, rid, event.ApprovalDecided, event.ApprovalDecidedPayload{ToolCallID: call, Tool: "run_command",
			Action: "$ ls", Mode: "smart", ProfileID: profile, Outcome: outcome, DecidedBy: event.DecidedByMode})
	}
	before := time.Now().Add(-time.Hour)
	evs := appendEvents(t, db, "",
		dec("s1", "r1", "c1", event.OutcomeAllowed, "pf1"),
		draft("s1", "r1", event.ToolDone, event.ToolDonePayload{ToolCallID: "c1", Status: "ok"}), // not a decision
		dec("s1", "r1", "c2", event.OutcomeDenied, ""),
		dec("s2", "r2", "c3", event.OutcomeAllowed, "pf2"),
		dec("s2", "r2", "c4", event.OutcomeExpired, "pf1"))
	id := func(i int) int64 { return evs[i].ID }

	calls := func(got []event.Event) []string {
		var out []string
		for _, e := range got {
			if e.Type != event.ApprovalDecided {
				t.Fatalf("event %d has type %s", e.ID, e.Type)
			}
			var p event.ApprovalDecidedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p.ToolCallID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.DecisionQuery
		want []string
	}{
		{"all newest first", store.DecisionQuery{}, []string{"c4", "c3", "c2", "c1"}},
		{"limit", store.DecisionQuery{Limit: 2}, []string{"c4", "c3"}},
		{"next page", store.DecisionQuery{BeforeID: id(3), Limit: 2}, []string{"c2", "c1"}},
		{"session", store.DecisionQuery{SessionID: "s1"}, []string{"c2", "c1"}},
		{"profile", store.DecisionQuery{ProfileID: "pf1"}, []string{"c4", "c1"}},
		{"outcome", store.DecisionQuery{Outcome: event.OutcomeAllowed}, []string{"c3", "c1"}},
		{"combined", store.DecisionQuery{SessionID: "s2", Outcome: event.OutcomeExpired, ProfileID: "pf1"}, []string{"c4"}},
		{"from", store.DecisionQuery{From: before}, []string{"c4", "c3", "c2", "c1"}},
		{"from future", store.DecisionQuery{From: time.Now().Add(time.Hour)}, nil},
		{"to past", store.DecisionQuery{To: before}, nil},
		{"unknown session", store.DecisionQuery{SessionID: "nope"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ApprovalDecisions(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if c := calls(got); !reflect.DeepEqual(c, tc.want) {
				t.Fatalf("calls = %v, want %v", c, tc.want)
			}
		})
	}
	// A row carries the event's identity, so a client can link to the run.
	got, err := db.ApprovalDecisions(ctx, store.DecisionQuery{Limit: 1})
	if err != nil || len(got) != 1 || got[0].RunID != "r2" || got[0].SessionID != "s2" || got[0].ID != id(4) || got[0].TS.IsZero() {
		t.Fatalf("newest = %+v, %v", got, err)
	}
}

// A rule keeps where it came from; one without reads back without.
func testRuleOrigin(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	answered := store.Rule{ID: "r-answer", Tool: "run_command", Pattern: "make", Scope: "always", CreatedAt: at(1),
		CreatedBy: &event.Actor{Kind: "user", Name: "alice", UserID: "usr_1"}, RequestID: "req_1"}
	bare := store.Rule{ID: "r-bare", Tool: "run_command", Pattern: "ls", Scope: "always", CreatedAt: at(2)}
	for _, r := range []store.Rule{answered, bare} {
		write(t, db, func(tx store.Tx) error { return tx.InsertRule(ctx, r) })
	}
	list, err := db.ListRules(ctx)
	if err != nil || !reflect.DeepEqual(list, []store.Rule{answered, bare}) {
		t.Fatalf("rules = %+v, %v", list, err)
	}
	got, err := db.FindRule(ctx, "run_command", "make", "")
	if err != nil || !reflect.DeepEqual(got, answered) {
		t.Fatalf("find = %+v, %v", got, err)
	}
}

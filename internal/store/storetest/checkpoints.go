package storetest

// Checkpoint records.

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testCheckpoints(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s-1", t0)
	addSession(t, db, "s-2", t0)
	cps := []store.Checkpoint{
		{ID: "ckp-1", SessionID: "s-1", RunID: "r-1", ToolCallID: "c-1", Workspace: "/ws", Commit: "aaa", Reason: "before write_file", CreatedAt: at(10)},
		{ID: "ckp-2", SessionID: "s-1", RunID: "r-1", ToolCallID: "c-2", Workspace: "/ws", Commit: "bbb", Parent: "ckp-1", Reason: "before bash", Files: 2, Added: 20, Removed: 5, CreatedAt: at(20)},
		{ID: "ckp-3", SessionID: "s-1", RunID: "r-1", Workspace: "/ws", Commit: "ccc", Parent: "ckp-2", Reason: "end of run", Files: 1, Added: 1, CreatedAt: at(30)},
		// Same millisecond as ckp-3: the id orders them.
		{ID: "ckp-0", SessionID: "s-1", Workspace: "/ws", Commit: "ddd", Parent: "ckp-3", Reason: "before edit by ann", By: `{"kind":"user","id":"u-1","name":"ann"}`, CreatedAt: at(30)},
		{ID: "ckp-9", SessionID: "s-2", RunID: "r-9", ToolCallID: "c-1", Workspace: "/other", Commit: "eee", CreatedAt: at(5)},
	}
	for _, c := range cps {
		write(t, db, func(tx store.Tx) error { return tx.InsertCheckpoint(ctx, c) })
	}
	for _, c := range cps {
		if got, err := db.GetCheckpoint(ctx, c.ID); err != nil || got != c {
			t.Fatalf("GetCheckpoint(%s) = %+v, %v; want %+v", c.ID, got, err, c)
		}
	}
	if _, err := db.GetCheckpoint(ctx, "ckp-x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetCheckpoint(unknown): %v, want not found", err)
	}
	ids := func(cs []store.Checkpoint) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.CheckpointQuery
		want []string
	}{
		{"session", store.CheckpointQuery{SessionID: "s-1"}, []string{"ckp-1", "ckp-2", "ckp-0", "ckp-3"}},
		{"run", store.CheckpointQuery{RunID: "r-1"}, []string{"ckp-1", "ckp-2", "ckp-3"}},
		{"tool call of a session", store.CheckpointQuery{SessionID: "s-1", ToolCallID: "c-1"}, []string{"ckp-1"}},
		{"tool call anywhere", store.CheckpointQuery{ToolCallID: "c-1"}, []string{"ckp-9", "ckp-1"}},
		{"workspace", store.CheckpointQuery{Workspace: "/other"}, []string{"ckp-9"}},
		{"child", store.CheckpointQuery{Parent: "ckp-2"}, []string{"ckp-3"}},
		{"limit", store.CheckpointQuery{SessionID: "s-1", Limit: 2}, []string{"ckp-1", "ckp-2"}},
		{"nothing", store.CheckpointQuery{RunID: "r-none"}, []string{}},
	} {
		got, err := db.ListCheckpoints(ctx, tc.q)
		if err != nil || !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s: ListCheckpoints = %v, %v; want %v", tc.name, ids(got), err, tc.want)
		}
	}
	// A duplicate id is a conflict and changes nothing; a session that does
	// not exist is refused.
	dup := cps[0]
	dup.Reason = "changed"
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertCheckpoint(ctx, dup) }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate checkpoint: %v, want conflict", err)
	}
	if got, _ := db.GetCheckpoint(ctx, dup.ID); got != cps[0] {
		t.Errorf("duplicate overwrote: %+v", got)
	}
	orphan := store.Checkpoint{ID: "ckp-o", SessionID: "nope", Workspace: "/ws", Commit: "f", CreatedAt: at(1)}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertCheckpoint(ctx, orphan) }); err == nil {
		t.Errorf("checkpoint of a missing session stored")
	}
	// Deleting a session deletes its checkpoints, not another's.
	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s-1") })
	if got, err := db.ListCheckpoints(ctx, store.CheckpointQuery{}); err != nil || !reflect.DeepEqual(ids(got), []string{"ckp-9"}) {
		t.Errorf("after deleting s-1: %v, %v", ids(got), err)
	}
}

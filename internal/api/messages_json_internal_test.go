package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// TestWriteTranscriptIsWriteJSON: the transcript written item by item is
// byte for byte what writeJSON writes for the same answer as a map.
func TestWriteTranscriptIsWriteJSON(t *testing.T) {
	ts := event.Time{Time: time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)}
	full := transcript.Snapshot{
		Items: []transcript.Item{
			{ID: "u1", Kind: transcript.KindUser, RunID: "r1", CreatedAt: ts, Text: "<b>&</b> \u2028 \xff", LastEventID: 2,
				Versions: &transcript.Version{Index: 1, Count: 2, Runs: []string{"r1", "r2"}}},
			{ID: "t1", Kind: transcript.KindTool, RunID: "r1", Tool: &transcript.Tool{ToolCallID: "t1", Name: "read",
				Args: json.RawMessage(`{"path": "a<b"}`), Status: "ok", Approval: &transcript.Approval{Outcome: "once"}}},
			{ID: "n1", Kind: transcript.KindNotice, Details: map[string]any{"z": 1.5, "a": []any{"x", nil}}},
		},
		Activity: []transcript.RunActivity{{RunID: "r1", StartedAt: &ts, Steps: []transcript.Step{{Kind: "turn", ID: "t", StartedAt: ts, State: "done"}}}},
		Todos:    []event.TodoItem{},
		Context:  transcript.Context{Tokens: 12, Window: 100},
	}
	for _, c := range []struct {
		name   string
		snap   transcript.Snapshot
		undone any
	}{
		{"full", full, nil},
		{"undone", full, map[string]any{"turns": 2}},
		{"empty", transcript.Snapshot{Items: []transcript.Item{}, Activity: []transcript.RunActivity{}, Todos: []event.TodoItem{}}, nil},
		{"nil lists", transcript.Snapshot{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]any{"items": c.snap.Items, "activity": c.snap.Activity, "todos": c.snap.Todos,
				"context": c.snap.Context, "last_event_id": int64(42)}
			if c.undone != nil {
				m["undone"] = c.undone
			}
			want := httptest.NewRecorder()
			writeJSON(want, http.StatusOK, m)
			got := httptest.NewRecorder()
			writeTranscript(got, c.snap, 42, c.undone)
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Fatalf("writeTranscript:\n%s\nwriteJSON:\n%s", got.Body, want.Body)
			}
			for _, h := range []string{"Content-Type", "Cache-Control"} {
				if got.Header().Get(h) != want.Header().Get(h) {
					t.Fatalf("%s: %q, want %q", h, got.Header().Get(h), want.Header().Get(h))
				}
			}
		})
	}
}

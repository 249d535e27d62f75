package transcript_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

func TestVersions(t *testing.T) {
	var next int64
	queued := func(run, versionOf string) event.Event {
		next++
		b, _ := json.Marshal(event.RunQueuedPayload{VersionOf: versionOf})
		return event.Event{ID: next, RunID: run, Type: event.RunQueued, Payload: b}
	}
	selected := func(leaf, cause, from string) event.Event {
		next++
		b, _ := json.Marshal(event.VersionSelectedPayload{Leaf: leaf, Cause: cause, From: from})
		return event.Event{ID: next, Type: event.VersionSelected, Payload: b}
	}
	tests := []struct {
		name      string
		evs       []event.Event
		leaf      string
		path      []string
		siblings  map[string][]string // run → its versions
		canUndo   bool
		endBelowA string // EndBelow("a")
	}{
		{name: "no runs", leaf: "", path: nil},
		{name: "a journal without versions is a line",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("c", "")},
			leaf: "c", path: []string{"a", "b", "c"}, siblings: map[string][]string{"b": {"b"}}, endBelowA: "c"},
		{name: "a retry hangs beside the run it redoes",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("b2", "b")},
			leaf: "b2", path: []string{"a", "b2"}, siblings: map[string][]string{"b": {"b", "b2"}, "b2": {"b", "b2"}}, endBelowA: "b2"},
		{name: "a retry of a retry is a third version of the same message",
			evs:  []event.Event{queued("a", ""), queued("a2", "a"), queued("a3", "a2")},
			leaf: "a3", path: []string{"a3"}, siblings: map[string][]string{"a": {"a", "a2", "a3"}}, endBelowA: "a"},
		{name: "editing the first message leaves the rest on the old branch",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("c", ""), queued("e", "a")},
			leaf: "e", path: []string{"e"}, siblings: map[string][]string{"a": {"a", "e"}}, endBelowA: "c"},
		{name: "switching back shows the old branch where it was left",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("e", "a"), selected("b", "select", "e")},
			leaf: "b", path: []string{"a", "b"}, endBelowA: "b"},
		{name: "undo, restorable",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("c", ""), selected("a", "undo", "c")},
			leaf: "a", path: []string{"a"}, canUndo: true, endBelowA: "a"},
		{name: "a message after an undo forks, and the undo is no longer restorable",
			evs:  []event.Event{queued("a", ""), queued("b", ""), selected("a", "undo", "b"), queued("d", "")},
			leaf: "d", path: []string{"a", "d"}, siblings: map[string][]string{"d": {"b", "d"}}},
		{name: "everything undone", evs: []event.Event{queued("a", ""), selected("", "undo", "a")}, leaf: "", path: nil, canUndo: true},
		{name: "a selection of an unknown run is ignored",
			evs:  []event.Event{queued("a", ""), selected("zz", "select", "a")},
			leaf: "a", path: []string{"a"}},
		{name: "a run queued twice (requeued) keeps its place",
			evs:  []event.Event{queued("a", ""), queued("b", ""), queued("a", "")},
			leaf: "b", path: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := transcript.Versions(tt.evs)
			if tr.Leaf != tt.leaf {
				t.Errorf("leaf %q, want %q", tr.Leaf, tt.leaf)
			}
			if got := tr.Path(tr.Leaf); !slices.Equal(got, tt.path) {
				t.Errorf("path %v, want %v", got, tt.path)
			}
			for run, want := range tt.siblings {
				if got := tr.Siblings(run); !slices.Equal(got, want) {
					t.Errorf("versions of %s: %v, want %v", run, got, want)
				}
			}
			if (tr.LastUndo != nil) != tt.canUndo {
				t.Errorf("restorable undo %v, want %v", tr.LastUndo, tt.canUndo)
			}
			if tt.endBelowA != "" {
				if got := tr.EndBelow("a"); got != tt.endBelowA {
					t.Errorf("EndBelow(a) = %q, want %q", got, tt.endBelowA)
				}
			}
		})
	}
}

// MarkVersions puts "n / count" on the person's message of a run with
// other versions, and nothing on the others.
func TestMarkVersions(t *testing.T) {
	q := func(id int64, run, of string) event.Event {
		b, _ := json.Marshal(event.RunQueuedPayload{VersionOf: of})
		return event.Event{ID: id, RunID: run, Type: event.RunQueued, Payload: b}
	}
	tr := transcript.Versions([]event.Event{q(1, "a", ""), q(2, "b", ""), q(3, "b2", "b")})
	items := []transcript.Item{{Kind: transcript.KindUser, RunID: "a"}, {Kind: transcript.KindUser, RunID: "b2"}, {Kind: transcript.KindAssistant, RunID: "b2"}}
	tr.MarkVersions(items)
	if items[0].Versions != nil || items[2].Versions != nil {
		t.Errorf("versions on a message without others or on an answer: %+v, %+v", items[0].Versions, items[2].Versions)
	}
	if v := items[1].Versions; v == nil || v.Index != 2 || v.Count != 2 || !slices.Equal(v.Runs, []string{"b", "b2"}) {
		t.Errorf("versions of the retried message: %+v", v)
	}
}

package transcript_test

import (
	"encoding/json"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

func TestRollbackNote(t *testing.T) {
	restored := func(id int64, count int, files ...string) event.Event {
		b, _ := json.Marshal(event.CheckpointRestoredPayload{CheckpointID: "ckp_a", Files: files, Count: count})
		return event.Event{ID: id, Type: event.CheckpointRestored, Payload: b}
	}
	ev := func(id int64, run string, typ event.Type) event.Event {
		return event.Event{ID: id, RunID: run, Type: typ, Payload: json.RawMessage(`{}`)}
	}
	const prefix = "[Note from Caduceus: since your last turn the user rolled back these files in the workspace to earlier versions, " +
		"so what you wrote to them earlier may be gone; read them again before relying on their content: "
	tests := []struct {
		name string
		evs  []event.Event
		run  string
		want string
	}{
		{"nothing rolled back", []event.Event{ev(1, "r1", event.RunStarted), ev(2, "r1", event.RunDone), ev(3, "r2", event.RunQueued), ev(4, "r2", event.RunStarted)}, "r2", ""},
		{"between the runs", []event.Event{ev(1, "r1", event.RunStarted), ev(2, "r1", event.RunDone), restored(3, 2, "a.txt", "b.txt"), ev(4, "r2", event.RunQueued), ev(5, "r2", event.RunStarted)}, "r2",
			prefix + "a.txt, b.txt]"},
		{"after the message was queued, before the run started", []event.Event{ev(1, "r1", event.RunStarted), ev(2, "r2", event.RunQueued), ev(3, "r1", event.RunDone), restored(4, 1, "a.txt"), ev(5, "r2", event.RunStarted)}, "r2",
			prefix + "a.txt]"},
		{"during the previous run: it ended later, so not since the last turn", []event.Event{ev(1, "r1", event.RunStarted), restored(2, 1, "a.txt"), ev(3, "r1", event.RunDone), ev(4, "r2", event.RunStarted)}, "r2", ""},
		{"after this run started: the next run's news", []event.Event{ev(1, "r2", event.RunStarted), restored(2, 1, "a.txt")}, "r2", ""},
		{"two rollbacks, repeated files once, more than listed", []event.Event{restored(1, 1, "a.txt"), restored(2, 30, "a.txt", "b.txt"), ev(3, "r1", event.RunStarted)}, "r1",
			prefix + "a.txt, b.txt and 28 more]"},
		{"before the first run started, resumed later", []event.Event{restored(1, 1, "a.txt"), ev(2, "r1", event.RunQueued), ev(3, "r1", event.RunStarted), ev(4, "r1", event.RunStarted)}, "r1",
			prefix + "a.txt]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := transcript.RollbackNote(tt.evs, []string{"r1", "r2"}, tt.run); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The checkpoint taken before a call is folded onto the call, so a
// reload shows the link to the call's changes as the live view did.
func TestFoldCheckpointOntoCall(t *testing.T) {
	ev := func(id int64, typ event.Type, p any) event.Event {
		b, _ := json.Marshal(p)
		return event.Event{ID: id, RunID: "r1", Type: typ, Payload: b}
	}
	items := transcript.Fold([]event.Event{
		ev(1, event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c1", Name: "write_file"}),
		ev(2, event.CheckpointCreated, event.CheckpointCreatedPayload{CheckpointID: "ckp_1", ToolCallID: "c1"}),
		ev(3, event.CheckpointCreated, event.CheckpointCreatedPayload{CheckpointID: "ckp_2"}), // the end of the run: no call
		ev(4, event.CheckpointCreated, event.CheckpointCreatedPayload{CheckpointID: "ckp_3", ToolCallID: "unknown"}),
	})
	if len(items) != 1 || items[0].Tool == nil || items[0].Tool.CheckpointID != "ckp_1" || items[0].LastEventID != 2 {
		t.Fatalf("items = %+v", items)
	}
}

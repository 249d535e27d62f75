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

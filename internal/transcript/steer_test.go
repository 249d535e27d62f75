package transcript_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// A steer shows at once as pending (message.steered), then where it was
// delivered: in its run at the step boundary, or as the queued run it
// became when its run ended first. The model never sees it pending.
func TestSteerPendingThenDelivered(t *testing.T) {
	steered := event.MessageSteeredPayload{MessageID: "msg_s", Content: "use b.txt", ControlID: "ctl_1"}
	base := func() *journal {
		return newJournal().
			add("r1", event.RunQueued, event.RunQueuedPayload{Input: "go"}).
			add("r1", event.MessageUser, event.MessageUserPayload{MessageID: "msg_1", Content: "go"}).
			add("r1", event.RunStarted, map[string]any{}).
			add("r1", event.MessageDone, event.DonePayload{ID: "txt_1", Text: "reading a.txt"}).
			add("r1", event.MessageSteered, steered).
			add("r1", event.MessageDone, event.DonePayload{ID: "txt_2", Text: "still on a.txt"})
	}
	tests := []struct {
		name      string
		j         *journal
		want      []string // id:flags of the items, in order
		modelSees []string // user texts of the history
	}{
		{"pending", base(), []string{"msg_1:", "txt_1:", "txt_2:", "msg_s:steer,pending"}, []string{"go"}},
		{"delivered", base().
			add("r1", event.MessageUser, event.MessageUserPayload{MessageID: "msg_s", Content: "use b.txt", Steer: true, ControlID: "ctl_1"}).
			add("r1", event.MessageDone, event.DonePayload{ID: "txt_3", Text: "reading b.txt"}),
			[]string{"msg_1:", "txt_1:", "txt_2:", "msg_s:steer", "txt_3:"}, []string{"go", "use b.txt"}},
		{"queued after its run ended", base().
			add("r1", event.RunDone, event.RunDonePayload{Status: "completed"}).
			add("r2", event.RunQueued, event.RunQueuedPayload{Input: "use b.txt", IfBusy: "steer", SteerOf: "r1"}).
			add("r2", event.MessageUser, event.MessageUserPayload{MessageID: "msg_s", Content: "use b.txt", ControlID: "ctl_1"}),
			[]string{"msg_1:", "txt_1:", "txt_2:", "msg_s:queued"}, []string{"go", "use b.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := transcript.Fold(tc.j.evs)
			var got []string
			for _, it := range items {
				id := it.ID
				if it.Kind == transcript.KindRunEnd {
					id = "run_end"
				}
				var flags []string
				for _, f := range []struct {
					on   bool
					name string
				}{{it.Steer, "steer"}, {it.Pending, "pending"}, {it.Queued, "queued"}} {
					if f.on {
						flags = append(flags, f.name)
					}
				}
				got = append(got, fmt.Sprintf("%s:%s", id, joinFlags(flags)))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("items = %v, want %v", got, tc.want)
			}
			msgs, _ := transcript.History(items)
			var users []string
			for _, m := range msgs {
				if m.Role == "user" {
					users = append(users, m.Text)
				}
			}
			if !slices.Equal(users, tc.modelSees) {
				t.Fatalf("model sees users %q, want %q", users, tc.modelSees)
			}
		})
	}
}

func joinFlags(f []string) string {
	out := ""
	for i, s := range f {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

package runner_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// A steer stored while the run waits for approval, parked, with its
// runner then stopped, is delivered by the runner that claims the run
// after the answer: once, after the approved call, and the model answers
// it in the same run.
func TestSteerSurvivesRunnerStop(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, demo.Script{Scenarios: []demo.Scenario{
			{Match: "use tabs", Turns: []demo.Turn{turn(text("Understood: tabs."))}},
			{Turns: []demo.Turn{turn(call("run_command", `{"command":"echo formatted"}`))}},
		}}, control.RetryPolicy{})
		r := e.send("format the files")
		a := e.start(runner.Config{})
		q := e.pending(r.ID)
		_, steered, err := e.svc.Deliver(e.ctx, r.SessionID, control.Message{Content: "use tabs", IfBusy: control.IfBusySteer})
		if err != nil || !steered {
			t.Fatalf("steer: steered %v, %v", steered, err)
		}
		a.stop()
		if _, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: control.ChoiceOnce}); err != nil {
			t.Fatal(err)
		}
		e.start(runner.Config{})
		e.wait(r.ID, "completed", isStatus(run.Completed))
		evs := e.events(r.ID)
		checkOnce(t, evs, run.Completed)
		var order []string
		for _, ev := range evs {
			switch ev.Type {
			case event.ToolDone:
				order = append(order, "tool")
			case event.MessageUser:
				var p event.MessageUserPayload
				_ = json.Unmarshal(ev.Payload, &p)
				if p.Steer {
					order = append(order, "steer:"+p.Content)
				}
			case event.MessageDone:
				var p event.DonePayload
				_ = json.Unmarshal(ev.Payload, &p)
				order = append(order, "answer:"+p.Text)
			}
		}
		if got, want := order, []string{"tool", "steer:use tabs", "answer:Understood: tabs."}; !slices.Equal(got, want) {
			t.Fatalf("journal %q, want %q", got, want)
		}
	})
}

package control_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// A steer is stored for the running run; one the run never delivered
// becomes a queued message when the run ends, and one it delivered does
// not. With no running run, a steer is a plain queued message.
func TestSteer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    run.Status // of the busy run; "" none
		delivered bool       // the runner journaled the steer before finishing
		wantRuns  int        // after the busy run finished
		steered   bool
	}{
		{"idle session queues it", "", false, 2, false},
		{"queued run: no step yet, queued", run.Queued, false, 2, false},
		{"running, delivered", run.Running, true, 1, true},
		{"running, ended first: queued", run.Running, false, 2, true},
		{"waiting for approval, ended first: queued", run.AwaitingApproval, false, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			s := e.session()
			first := e.send(s.ID, "start", "")
			if tt.status == "" {
				e.mustDo(func(tx store.Tx) error {
					return control.Finish(e.ctx, tx, first.ID, "", control.Outcome{Status: run.Completed})
				})
			} else if tt.status != run.Queued {
				first = e.hold(first.ID, "rn_1", tt.status, time.Minute)
			}
			got, steered, err := e.svc.Deliver(e.ctx, s.ID, control.Message{Content: "go left", IfBusy: control.IfBusySteer,
				By: &event.Actor{Name: "otto"}})
			if err != nil {
				t.Fatal(err)
			}
			if steered != tt.steered || (steered && got.ID != first.ID) {
				t.Fatalf("Deliver = %s steered %v, want steered %v", got.ID, steered, tt.steered)
			}
			// A steer is journaled at once (message.steered), with the ids
			// its delivery carries later.
			steeredEvs := ofType(e.runEvents(first.ID), event.MessageSteered)
			if tt.steered != (len(steeredEvs) == 1) {
				t.Fatalf("message.steered events of the run: %d, steered %v", len(steeredEvs), tt.steered)
			}
			var announced event.MessageSteeredPayload
			if tt.steered {
				announced = decode[event.MessageSteeredPayload](t, steeredEvs[0])
				if announced.Content != "go left" || announced.MessageID == "" || announced.ControlID == "" || announced.By.Name != "otto" {
					t.Fatalf("message.steered = %+v", announced)
				}
			}
			if tt.delivered {
				var steers []control.Steer
				e.mustDo(func(tx store.Tx) error {
					var err error
					steers, err = control.PendingSteers(e.ctx, tx, first.ID, nil)
					return err
				})
				if len(steers) != 1 || steers[0].Content != "go left" || steers[0].By.Name != "otto" {
					t.Fatalf("pending steers = %+v", steers)
				}
				e.emit(first, "rn_1", event.Draft{Type: event.MessageUser, Payload: event.MessageUserPayload{
					MessageID: steers[0].MessageID, Content: "go left", Steer: true, ControlID: steers[0].ControlID}})
			}
			if tt.status != "" && tt.status != run.Queued {
				e.mustDo(func(tx store.Tx) error {
					return control.Finish(e.ctx, tx, first.ID, "rn_1", control.Outcome{Status: run.Completed})
				})
			}
			runs := e.runs(s.ID)
			if len(runs) != tt.wantRuns {
				t.Fatalf("%d runs, want %d", len(runs), tt.wantRuns)
			}
			if tt.wantRuns == 2 {
				last := runs[1]
				if last.Input != "go left" || last.Status != run.Queued {
					t.Fatalf("the queued run = %+v", last)
				}
				users := ofType(e.runEvents(last.ID), event.MessageUser)
				if len(users) != 1 || decode[event.MessageUserPayload](t, users[0]).Content != "go left" {
					t.Fatalf("its message.user = %v", users)
				}
				if p := decode[event.MessageUserPayload](t, users[0]); tt.steered && (p.MessageID != announced.MessageID || p.ControlID != announced.ControlID) {
					t.Fatalf("the queued steer's message.user %+v does not carry the ids of its message.steered %+v", p, announced)
				}
			}
		})
	}
}

func TestSteerRefusesAttachments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session()
	_, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: "x", IfBusy: control.IfBusySteer,
		Attachments: []event.Attachment{{Path: "a.png", Name: "a.png", MIME: "image/png"}}})
	wantCode(t, err, control.CodeInvalidInput)
}

// An imported run brings no steer that was still pending: its stored
// control stays behind, so nothing would deliver it and the transcript
// would show it waiting forever.
func TestImportDropsPendingSteer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s, err := e.svc.ImportSession(e.ctx, control.NewImport{Title: "imported", Runs: []control.ImportRun{{
		Status: run.Completed, Input: "start",
		Events: []control.ImportEvent{
			{Type: event.MessageUser, Payload: raw(event.MessageUserPayload{MessageID: "msg_a", Content: "start"})},
			{Type: event.MessageSteered, Payload: raw(event.MessageSteeredPayload{MessageID: "msg_s", Content: "go left", ControlID: "ctl_x"})},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	evs := e.events(store.EventQuery{SessionID: s.ID})
	if n := len(ofType(evs, event.MessageSteered)); n != 0 {
		t.Fatalf("%d message.steered imported, want none", n)
	}
	if n := len(ofType(evs, event.MessageUser)); n != 1 {
		t.Fatalf("%d message.user imported, want 1", n)
	}
}

package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// IfBusySteer delivers a message into the session's running run at its
// next step boundary instead of starting a run of its own.
const IfBusySteer = "steer"

// ControlSteer is the kind of a stored steer (store.Control): stored, not
// only sent, so a runner that dies or hands over loses no steer.
const ControlSteer = "steer"

// SteerPayload is a stored steer's payload.
type SteerPayload struct {
	MessageID string       `json:"message_id"`
	Content   string       `json:"content"`
	By        *event.Actor `json:"by,omitempty"`
}

// Steer is one steer waiting for its run's next step boundary.
type Steer struct {
	ControlID string
	SteerPayload
}

// steerTarget is the run a steer goes to: one that has started (a queued
// run has no step yet, so a message for it is simply queued) and is not
// stopping.
func steerTarget(runs []store.Run) (store.Run, bool) {
	for _, r := range runs {
		switch r.Status {
		case run.Running, run.AwaitingApproval, run.AwaitingClarify, run.Recovering, run.Paused:
			return r, true
		}
	}
	return store.Run{}, false
}

// steerInTx stores m as a steer of r and journals it as message.steered,
// so the transcript shows it at once as waiting for the next step (the
// stored control alone is invisible until delivered). The returned run is
// r: the message lands in it.
func steerInTx(ctx context.Context, tx store.Tx, r store.Run, m Message, now time.Time) error {
	p := SteerPayload{MessageID: id.New("msg"), Content: m.Content, By: m.By}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	c := store.Control{ID: id.New("ctl"), RunID: r.ID, Kind: ControlSteer, Payload: b, CreatedAt: now}
	if err := tx.InsertControl(ctx, c); err != nil {
		return err
	}
	_, err = tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.MessageSteered,
		Payload: event.MessageSteeredPayload{MessageID: p.MessageID, Content: p.Content, By: p.By, ControlID: c.ID}})
	if err != nil {
		return fmt.Errorf("journaling the steer: %w", err)
	}
	return nil
}

// PendingSteers lists the steers of a run not yet delivered: those whose
// control ID no message.user of the run's events evs carries, oldest first.
func PendingSteers(ctx context.Context, tx store.Tx, runID string, evs []event.Event) ([]Steer, error) {
	cs, err := tx.ListControls(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []Steer
	var delivered map[string]bool
	for _, s := range SteersOf(cs) {
		if delivered == nil {
			delivered = DeliveredSteers(evs)
		}
		if !delivered[s.ControlID] {
			out = append(out, s)
		}
	}
	return out, nil
}

// SteersOf picks the steers out of a run's controls, in their order.
func SteersOf(cs []store.Control) []Steer {
	var out []Steer
	for _, c := range cs {
		if c.Kind != ControlSteer {
			continue
		}
		var p SteerPayload
		if json.Unmarshal(c.Payload, &p) != nil {
			continue
		}
		out = append(out, Steer{ControlID: c.ID, SteerPayload: p})
	}
	return out
}

// DeliveredSteers is the set of steer control IDs that the events' message.user
// events delivered.
func DeliveredSteers(evs []event.Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range evs {
		if e.Type != event.MessageUser {
			continue
		}
		var p event.MessageUserPayload
		if json.Unmarshal(e.Payload, &p) == nil && p.ControlID != "" {
			out[p.ControlID] = true
		}
	}
	return out
}

// queueUndelivered turns the steers a finishing run never reached a step
// boundary for into queued messages: each starts a run of its own after
// this one, as if it had been sent with if_busy "enqueue".
func queueUndelivered(ctx context.Context, tx store.Tx, r store.Run, evs []event.Event, now time.Time) error {
	steers, err := PendingSteers(ctx, tx, r.ID, evs)
	if err != nil {
		return err
	}
	for i, s := range steers {
		nr := store.Run{ID: id.New("run"), SessionID: r.SessionID, Status: run.Queued, Input: s.Content,
			Model: r.Model, CreatedAt: now.Add(time.Duration(i) * time.Microsecond), MaxRetries: r.MaxRetries, RetryBackoff: r.RetryBackoff}
		if err := tx.InsertRun(ctx, nr); err != nil {
			return err
		}
		if _, err := tx.AppendEvents(ctx, "",
			event.Draft{RunID: nr.ID, SessionID: r.SessionID, Type: event.RunQueued, Payload: event.RunQueuedPayload{Input: s.Content, Model: r.Model, IfBusy: IfBusySteer, By: s.By, SteerOf: r.ID}},
			event.Draft{RunID: nr.ID, SessionID: r.SessionID, Type: event.MessageUser, Payload: event.MessageUserPayload{MessageID: s.MessageID, Content: s.Content, By: s.By, ControlID: s.ControlID}},
		); err != nil {
			return err
		}
	}
	return nil
}

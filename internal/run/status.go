// Package run holds the vocabulary of a run's life: its statuses, which of
// them are terminal or busy, and which controls each allows (RFC 000). It has
// no dependencies so every other package can share it.
package run

// Status is a run's lifecycle state.
type Status string

const (
	Queued           Status = "queued"
	Running          Status = "running"
	AwaitingApproval Status = "awaiting_approval"
	AwaitingClarify  Status = "awaiting_clarify"
	Paused           Status = "paused"
	Cancelling       Status = "cancelling"
	Cancelled        Status = "cancelled"
	Failed           Status = "failed"
	Completed        Status = "completed"
	// Interrupted: the runner executing it stopped; the journal is intact and
	// the run can be resumed. It does not keep its session busy.
	Interrupted Status = "interrupted"
	// Recovering: the run stopped on a transient failure (its runner died,
	// or its provider failed in a way a retry may fix) and will be retried
	// by itself at its retry time. It keeps its session busy, so messages
	// queued behind it wait.
	Recovering Status = "recovering"
	Expired    Status = "expired"
)

// All lists every status, in lifecycle order.
func All() []Status {
	return []Status{Queued, Running, AwaitingApproval, AwaitingClarify, Paused,
		Cancelling, Cancelled, Failed, Completed, Interrupted, Recovering, Expired}
}

// Terminal reports whether no event can follow the status.
func (s Status) Terminal() bool {
	switch s {
	case Cancelled, Failed, Completed, Expired:
		return true
	}
	return false
}

// Busy reports whether a run in this status keeps its session busy: a new
// message must queue behind it, interrupt it or be rejected.
func (s Status) Busy() bool {
	return !s.Terminal() && s != Interrupted
}

// Owned reports whether a runner holds a lease on a run in this status.
func (s Status) Owned() bool {
	switch s {
	case Running, AwaitingApproval, AwaitingClarify, Cancelling:
		return true
	}
	return false
}

// Resumable reports whether a person may resume a run in this status: a
// paused run (a budget reached, it looked stuck, or a person paused it)
// as well as one stopped by a failure.
func (s Status) Resumable() bool { return s == Interrupted || s == Recovering || s == Paused }

// Pausable reports whether a person may pause a run in this status: it
// pauses at its next step boundary (or at once when no runner holds it).
func (s Status) Pausable() bool {
	switch s {
	case Queued, Running, AwaitingApproval, AwaitingClarify:
		return true
	}
	return false
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, v := range All() {
		if v == s {
			return true
		}
	}
	return false
}

// Control names an action a client may take on a run.
type Control string

const (
	ControlObserve Control = "observe"
	ControlCancel  Control = "cancel"
	ControlApprove Control = "approve"
	ControlClarify Control = "clarify"
	ControlResume  Control = "resume"
	ControlPause   Control = "pause"
)

// Controls lists what a client may do to a run in status s.
func Controls(s Status) []Control {
	c := []Control{ControlObserve}
	switch s {
	case Queued, Running:
		c = append(c, ControlCancel, ControlPause)
	case Interrupted, Recovering, Paused:
		c = append(c, ControlCancel, ControlResume)
	case AwaitingApproval:
		c = append(c, ControlCancel, ControlApprove, ControlPause)
	case AwaitingClarify:
		c = append(c, ControlCancel, ControlClarify, ControlPause)
	}
	return c
}

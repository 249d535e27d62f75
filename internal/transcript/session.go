package transcript

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// Besides the items, the fold derives what the browser shows next to the
// transcript: the activity tree's runs, turns and their timings, the agent's
// todo list and the context meter. The browser's reducer (ui/src/state)
// applies the same rules to live events, so a reload shows exactly what
// the live view showed. Every duration comes from a payload or from event
// timestamps, never from a clock read while folding.

// Step states.
const (
	StepRunning = "running"
	StepDone    = "done"
	StepError   = "error"
	// StepCancelled: stopped by a person; neither a success nor a failure.
	StepCancelled = "cancelled"
)

// Step kinds.
const (
	StepTurn    = "turn"    // one model call
	StepResumed = "resumed" // the run picked up again after an interruption
)

// Step is one entry under a run in the activity tree.
type Step struct {
	Kind      string     `json:"kind"`
	ID        string     `json:"id"` // turn id, or rsm_<event id> for a resume
	StartedAt event.Time `json:"started_at"`
	// State: running until the turn ended; done or error after.
	State string `json:"state"`
	// DurationMS of a turn: turn.ended's duration_ms, or, for a call cut
	// short by the end of its run, the time from turn.started to that end.
	// 0 when unknown (a turn closed by the next one's start).
	DurationMS int64 `json:"duration_ms,omitempty"`
	Attempt    int   `json:"attempt,omitempty"` // resumed: the execution that began
}

// RunActivity is one run of the activity tree. Times are those of the
// journal's events: the first run.started and the run.done.
type RunActivity struct {
	RunID     string      `json:"run_id"`
	StartedAt *event.Time `json:"started_at,omitempty"`
	EndedAt   *event.Time `json:"ended_at,omitempty"`
	Steps     []Step      `json:"steps"`
}

// Context is what the context meter shows: the tokens the conversation
// holds now and the model's window (0: unknown).
type Context struct {
	Tokens int64 `json:"tokens"`
	Window int64 `json:"window"`
}

// Snapshot is a session's fold: the transcript and the state around it.
type Snapshot struct {
	Items    []Item           `json:"items"`
	Activity []RunActivity    `json:"activity"`
	Todos    []event.TodoItem `json:"todos"`
	Context  Context          `json:"context"`
}

type sessionState struct {
	runs    []*RunActivity
	byRun   map[string]*RunActivity
	todos   []event.TodoItem
	context Context
}

func newSessionState() sessionState {
	return sessionState{byRun: map[string]*RunActivity{}}
}

// run returns the run's activity, creating it at the first event seen.
func (s *sessionState) run(id string) *RunActivity {
	r := s.byRun[id]
	if r == nil {
		r = &RunActivity{RunID: id}
		s.byRun[id] = r
		s.runs = append(s.runs, r)
	}
	return r
}

// openTurn returns the run's last step when it is a turn still running.
func openTurn(r *RunActivity) *Step {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if r.Steps[i].Kind == StepTurn {
			if r.Steps[i].State == StepRunning {
				return &r.Steps[i]
			}
			return nil
		}
	}
	return nil
}

// add folds the events only the session state reads. Those the items read
// too (run.done, usage, context.warning, context.compacted) Builder.Add
// decodes once and hands to runDone, usage, warning and compacted: a
// payload is decoded once per read, which is most of a long session's
// fold.
func (s *sessionState) add(e event.Event) {
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			return
		}
		r := s.run(e.RunID)
		if r.StartedAt == nil {
			ts := e.TS
			r.StartedAt = &ts
		}
		if p.Resumed {
			r.Steps = append(r.Steps, Step{Kind: StepResumed, ID: "rsm_" + strconv.FormatInt(e.ID, 10), StartedAt: e.TS, State: StepDone, Attempt: p.Attempt})
		}
		if p.ContextWindow > 0 {
			s.context.Window = p.ContextWindow
		}
	case event.TurnStarted:
		var p event.TurnStartedPayload
		if json.Unmarshal(e.Payload, &p) != nil || p.TurnID == "" {
			return
		}
		r := s.run(e.RunID)
		if slices.ContainsFunc(r.Steps, func(st Step) bool { return st.ID == p.TurnID }) {
			return
		}
		// The turn before has ended, whether or not its turn.ended came.
		if t := openTurn(r); t != nil {
			t.State = StepDone
		}
		r.Steps = append(r.Steps, Step{Kind: StepTurn, ID: p.TurnID, StartedAt: e.TS, State: StepRunning})
	case event.TurnEnded:
		var p event.TurnEndedPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			return
		}
		r := s.byRun[e.RunID]
		if r == nil {
			return
		}
		for i := range r.Steps {
			if st := &r.Steps[i]; st.Kind == StepTurn && st.ID == p.TurnID {
				st.State, st.DurationMS = StepDone, p.DurationMS
				if p.StopReason == "error" {
					st.State = StepError
				}
			}
		}
	case event.RunStatus:
		var p event.RunStatusPayload
		if json.Unmarshal(e.Payload, &p) == nil && (p.Status == "recovering" || p.Status == "interrupted") {
			// Stopped part-way: the call under way did not finish.
			s.closeTurn(e, StepError)
		}
	case event.TodoUpdated:
		var p event.TodoPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			s.todos = p.Items
		}
	}
}

// runDone closes the run's activity: its open turn and its end time.
func (s *sessionState) runDone(e event.Event, status string) {
	state := StepError
	switch status {
	case "completed":
		state = StepDone
	case "cancelled":
		state = StepCancelled
	}
	s.closeTurn(e, state)
	if r := s.byRun[e.RunID]; r != nil {
		ts := e.TS
		r.EndedAt = &ts
	}
}

// usage: the last model call's prompt is what the context holds now; the
// compaction call's prompt is the old, long conversation.
func (s *sessionState) usage(turnID string, inputTokens int64) {
	if turnID != "compaction" {
		s.context.Tokens = inputTokens
	}
}

func (s *sessionState) warning(p event.ContextWarningPayload) {
	s.context.Tokens = p.EstimatedTokens
	if p.ContextWindow > 0 {
		s.context.Window = p.ContextWindow
	}
}

func (s *sessionState) compacted(p event.ContextCompactedPayload) { s.context.Tokens = p.TokensAfter }

// closeTurn ends the run's open turn at e: a call aborted by a cancel, or
// cut short when its runner stopped, lasted until then.
func (s *sessionState) closeTurn(e event.Event, state string) {
	r := s.byRun[e.RunID]
	if r == nil {
		return
	}
	if t := openTurn(r); t != nil {
		t.State, t.DurationMS = state, max(0, e.TS.Sub(t.StartedAt.Time).Milliseconds())
	}
}

// Snapshot returns the fold so far: the items and the state around them.
func (b *Builder) Snapshot() Snapshot {
	out := Snapshot{Items: b.Items(), Activity: make([]RunActivity, 0, len(b.session.runs)),
		Todos: slices.Clone(b.session.todos), Context: b.session.context}
	if out.Todos == nil {
		out.Todos = []event.TodoItem{}
	}
	for _, r := range b.session.runs {
		c := *r
		c.Steps = slices.Clone(r.Steps)
		if c.Steps == nil {
			c.Steps = []Step{}
		}
		out.Activity = append(out.Activity, c)
	}
	return out
}

// FoldSession folds a session's events run by run like FoldRuns (every
// run) and returns the snapshot GET /api/sessions/{id}/messages serves.
func FoldSession(evs []event.Event, runIDs []string) Snapshot {
	b := New()
	for _, e := range byRun(evs, runIDs, "") {
		b.Add(e)
	}
	return b.Snapshot()
}

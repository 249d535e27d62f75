package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// host is the agent.Host of one run: it journals through the writer, fenced
// by this runner's lease, and turns questions into durable requests.
type host struct {
	r   *Runner
	run store.Run
	// workspace is the session's, once drive has read it: the runner
	// prunes its checkpoints after the run ends.
	workspace string
	// active is the run's entry among the runner's executing runs (nil in
	// tests that drive a host alone).
	active *active
	// childSpent, when set, is told what each delegated child run spent
	// (subagent.done), for the run's budgets.
	childSpent func(event.UsageTotals)

	mu      sync.Mutex
	pending []<-chan error // emits not yet known durable, oldest first
	err     error          // first failed emit
	tail    *deltaTail     // the newest emit, when it is a text delta
	// lastDelta is when a delta event last went to the writer; deltas
	// closer together than deltaWindow share one event.
	lastDelta time.Time
	// waited is how long the person took to answer each tool call's
	// request, from the request itself: the run was parked meanwhile.
	waited map[string]time.Duration
	// denials are the results of calls a person denied with a note, by
	// tool call (agent.DenialNoter). Only the loop's goroutine uses them.
	denials map[string]string
	// decisions name the rule or person behind each approval
	// (agent.ApprovalSource); only the loop's goroutine uses them.
	decisions map[string]event.ApprovalDecidedPayload
}

// Idle marks the run as waiting for other runs only (agent.Idler): it
// frees its slot until busy is called, and wakes the claim loop so a
// child run queued a moment ago is claimed at once.
func (h *host) Idle() (busy func()) {
	if h.active == nil {
		return func() {}
	}
	h.active.idle.Add(1)
	h.r.poke()
	var once sync.Once
	return func() { once.Do(func() { h.active.idle.Add(-1) }) }
}

// Waited reports how long the person took to answer the request of a tool
// call (agent.WaitReporter).
func (h *host) Waited(toolCallID string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waited[toolCallID]
}

// deltaWindow is the shortest gap between two delta events of a run. A
// model streams 50-200 tokens a second and every commit costs a WAL write
// and an fsync; 25 ms keeps text visibly live (40 updates a second) while
// a fast stream costs a few commits a second instead of one per token. The
// first delta after a pause goes out at once, so nothing waits for it.
const deltaWindow = 25 * time.Millisecond

// maxCoalesced bounds the text one coalesced delta event may carry.
const maxCoalesced = 16 << 10

// deltaTail is a text or reasoning delta queued in the writer. Later
// fragments of the same block join it until the writer takes it, so a
// model streaming faster than the journal commits costs one row per
// commit rather than one per token, and a slow stream still gets one
// event per token with no added latency.
type deltaTail struct {
	mu        sync.Mutex
	typ       event.Type
	p         event.DeltaPayload
	text      []byte
	submitted bool // handed to the writer (under host.mu)
	sealed    bool // taken by the writer (under mu)
}

// join appends a fragment unless the writer has taken the event already.
func (t *deltaTail) join(typ event.Type, p event.DeltaPayload) bool {
	if t.typ != typ || t.p.ID != p.ID || t.p.TurnID != p.TurnID {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sealed || len(t.text)+len(p.Delta) > maxCoalesced {
		return false
	}
	t.text = append(t.text, p.Delta...)
	return true
}

// seal fixes the event's text; later fragments start a new event.
func (t *deltaTail) seal() event.DeltaPayload {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sealed = true
	p := t.p
	p.Delta = string(t.text)
	return p
}

func newHost(r *Runner, ru store.Run) *host {
	return &host{r: r, run: ru}
}

// Emit queues without waiting: streaming never stalls on a commit, and the
// writer batches what accumulates meanwhile. Consecutive deltas of one
// block coalesce while queued (see deltaTail).
func (h *host) Emit(typ event.Type, payload any) error {
	if p, ok := payload.(event.SubagentDonePayload); ok && typ == event.SubagentDone && h.childSpent != nil {
		h.childSpent(p.Usage)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reapLocked()
	if h.err != nil {
		return h.err
	}
	if dp, ok := payload.(event.DeltaPayload); ok {
		if h.tail != nil && h.tail.join(typ, dp) {
			return nil
		}
		h.submitTailLocked()
		t := &deltaTail{typ: typ, p: dp, text: []byte(dp.Delta)}
		h.tail = t
		if wait := deltaWindow - time.Since(h.lastDelta); wait > 0 {
			time.AfterFunc(wait, func() {
				h.mu.Lock()
				defer h.mu.Unlock()
				if h.tail == t {
					h.submitTailLocked()
				}
			})
		} else {
			h.submitTailLocked()
		}
		return nil
	}
	h.submitTailLocked()
	h.tail = nil
	d := event.Draft{RunID: h.run.ID, SessionID: h.run.SessionID, Type: typ, Payload: payload}
	h.pending = append(h.pending, h.r.w.SubmitAppend(h.r.id, func() event.Draft { return d }))
	return nil
}

// submitTailLocked hands a waiting delta to the writer, where it keeps
// taking fragments until the writer seals it.
func (h *host) submitTailLocked() {
	t := h.tail
	if t == nil || t.submitted {
		return
	}
	t.submitted = true
	h.lastDelta = time.Now()
	h.pending = append(h.pending, h.r.w.SubmitAppend(h.r.id, func() event.Draft {
		return event.Draft{RunID: h.run.ID, SessionID: h.run.SessionID, Type: t.typ, Payload: t.seal()}
	}))
}

// reapLocked collects outcomes of emits that have committed.
func (h *host) reapLocked() {
	for len(h.pending) > 0 {
		select {
		case err := <-h.pending[0]:
			if err != nil && h.err == nil {
				h.err = err
			}
			h.pending = h.pending[1:]
		default:
			return
		}
	}
}

func (h *host) Flush(ctx context.Context) error {
	h.mu.Lock()
	h.submitTailLocked()
	chans := h.pending
	h.pending = nil
	h.mu.Unlock()
	var first error
	for i, ch := range chans {
		select {
		case err := <-ch:
			if err != nil && first == nil {
				first = err
			}
		case <-ctx.Done():
			h.mu.Lock()
			h.pending = append(chans[i:], h.pending...)
			h.mu.Unlock()
			return ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if first != nil && h.err == nil {
		h.err = first
	}
	return h.err
}

func (h *host) Approve(ctx context.Context, a agent.ApprovalAsk) (string, error) {
	// A run continuing after it was parked finds the request it filed:
	// the person's answer wins over a rule their "always" just made.
	_, asked, err := h.existing(ctx, a.ToolCallID)
	if err != nil {
		return "", err
	}
	if a.Rememberable && !asked {
		rule, ok, err := h.matchRule(ctx, a)
		if err != nil {
			return "", err
		}
		if ok {
			_ = h.Emit(event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "auto_approved",
				Message: "Approved by a remembered rule: " + a.Action,
				Details: map[string]any{"tool_call_id": a.ToolCallID, "rule_id": rule.ID, "pattern": rule.Pattern}})
			h.approvedByRule(a.ToolCallID, rule)
			return control.ChoiceOnce, nil
		}
	}
	choices := control.ApprovalChoices()
	if !a.Rememberable {
		choices = []string{control.ChoiceOnce, control.ChoiceDeny}
	}
	q, err := h.request(ctx, store.KindApproval, a.ToolCallID, func(reqID string, exp time.Time) any {
		return event.ApprovalRequestedPayload{RequestID: reqID, ToolCallID: a.ToolCallID, Tool: a.Tool,
			Action: a.Action, Reason: a.Reason, Risk: a.Risk, Pattern: a.Pattern, Choices: choices, ExpiresAt: event.Time{Time: exp}}
	})
	if err != nil {
		return "", err
	}
	if q.Status == store.RequestExpired {
		h.noteDecision(q.ToolCallID, event.ApprovalDecidedPayload{DecidedBy: event.DecidedByTimeout, RequestID: q.ID})
		return agent.ChoiceExpired, nil
	}
	if q.Response == control.ChoiceDeny {
		if err := h.readDenial(ctx, q); err != nil {
			return "", err
		}
	}
	if err := h.answeredBy(ctx, q); err != nil {
		return "", err
	}
	return q.Response, nil
}

// matchRule finds a remembered approval (for every session, or this one)
// whose pattern matches the call.
func (h *host) matchRule(ctx context.Context, a agent.ApprovalAsk) (store.Rule, bool, error) {
	rules, err := h.r.st.ListRules(ctx)
	if err != nil {
		return store.Rule{}, false, err
	}
	for _, ru := range rules {
		if ru.Tool != a.Tool || (ru.SessionID != "" && ru.SessionID != h.run.SessionID) {
			continue
		}
		if policy.Match(ru.Pattern, a.Tool, a.Intent) {
			return ru, true, nil
		}
	}
	return store.Rule{}, false, nil
}

func (h *host) Clarify(ctx context.Context, c agent.ClarifyAsk) (string, bool, error) {
	q, err := h.request(ctx, store.KindClarify, c.ToolCallID, func(reqID string, exp time.Time) any {
		return event.ClarifyRequestedPayload{RequestID: reqID, ToolCallID: c.ToolCallID, Question: c.Question,
			Choices: c.Choices, ExpiresAt: event.Time{Time: exp}}
	})
	if err != nil {
		return "", false, err
	}
	return q.Response, q.Status == store.RequestResolved, nil
}

// request files a human request for the tool call (or finds the one filed
// before), and parks the run while nobody has answered it: the run gives up
// its runner slot and lease (agent.ErrPark) and any runner claims it again
// once the request is answered or has expired. A request found answered
// puts the run back to running and returns it.
func (h *host) request(ctx context.Context, kind, toolCallID string, prompt func(string, time.Time) any) (store.Request, error) {
	if err := h.Flush(ctx); err != nil {
		return store.Request{}, err
	}
	q, found, err := h.existing(ctx, toolCallID)
	if err != nil {
		return q, err
	}
	if !found {
		now := time.Now().UTC()
		q = store.Request{ID: id.New("req"), RunID: h.run.ID, SessionID: h.run.SessionID, Kind: kind,
			ToolCallID: toolCallID, CreatedAt: now}
		if ttl := h.r.approvalTTL(); ttl > 0 {
			q.ExpiresAt = now.Add(ttl)
		}
		p := prompt(q.ID, q.ExpiresAt)
		if err := h.r.w.Do(ctx, func(tx store.Tx) error { return control.Ask(ctx, tx, h.r.id, q, p) }); err != nil {
			return q, err
		}
		return q, agent.ErrPark
	}
	if q.Status == store.RequestPending && !q.ExpiresAt.IsZero() && !time.Now().Before(q.ExpiresAt) {
		err := h.r.w.Do(ctx, func(tx store.Tx) error { return control.Expire(ctx, tx, q.ID) })
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return q, err
		}
		if q, err = h.r.st.GetRequest(ctx, q.ID); err != nil {
			return q, err
		}
	}
	switch q.Status {
	case store.RequestPending:
		return q, agent.ErrPark
	case store.RequestCancelled:
		return q, context.Canceled
	}
	if !q.ResolvedAt.IsZero() {
		h.mu.Lock()
		if h.waited == nil {
			h.waited = map[string]time.Duration{}
		}
		h.waited[toolCallID] = max(0, q.ResolvedAt.Sub(q.CreatedAt))
		h.mu.Unlock()
	}
	err = h.r.w.Do(ctx, func(tx store.Tx) error {
		return control.SetStatus(ctx, tx, h.run.ID, h.r.id, run.Running, "answered", run.AwaitingApproval, run.AwaitingClarify)
	})
	if errors.Is(err, store.ErrConflict) && ctx.Err() != nil {
		return q, ctx.Err()
	}
	return q, err
}

// existing finds a request already filed for the tool call.
func (h *host) existing(ctx context.Context, toolCallID string) (store.Request, bool, error) {
	reqs, err := h.r.st.ListRequests(ctx, store.RequestQuery{RunID: h.run.ID})
	if err != nil {
		return store.Request{}, false, err
	}
	for _, q := range reqs {
		if q.ToolCallID == toolCallID {
			return q, true, nil
		}
	}
	return store.Request{}, false, nil
}

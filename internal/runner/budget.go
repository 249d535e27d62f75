package runner

// Budgets and health (issue 16, h16-budgets): at every step boundary the
// run's spending is checked against the limits of the run (over its
// profile's), its session and the server's day; a limit reached, the same
// tool call repeated, or a person's request pauses the run. Every few
// model calls a run_health diagnostic reports what the run spent.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// DefaultHealthEvery is how many model calls apart run_health diagnostics
// are.
const DefaultHealthEvery = 5

// pauseError is a guard's verdict: pause with cause.
type pauseError struct{ cause control.PauseCause }

func (e *pauseError) Error() string { return "pause: " + e.cause.Reason }
func (e *pauseError) Unwrap() error { return agent.ErrPause }

// guard checks one run's steps. Only the loop's goroutine calls check.
type guard struct {
	r       *Runner
	h       *host
	run     store.Run
	started time.Time

	runLimits, sessionLimits, dayLimits budget.Limits
	runUse, sessionUse                  budget.Usage
	repeats                             budget.Repeats
	// errs and calls count this run's failed and total tool calls for the
	// health report's error rate.
	errs, calls int64
	pauseAsked  atomic.Bool
	// children is what the run's delegated child runs spent since the last
	// step (h18-delegate: a child's cost counts toward the parent's
	// budgets), added by the delegate tool's subagent.done through the
	// host, from the tool's goroutine.
	childMu  sync.Mutex
	children budget.Usage
}

// childSpent records a child run's spending; the next check counts it.
func (g *guard) childSpent(u event.UsageTotals) {
	g.childMu.Lock()
	defer g.childMu.Unlock()
	g.children.Tokens += u.InputTokens + u.OutputTokens
	g.children.CostUSD += u.CostUSD
}

// takeChildren returns and clears what children spent since the last call.
func (g *guard) takeChildren() budget.Usage {
	g.childMu.Lock()
	defer g.childMu.Unlock()
	u := g.children
	g.children = budget.Usage{}
	return u
}

// newGuard reads the limits that apply to the run and what the run and its
// session spent so far (from the journal: earlier claims count).
func (r *Runner) newGuard(ctx context.Context, h *host, claimed store.Run, sess store.Session, prof store.Profile, hasProf bool) (*guard, error) {
	g := &guard{r: r, h: h, run: claimed, started: time.Now(), repeats: budget.Repeats{N: r.cfg.StuckRepeats}}
	get := func(scope, target string) (budget.Limits, error) {
		b, err := r.st.GetBudget(ctx, scope, target)
		if errors.Is(err, store.ErrNotFound) {
			return budget.Limits{}, nil
		}
		return b.Limits, err
	}
	var err error
	if hasProf {
		if g.runLimits, err = get(budget.ScopeProfile, prof.ID); err != nil {
			return nil, err
		}
	}
	own, err := get(budget.ScopeRun, claimed.ID)
	if err != nil {
		return nil, err
	}
	g.runLimits = g.runLimits.Merge(own)
	if g.sessionLimits, err = get(budget.ScopeSession, sess.ID); err != nil {
		return nil, err
	}
	if g.dayLimits, err = get(budget.ScopeDay, ""); err != nil {
		return nil, err
	}
	evs, err := r.st.Events(ctx, store.EventQuery{SessionID: sess.ID, Types: []event.Type{event.Usage, event.ToolDone, event.SubagentDone}})
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		g.sessionUse = spend(g.sessionUse, e)
	}
	if err := g.replay(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// replay counts what the run's earlier claims did: its usage and tool
// calls, and, since its last pause (a person resumed it, having looked),
// its consecutive failed calls and repeated calls, so a run parked for
// every approval is still caught looping.
func (g *guard) replay(ctx context.Context) error {
	evs, err := g.r.st.Events(ctx, store.EventQuery{RunID: g.run.ID,
		Types: []event.Type{event.Usage, event.ToolStarted, event.ToolDone, event.RunStatus, event.SubagentDone}})
	if err != nil {
		return err
	}
	started := map[string]event.ToolStartedPayload{}
	for _, e := range evs {
		switch e.Type {
		case event.ToolStarted:
			var p event.ToolStartedPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				started[p.ToolCallID] = p
			}
		case event.ToolDone:
			g.runUse = spend(g.runUse, e)
			var p event.ToolDonePayload
			if json.Unmarshal(e.Payload, &p) == nil {
				if c, ok := started[p.ToolCallID]; ok {
					g.repeats.Observe(c.Name, c.Args)
				}
			}
		case event.RunStatus:
			var p event.RunStatusPayload
			if json.Unmarshal(e.Payload, &p) == nil && p.Status == string(run.Paused) {
				g.runUse.ConsecutiveErrors = 0
				g.repeats.Reset()
			}
		default:
			g.runUse = spend(g.runUse, e)
		}
	}
	g.sessionUse.ConsecutiveErrors = g.runUse.ConsecutiveErrors
	return nil
}

// spend adds a usage or tool.done event to u.
func spend(u budget.Usage, e event.Event) budget.Usage {
	switch e.Type {
	case event.Usage:
		var p event.UsagePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			u.Tokens += p.Turn.InputTokens + p.Turn.OutputTokens
			u.CostUSD += p.Turn.CostUSD
		}
	case event.ToolDone:
		var p event.ToolDonePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			u.ToolCalls++
			u.ConsecutiveErrors = failed(u.ConsecutiveErrors, p.Status)
		}
	case event.SubagentDone:
		var p event.SubagentDonePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			u.Tokens += p.Usage.InputTokens + p.Usage.OutputTokens
			u.CostUSD += p.Usage.CostUSD
		}
	}
	return u
}

func failed(n int64, status string) int64 {
	if status == event.ToolError || status == event.ToolTimeout {
		return n + 1
	}
	return 0
}

// watchPause makes the guard pause the run at its next step once a person
// asks: a pause_requested diagnostic newer than the run's last pause or
// resume. The journal replays from the start, so a request that arrived
// between the claim and this subscription is seen too.
func (g *guard) watchPause(ctx context.Context) func() {
	wctx, stop := context.WithCancel(ctx)
	sub := g.r.hub.Subscribe(journal.Filter{RunID: g.run.ID, Types: []event.Type{event.Diagnostic, event.RunStatus}}, 0)
	go func() {
		defer sub.Close()
		for {
			evs, err := sub.Next(wctx)
			if err != nil {
				return
			}
			for _, e := range evs {
				switch e.Type {
				case event.Diagnostic:
					var p event.DiagnosticPayload
					if json.Unmarshal(e.Payload, &p) == nil && p.Code == control.PauseRequested {
						g.pauseAsked.Store(true)
					}
				case event.RunStatus:
					var p event.RunStatusPayload
					if json.Unmarshal(e.Payload, &p) == nil && (p.Status == string(run.Paused) || p.Status == string(run.Queued)) {
						g.pauseAsked.Store(false)
					}
				}
			}
		}
	}()
	return stop
}

// check is the loop's Guard.
func (g *guard) check(ctx context.Context, s agent.Step) error {
	day := budget.DayUsage{}
	if s.Tool == "" {
		tokens := s.Turn.InputTokens + s.Turn.OutputTokens
		g.runUse.Tokens += tokens
		g.runUse.CostUSD += s.Turn.CostUSD
		g.sessionUse.Tokens += tokens
		g.sessionUse.CostUSD += s.Turn.CostUSD
		day.Tokens, day.CostUSD = tokens, s.Turn.CostUSD
		if every := g.r.healthEvery(); every > 0 && s.Turns%every == 0 && !s.Final {
			if err := g.health(s.Turns); err != nil {
				return err
			}
		}
	} else {
		// The day has the children's spending already: each child's own
		// guard added it.
		c := g.takeChildren()
		g.runUse.Tokens += c.Tokens
		g.runUse.CostUSD += c.CostUSD
		g.sessionUse.Tokens += c.Tokens
		g.sessionUse.CostUSD += c.CostUSD
		g.calls++
		g.runUse.ToolCalls++
		g.sessionUse.ToolCalls++
		g.runUse.ConsecutiveErrors = failed(g.runUse.ConsecutiveErrors, s.ToolDone)
		g.sessionUse.ConsecutiveErrors = g.runUse.ConsecutiveErrors
		if s.ToolDone != event.ToolOK {
			g.errs++
		}
		day.ToolCalls = 1
		if why, stuck := g.repeats.Observe(s.Tool, s.Args); stuck {
			// The arguments are quoted in the reason: known secrets go.
			red := g.r.cfg.Redactor
			return &pauseError{control.PauseCause{Code: control.PauseStuck, Reason: red.String(why),
				Details: map[string]any{"tool": s.Tool, "args": red.String(string(s.Args)), "repeats": g.repeats.Count()}}}
		}
	}
	dayUse, err := g.addDay(ctx, day)
	if err != nil || s.Final {
		return err
	}
	if g.pauseAsked.Load() {
		return &pauseError{control.PauseCause{Code: control.PauseByPerson, Reason: "paused by a person"}}
	}
	g.runUse.Wall = time.Since(g.started)
	for _, c := range []struct {
		scope string
		l     budget.Limits
		u     budget.Usage
	}{
		{budget.ScopeRun, g.runLimits, g.runUse},
		{budget.ScopeSession, g.sessionLimits, g.sessionUse},
		{budget.ScopeDay, g.dayLimits, dayUse},
	} {
		if b, hit := budget.Check(c.scope, c.l, c.u); hit {
			return &pauseError{control.PauseCause{Code: control.PauseBudget, Reason: b.Reason,
				Details: map[string]any{"scope": b.Scope, "limit": b.Limit, "max": b.Max, "used": b.Used, "max_value": b.MaxValue}}}
		}
	}
	return nil
}

// addDay adds what the step spent to the server's day and returns the
// day's total, read back only when a day limit is set. Without one the
// step does not wait for the addition to commit: it joins the writer's
// next group commit, and a failure is only logged (the counter is then
// short, never the run stopped).
func (g *guard) addDay(ctx context.Context, d budget.DayUsage) (budget.Usage, error) {
	key := budget.Day(time.Now())
	if d != (budget.DayUsage{}) {
		// Not cancelled with the run: a step's spending counts even when
		// the run stops before the commit.
		wctx := context.WithoutCancel(ctx)
		add := func(tx store.Tx) error {
			return tx.AddDayUsage(wctx, store.DayUsage{Day: key, Tokens: d.Tokens, CostUSD: d.CostUSD, ToolCalls: d.ToolCalls})
		}
		if g.dayLimits.Zero() {
			done := g.r.w.Submit(add)
			go func() {
				if err := <-done; err != nil {
					g.r.log.Warn("counting the day's spending", "run", g.run.ID, "err", err)
				}
			}()
			return budget.Usage{}, nil
		}
		// wctx, not ctx: Do withdraws an Op its context gave up on
		// before the writer took it.
		if err := g.r.w.Do(wctx, add); err != nil {
			return budget.Usage{}, err
		}
	}
	if g.dayLimits.Zero() {
		return budget.Usage{}, nil
	}
	u, err := g.r.st.DayUsage(ctx, key)
	if err != nil {
		return budget.Usage{}, err
	}
	return budget.Usage{Tokens: u.Tokens, CostUSD: u.CostUSD, ToolCalls: u.ToolCalls}, nil
}

// health journals the run_health diagnostic.
func (g *guard) health(turns int) error {
	rate := 0.0
	if g.calls > 0 {
		rate = float64(g.errs) / float64(g.calls)
	}
	return g.h.Emit(event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "run_health",
		Message: fmt.Sprintf("Health after %d model calls: %d tokens, $%.4f, %d of %d tool calls failed", turns, g.runUse.Tokens, g.runUse.CostUSD, g.errs, g.calls),
		Details: map[string]any{"turns": turns, "tokens": g.runUse.Tokens, "cost_usd": g.runUse.CostUSD,
			"tool_calls": g.runUse.ToolCalls, "tool_errors": g.errs, "error_rate": rate,
			"wall_ms": time.Since(g.started).Milliseconds()}})
}

func (r *Runner) healthEvery() int {
	if r.cfg.HealthEvery == 0 {
		return DefaultHealthEvery
	}
	return r.cfg.HealthEvery
}

package telemetry

import (
	"context"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Executing starts watching one execution of a run by this process's
// runner; end counts it by outcome (runner.Telemetry).
func (t *Telemetry) Executing(ctx context.Context, runID string, attempt int) (context.Context, func(outcome string)) {
	return ctx, func(outcome string) { t.m.executions.WithLabelValues(outcome).Inc() }
}

// QueueWaited records how long a run waited before its first execution
// (runner.Telemetry).
func (t *Telemetry) QueueWaited(d time.Duration) { t.m.queueWait.Observe(max(0, d).Seconds()) }

// ModelCall watches one model call (agent.Observer): its latency, tokens
// and errors by provider and model.
func (t *Telemetry) ModelCall(ctx context.Context, provider, model string) (context.Context, func(agent.ModelOutcome)) {
	start := time.Now()
	return ctx, func(o agent.ModelOutcome) {
		t.m.modelSeconds.WithLabelValues(provider, model).Observe(time.Since(start).Seconds())
		addTokens(t, provider, model, o.Usage)
		if o.ErrCode != "" {
			t.m.modelErrors.WithLabelValues(provider, model, o.ErrCode).Inc()
		}
	}
}

func addTokens(t *Telemetry, provider, model string, u event.UsageTotals) {
	for _, k := range []struct {
		kind string
		n    int64
	}{{"input", u.InputTokens}, {"output", u.OutputTokens}, {"cached", u.CachedTokens}, {"reasoning", u.ReasoningTokens}} {
		if k.n > 0 {
			t.m.modelTokens.WithLabelValues(provider, model, k.kind).Add(float64(k.n))
		}
	}
}

// ToolCall watches one tool execution (agent.Observer): its duration and
// result status.
func (t *Telemetry) ToolCall(ctx context.Context, name, callID string) (context.Context, func(status string)) {
	start := time.Now()
	return ctx, func(status string) {
		t.m.toolSeconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
		t.m.toolCalls.WithLabelValues(name, status).Inc()
	}
}

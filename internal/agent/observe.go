package agent

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// Observer watches the loop's model and tool calls for metrics and traces.
// Each start returns the context the call runs under (it may carry a span)
// and a function the loop calls exactly once when the call ends.
type Observer interface {
	ModelCall(ctx context.Context, provider, model string) (context.Context, func(ModelOutcome))
	// ToolCall watches a tool that runs (not one denied or asking a
	// person); end gets the result status (event.ToolOK, ...).
	ToolCall(ctx context.Context, name, callID string) (context.Context, func(status string))
}

// ModelOutcome is how a model call ended.
type ModelOutcome struct {
	Usage event.UsageTotals
	// ErrCode is "" for a call that succeeded, "cancelled" for one the run's
	// cancel stopped, else the error code journaled for it
	// (provider_rate_limited, ...).
	ErrCode string
}

// unobserved is the Observer of a Loop given none.
type unobserved struct{}

func (unobserved) ModelCall(ctx context.Context, _, _ string) (context.Context, func(ModelOutcome)) {
	return ctx, func(ModelOutcome) {}
}

func (unobserved) ToolCall(ctx context.Context, _, _ string) (context.Context, func(string)) {
	return ctx, func(string) {}
}

func (l *Loop) observer() Observer {
	if l.Observe == nil {
		return unobserved{}
	}
	return l.Observe
}

package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// AttrRunID names the run on every span that belongs to one.
const AttrRunID = "caduceus.run_id"

type runKey struct{}

// runOf is the run the work in ctx belongs to ("" outside a run).
func runOf(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}

// Executing starts watching one execution of a run by this process's
// runner: the returned ctx carries the run (and its span), so the model
// and tool calls made under it are attributed to it; end counts the
// execution by outcome and ends the span (runner.Telemetry).
func (t *Telemetry) Executing(ctx context.Context, runID string, attempt int) (context.Context, func(outcome string)) {
	ctx = context.WithValue(ctx, runKey{}, runID)
	count := func(outcome string) { t.m.executions.WithLabelValues(outcome).Inc() }
	if t.tracer == nil {
		return ctx, count
	}
	ctx, span := t.tracer.Start(ctx, "run", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String(AttrRunID, runID), attribute.Int("caduceus.attempt", attempt)))
	return ctx, func(outcome string) {
		count(outcome)
		span.SetAttributes(attribute.String("caduceus.outcome", outcome))
		if outcome == "failed" || outcome == "store_error" {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}

// QueueWaited records how long a run waited before its first execution
// (runner.Telemetry).
func (t *Telemetry) QueueWaited(d time.Duration) { t.m.queueWait.Observe(max(0, d).Seconds()) }

// LinkQueued links the execution's span in ctx to the request that queued
// the run, given as the W3C traceparent the run was queued with
// (runner.Telemetry). A link, not a parent: the request ended long ago and
// a run may execute several times.
func (t *Telemetry) LinkQueued(ctx context.Context, traceparent string) {
	if t.tracer == nil || traceparent == "" {
		return
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": traceparent}))
	if sc.IsValid() {
		trace.SpanFromContext(ctx).AddLink(trace.Link{SpanContext: sc})
	}
}

// ModelCall watches one model call (agent.Observer): its latency, tokens
// and errors by provider and model, and a span.
func (t *Telemetry) ModelCall(ctx context.Context, provider, model string) (context.Context, func(agent.ModelOutcome)) {
	start := time.Now()
	var span trace.Span
	if t.tracer != nil {
		// Names and attributes follow the OpenTelemetry GenAI conventions.
		ctx, span = t.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String(AttrRunID, runOf(ctx)), attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", provider), attribute.String("gen_ai.request.model", model)))
	}
	return ctx, func(o agent.ModelOutcome) {
		t.m.modelSeconds.WithLabelValues(provider, model).Observe(time.Since(start).Seconds())
		addTokens(t, provider, model, o.Usage)
		if o.ErrCode != "" {
			t.m.modelErrors.WithLabelValues(provider, model, o.ErrCode).Inc()
		}
		if span == nil {
			return
		}
		span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", o.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", o.Usage.OutputTokens))
		if o.ErrCode != "" {
			span.SetAttributes(attribute.String("error.type", o.ErrCode))
			span.SetStatus(codes.Error, o.ErrCode)
		}
		span.End()
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
// result status, and a span.
func (t *Telemetry) ToolCall(ctx context.Context, name, callID string) (context.Context, func(status string)) {
	start := time.Now()
	var span trace.Span
	if t.tracer != nil {
		ctx, span = t.tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(
			attribute.String(AttrRunID, runOf(ctx)), attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name), attribute.String("gen_ai.tool.call.id", callID)))
	}
	return ctx, func(status string) {
		t.m.toolSeconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
		t.m.toolCalls.WithLabelValues(name, status).Inc()
		if span == nil {
			return
		}
		span.SetAttributes(attribute.String("caduceus.tool.status", status))
		if status != event.ToolOK {
			span.SetStatus(codes.Error, status)
		}
		span.End()
	}
}

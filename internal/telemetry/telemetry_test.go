package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// scrape GETs h and parses the answer with Prometheus's text parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the answer does not parse: %v", err)
	}
	return mfs
}

// value is the value of the series of family name with the given labels
// (a histogram's count), or -1 when there is none.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf, ok := mfs[name]
	if !ok {
		return -1
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// What the instrumented packages report shows in the scrape, parsed by
// Prometheus's own parser.
func TestHandlerServesWhatWasReported(t *testing.T) {
	tel, err := New(Config{Version: "test", Role: "web+runner", Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Tracing() {
		t.Fatal("tracing is on without an endpoint")
	}
	before := scrape(t, tel.Handler())
	for _, fam := range []string{"caduceus_journal_append_seconds", "caduceus_sse_subscribers", "caduceus_runner_executions_total",
		"caduceus_runner_queue_wait_seconds", "go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := before[fam]; !ok {
			t.Errorf("family %s missing before anything happened", fam)
		}
	}
	if v := value(before, "caduceus_runner_executions_total", "outcome", "completed"); v != 0 {
		t.Errorf("executions before any: %v", v)
	}

	tel.Committed(2*time.Millisecond, nil)
	tel.Appended(3 * time.Millisecond)
	tel.Appended(4 * time.Millisecond)
	tel.StreamOpened("session")
	tel.StreamOpened("session")
	tel.StreamClosed("session")
	tel.QueueWaited(40 * time.Millisecond)
	ctx, end := tel.Executing(context.Background(), "run_x", 1)
	_, endModel := tel.ModelCall(ctx, "openai", "gpt-x")
	endModel(agent.ModelOutcome{Usage: event.UsageTotals{InputTokens: 120, OutputTokens: 30, CachedTokens: 100}})
	_, endModel = tel.ModelCall(ctx, "openai", "gpt-x")
	endModel(agent.ModelOutcome{ErrCode: "provider_rate_limited"})
	_, endTool := tel.ToolCall(ctx, "run_command", "call_1")
	endTool(event.ToolOK)
	_, endTool = tel.ToolCall(ctx, "run_command", "call_2")
	endTool(event.ToolTimeout)
	end("completed")

	after := scrape(t, tel.Handler())
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_journal_commit_seconds", nil, 1},
		{"caduceus_journal_append_seconds", nil, 2},
		{"caduceus_journal_commit_failures_total", nil, 0},
		{"caduceus_sse_subscribers", []string{"stream", "session"}, 1},
		{"caduceus_sse_subscribers", []string{"stream", "run"}, 0},
		{"caduceus_runner_queue_wait_seconds", nil, 1},
		{"caduceus_runner_executions_total", []string{"outcome", "completed"}, 1},
		{"caduceus_model_call_seconds", []string{"provider", "openai", "model", "gpt-x"}, 2},
		{"caduceus_model_tokens_total", []string{"model", "gpt-x", "kind", "input"}, 120},
		{"caduceus_model_tokens_total", []string{"model", "gpt-x", "kind", "output"}, 30},
		{"caduceus_model_tokens_total", []string{"model", "gpt-x", "kind", "cached"}, 100},
		{"caduceus_model_errors_total", []string{"model", "gpt-x", "code", "provider_rate_limited"}, 1},
		{"caduceus_tool_duration_seconds", []string{"tool", "run_command"}, 2},
		{"caduceus_tool_calls_total", []string{"tool", "run_command", "status", "ok"}, 1},
		{"caduceus_tool_calls_total", []string{"tool", "run_command", "status", "timeout"}, 1},
	}
	for _, tc := range tests {
		if got := value(after, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

// Scrapers that ask for OpenMetrics get it.
func TestHandlerOpenMetrics(t *testing.T) {
	tel, err := New(Config{Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	tel.Handler().ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); expfmt.ResponseFormat(rec.Header()).FormatType() != expfmt.TypeOpenMetrics {
		t.Fatalf("content type %q", ct)
	}
}

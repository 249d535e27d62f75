package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// With tracing off the HTTP middleware is no middleware at all: the
// handler is returned as it is, so requests pay nothing for it.
func TestHTTPWithoutTracingIsTheHandler(t *testing.T) {
	tel, err := New(Config{Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	h := http.NotFoundHandler()
	if got := tel.HTTP(h); reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
		t.Fatal("tracing off, yet the handler is wrapped")
	}
	if tp := tel.TraceParent(context.Background()); tp != "" {
		t.Fatalf("traceparent %q without tracing", tp)
	}
}

func TestRouteOf(t *testing.T) {
	const run, ses = "run_01m87cyy4kz1knzj4ardq674mb", "ses_01m87cqqea2fjd479tkjafqnbt"
	tests := []struct{ path, route, runID string }{
		{"/api/sessions/" + ses + "/messages", "/api/sessions/{id}/messages", ""},
		{"/api/runs/" + run + "/events", "/api/runs/{id}/events", run},
		{"/api/runs/run_short/events", "/api/runs/run_short/events", ""},
		{"/api/health", "/api/health", ""},
		{"/metrics", "/metrics", ""},
		{"/assets/app.js", "/*", ""},
	}
	for _, tc := range tests {
		if route, runID := routeOf(tc.path); route != tc.route || runID != tc.runID {
			t.Errorf("routeOf(%q) = %q, %q; want %q, %q", tc.path, route, runID, tc.route, tc.runID)
		}
	}
}

// The middleware keeps what event streams need from the ResponseWriter:
// flushing through http.ResponseController.
func TestHTTPKeepsFlushing(t *testing.T) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer rc.Close()
	tel, err := New(Config{TracesEndpoint: rc.URL + "/v1/traces", Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	srv := httptest.NewServer(tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the middleware: %v", err)
		}
		w.WriteHeader(http.StatusTeapot) // after the flush: stays 200
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkToolCall is what watching one tool call costs: metrics only
// (tracing off), and metrics plus a span exported in batches.
func BenchmarkToolCall(b *testing.B) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer rc.Close()
	for _, tc := range []struct {
		name     string
		endpoint string
	}{{"tracing=off", ""}, {"tracing=on", rc.URL + "/v1/traces"}} {
		b.Run(tc.name, func(b *testing.B) {
			tel, err := New(Config{TracesEndpoint: tc.endpoint, Log: discard()})
			if err != nil {
				b.Fatal(err)
			}
			defer tel.Shutdown(context.Background())
			ctx, end := tel.Executing(context.Background(), "run_x", 1)
			defer end("completed")
			b.ReportAllocs()
			for range b.N {
				_, done := tel.ToolCall(ctx, "read_file", "call_1")
				done(event.ToolOK)
			}
		})
	}
}

package telemetry

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/caduceus-dev/caduceus/internal/id"
)

// HTTP wraps next with a server span per request. It continues a trace
// the client started (a traceparent header) and names the span after the
// route with ids replaced by {id}, so span names stay few. With tracing
// off it returns next itself.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	if t.tracer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		route, runID := routeOf(r.URL.Path)
		attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method), attribute.String("http.route", route)}
		if runID != "" {
			attrs = append(attrs, attribute.String(AttrRunID, runID))
		}
		ctx, span := t.tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
	})
}

// TraceParent is the W3C traceparent of the span in ctx ("" when tracing
// is off), stored with a run so its execution can link back to the
// request that queued it (api.Tracer).
func (t *Telemetry) TraceParent(ctx context.Context) string {
	if t.tracer == nil {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// TagRun puts the run a request created on the request's span
// (api.Tracer).
func (t *Telemetry) TagRun(ctx context.Context, runID string) {
	if t.tracer != nil {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrRunID, runID))
	}
}

// routeOf replaces the ids in an API path by {id} and returns the run id
// it names, if any.
func routeOf(path string) (route, runID string) {
	if !strings.HasPrefix(path, "/api/") {
		if path == "/metrics" {
			return path, ""
		}
		return "/*", "" // the workbench's page and bundle
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		prefix, _, ok := strings.Cut(p, "_")
		if !ok || !id.Valid(prefix, p) {
			continue
		}
		if prefix == "run" {
			runID = p
		}
		parts[i] = "{id}"
	}
	return strings.Join(parts, "/"), runID
}

// statusWriter notes the status code; Unwrap keeps http.ResponseController
// (flushes and write deadlines of event streams) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// FlushError sends the header as it stands (200 when none was set).
func (s *statusWriter) FlushError() error {
	s.wrote = true
	return http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

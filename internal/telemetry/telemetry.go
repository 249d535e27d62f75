// Package telemetry is what an operator watches: Prometheus metrics in a
// registry of the process's own (never the global one), scrape-time gauges
// read from the store, and OpenTelemetry traces from an HTTP request to a
// run, its model calls and its tool calls, exported over OTLP/HTTP when an
// endpoint is configured and costing nothing when not.
//
// The packages that do the work know nothing of Prometheus or OpenTelemetry:
// each declares the small interface it needs (journal.Observer,
// api.StreamObserver, runner.Telemetry, agent.Observer) and *Telemetry
// satisfies them all.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config describes the process being watched.
type Config struct {
	Version string
	// Role is "web", "runner" or "web+runner"; traces carry it.
	Role string
	// TracesEndpoint is the OTLP/HTTP URL spans are posted to
	// (http://collector:4318/v1/traces); "" turns tracing off.
	TracesEndpoint string
	// BatchTimeout is how long spans wait to be exported together;
	// 0 means 2 s.
	BatchTimeout time.Duration
	Log          *slog.Logger
}

// Telemetry holds one process's metrics and, when configured, its tracer.
type Telemetry struct {
	reg *prometheus.Registry
	m   *metrics
	log *slog.Logger

	// tracer is nil when tracing is off: no span is ever started, so the
	// instrumented paths pay one nil check.
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// New builds the registry and, if cfg.TracesEndpoint is set, the OTLP
// exporter (which connects lazily: a collector that is down costs failed
// exports in the log, never a failed start).
func New(cfg Config) (*Telemetry, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	t := &Telemetry{reg: reg, m: newMetrics(reg), log: cfg.Log}
	if cfg.TracesEndpoint == "" {
		return t, nil
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.TracesEndpoint))
	if err != nil {
		return nil, fmt.Errorf("traces endpoint %q: %w", cfg.TracesEndpoint, err)
	}
	// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME may add to or
	// override what we say about ourselves.
	res, err := resource.Merge(resource.NewSchemaless(
		attribute.String("service.name", "caduceus"),
		attribute.String("service.version", cfg.Version),
		attribute.String("caduceus.role", cfg.Role),
	), resource.Environment())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	bt := cfg.BatchTimeout
	if bt <= 0 {
		bt = 2 * time.Second
	}
	t.provider = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(bt)), sdktrace.WithResource(res))
	t.tracer = t.provider.Tracer("github.com/caduceus-dev/caduceus")
	return t, nil
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t.tracer != nil }

// WatchStore adds the scrape-time gauges read from st (runs by status,
// queue depth and oldest wait, live runners, pending requests). Only the
// web tier does: the values describe the shared store, not the process.
func (t *Telemetry) WatchStore(st StoreReader, liveWithin time.Duration) {
	t.reg.MustRegister(newStoreCollector(st, liveWithin, t.log))
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(t.log.Handler(), slog.LevelWarn),
		EnableOpenMetrics: true,
	})
}

// Registry is the process's registry, for tests and for a caller that adds
// collectors of its own.
func (t *Telemetry) Registry() *prometheus.Registry { return t.reg }

// Shutdown exports the spans still buffered, waiting at most until ctx ends.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t.provider == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("exporting the last spans: %w", err)
	}
	return nil
}

// Package telemetry is what an operator watches: Prometheus metrics in a
// registry of the process's own (never the global one), fed where things
// happen, and gauges read from the store at scrape time.
//
// The packages that do the work know nothing of Prometheus: each declares
// the small interface it needs (journal.Observer, api.StreamObserver,
// runner.Telemetry, agent.Observer) and *Telemetry satisfies them all.
package telemetry

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config describes the process being watched.
type Config struct {
	Log *slog.Logger
}

// Telemetry holds one process's metrics.
type Telemetry struct {
	reg *prometheus.Registry
	m   *metrics
	log *slog.Logger
}

// New builds the registry.
func New(cfg Config) (*Telemetry, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	return &Telemetry{reg: reg, m: newMetrics(reg), log: cfg.Log}, nil
}

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

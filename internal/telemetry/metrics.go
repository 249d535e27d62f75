package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every metric of Caduceus.
const Namespace = "caduceus"

// Buckets. Latencies of local work (a commit, a tool) start below a
// millisecond; model calls take seconds to minutes; queue waits span both.
var (
	fastBuckets  = prometheus.ExponentialBuckets(0.0005, 2, 16) // 0.5 ms .. ~16 s
	modelBuckets = prometheus.ExponentialBuckets(0.1, 2, 13)    // 0.1 s .. ~7 min
	waitBuckets  = prometheus.ExponentialBuckets(0.005, 2, 18)  // 5 ms .. ~11 min
)

// metrics are the collectors fed where things happen. The gauges that
// describe the store (runs by status, queue, runners, requests) are read
// at scrape time instead (storeCollector).
type metrics struct {
	appendSeconds  prometheus.Histogram
	commitSeconds  prometheus.Histogram
	commitFailures prometheus.Counter
	streams        *prometheus.GaugeVec
	queueWait      prometheus.Histogram
	executions     *prometheus.CounterVec
	modelSeconds   *prometheus.HistogramVec
	modelTokens    *prometheus.CounterVec
	modelErrors    *prometheus.CounterVec
	toolSeconds    *prometheus.HistogramVec
	toolCalls      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		appendSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "journal", Name: "append_seconds",
			Help:    "Time from submitting a write to the journal writer until it is durable (or failed), per write.",
			Buckets: fastBuckets,
		}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "journal", Name: "commit_seconds",
			Help:    "Duration of one group commit (one database transaction holding one or more writes).",
			Buckets: fastBuckets,
		}),
		commitFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "journal", Name: "commit_failures_total",
			Help: "Group commits whose transaction failed as a whole.",
		}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "sse", Name: "subscribers",
			Help: "Open Server-Sent Events streams, by stream (tab, session, run).",
		}, []string{"stream"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "runner", Name: "queue_wait_seconds",
			Help:    "Time from a run being queued until a runner of this process started it (first attempt).",
			Buckets: waitBuckets,
		}),
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "runner", Name: "executions_total",
			Help: "Executions of runs by this process's runner, by how they ended (completed, failed, cancelled, parked, handed_over, recovering, lease_lost, store_error).",
		}, []string{"outcome"}),
		modelSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "model", Name: "call_seconds",
			Help:    "Duration of model calls, from request to the end of the stream.",
			Buckets: modelBuckets,
		}, []string{"provider", "model"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "model", Name: "tokens_total",
			Help: "Tokens reported by providers, by kind (input, output, cached, reasoning).",
		}, []string{"provider", "model", "kind"}),
		modelErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "model", Name: "errors_total",
			Help: "Model calls that failed, by error code (provider_rate_limited, provider_error, ...).",
		}, []string{"provider", "model", "code"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "tool", Name: "duration_seconds",
			Help:    "Execution time of tools that ran (waits for approval excluded).",
			Buckets: fastBuckets,
		}, []string{"tool"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "tool", Name: "calls_total",
			Help: "Tools that ran, by result status (ok, error, timeout, cancelled); failures are the statuses other than ok.",
		}, []string{"tool", "status"}),
	}
	// Series that exist from the start: a rate or a sum over them works
	// before the first stream opens or the first run ends.
	for _, s := range []string{"tab", "session", "run"} {
		m.streams.WithLabelValues(s)
	}
	for _, o := range []string{"completed", "failed", "cancelled", "expired", "parked", "handed_over", "recovering", "lease_lost", "store_error"} {
		m.executions.WithLabelValues(o)
	}
	reg.MustRegister(m.appendSeconds, m.commitSeconds, m.commitFailures, m.streams, m.queueWait,
		m.executions, m.modelSeconds, m.modelTokens, m.modelErrors, m.toolSeconds, m.toolCalls,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Committed records one group commit of the journal writer
// (journal.Observer).
func (t *Telemetry) Committed(took time.Duration, err error) {
	t.m.commitSeconds.Observe(took.Seconds())
	if err != nil {
		t.m.commitFailures.Inc()
	}
}

// Appended records how long one write waited until it was durable
// (journal.Observer).
func (t *Telemetry) Appended(took time.Duration) { t.m.appendSeconds.Observe(took.Seconds()) }

// StreamOpened and StreamClosed count open event streams (api.StreamObserver).
func (t *Telemetry) StreamOpened(stream string) { t.m.streams.WithLabelValues(stream).Inc() }

// StreamClosed is StreamOpened's counterpart.
func (t *Telemetry) StreamClosed(stream string) { t.m.streams.WithLabelValues(stream).Dec() }

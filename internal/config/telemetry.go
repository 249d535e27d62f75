package config

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
)

// Telemetry is how a process reports on itself: its log format, where a
// runner serves its metrics, and where traces go.
type Telemetry struct {
	// LogFormat is "text" (the default) or "json".
	LogFormat string
	// MetricsAddr is where a `caduceus runner` process serves GET /metrics;
	// "" serves none. The web tier serves /metrics on its own address.
	MetricsAddr string
	// TracesEndpoint is the OTLP/HTTP URL spans are posted to; "" turns
	// tracing off.
	TracesEndpoint string
}

// Log formats.
const (
	LogText = "text"
	LogJSON = "json"
)

func (t *Telemetry) flags(fs *flag.FlagSet, cmd string, getenv func(string) string) {
	fs.StringVar(&t.LogFormat, "log-format", envOr(getenv, "CADUCEUS_LOG_FORMAT", LogText), "log lines as text or json (env CADUCEUS_LOG_FORMAT)")
	if cmd == "runner" {
		fs.StringVar(&t.MetricsAddr, "metrics-addr", envOr(getenv, "CADUCEUS_METRICS_ADDR", ""), "serve GET /metrics on this address, e.g. 127.0.0.1:7421; a non-loopback address needs CADUCEUS_TOKEN (env CADUCEUS_METRICS_ADDR)")
	}
	fs.StringVar(&t.TracesEndpoint, "otlp-endpoint", tracesEndpoint(getenv), "OTLP/HTTP URL to export traces to, e.g. http://localhost:4318/v1/traces; empty: no tracing (env OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)")
}

// tracesEndpoint follows the OpenTelemetry SDK's environment variables: a
// traces endpoint is used as it is, a general endpoint gets the traces
// path; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn tracing
// off.
func tracesEndpoint(getenv func(string) string) string {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return ""
	}
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v
	}
	if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	return ""
}

func (t *Telemetry) check() error {
	switch t.LogFormat {
	case LogText, LogJSON:
	default:
		return fmt.Errorf("log-format must be text or json, not %q", t.LogFormat)
	}
	if t.TracesEndpoint != "" {
		u, err := url.Parse(t.TracesEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The value is not echoed: an endpoint URL may carry credentials.
			return fmt.Errorf("otlp-endpoint must be an http:// or https:// URL with a host")
		}
	}
	return nil
}

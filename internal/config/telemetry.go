package config

import (
	"flag"
	"fmt"
)

// Telemetry is how a process reports on itself: its log format and where
// a runner serves its metrics.
type Telemetry struct {
	// LogFormat is "text" (the default) or "json".
	LogFormat string
	// MetricsAddr is where a `caduceus runner` process serves GET /metrics;
	// "" serves none. The web tier serves /metrics on its own address.
	MetricsAddr string
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
}

func (t *Telemetry) check() error {
	switch t.LogFormat {
	case LogText, LogJSON:
	default:
		return fmt.Errorf("log-format must be text or json, not %q", t.LogFormat)
	}
	return nil
}

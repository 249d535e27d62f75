package main

import (
	"log/slog"

	"go.opentelemetry.io/otel"
)

// routeOTelErrors sends OpenTelemetry's internal errors (a collector that
// refuses an export, ...) to the process's log instead of the standard
// logger's plain lines. OpenTelemetry keeps one handler per process,
// so it is set here, where the process is assembled, and nowhere else.
func routeOTelErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing", "err", err)
	}))
}

package app

import (
	"io"
	"log/slog"

	"github.com/caduceus-dev/caduceus/internal/config"
)

// NewLogger returns a logger writing lines of level and above to w in
// format (config.LogText or config.LogJSON). New wraps its handler in the
// redactor, so keys are removed whatever the format.
func NewLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

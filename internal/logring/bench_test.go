package logring

import (
	"errors"
	"io"
	"log/slog"
	"testing"
)

// BenchmarkLogLine is the cost the ring adds to every log line: a line
// written by the server's text handler alone (the baseline), and teed into
// a full ring as the app does (each line then evicts the oldest).
func BenchmarkLogLine(b *testing.B) {
	err := errors.New("database is locked")
	cases := []struct {
		name string
		h    func() slog.Handler
	}{
		{"baseline/text", func() slog.Handler { return slog.NewTextHandler(io.Discard, nil) }},
		{"teed/text+ring", func() slog.Handler {
			return slog.NewMultiHandler(slog.NewTextHandler(io.Discard, nil), New(0, 0, slog.LevelInfo).Handler())
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			log := slog.New(c.h()).With("component", "runner")
			b.ReportAllocs()
			for i := range b.N {
				log.Warn("stream read failed", "run", "run_01m87x2mzb72c0nwswprjtre1f", "n", i, "err", err)
			}
		})
	}
}

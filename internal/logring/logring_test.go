package logring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/secret"
)

func TestBounds(t *testing.T) {
	tests := []struct {
		name            string
		lines, bytes    int
		write           int
		msgLen          int
		wantMax, wantLo int // lines kept: at most wantMax, at least wantLo
	}{
		{name: "by count", lines: 10, bytes: 1 << 20, write: 25, msgLen: 10, wantMax: 10, wantLo: 10},
		{name: "by count, many times over", lines: 7, bytes: 1 << 20, write: 1000, msgLen: 10, wantMax: 7, wantLo: 7},
		{name: "by bytes", lines: 1000, bytes: 1000, write: 100, msgLen: 100, wantMax: 1000 / (100 + 64), wantLo: 1},
		{name: "one line larger than the buffer is kept alone", lines: 10, bytes: 10, write: 3, msgLen: 100, wantMax: 1, wantLo: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.lines, tt.bytes, slog.LevelInfo)
			log := slog.New(b.Handler())
			for i := range tt.write {
				log.Info(fmt.Sprintf("%03d", i) + strings.Repeat("x", tt.msgLen-3))
			}
			got, last := b.Lines(Query{Min: slog.LevelDebug})
			if len(got) > tt.wantMax || len(got) < tt.wantLo {
				t.Fatalf("kept %d lines, want %d..%d", len(got), tt.wantLo, tt.wantMax)
			}
			for i := 1; i < len(got); i++ {
				if got[i].ID != got[i-1].ID+1 {
					t.Fatalf("kept lines are not the latest in order: %d after %d", got[i].ID, got[i-1].ID)
				}
			}
			if last != int64(tt.write) || got[len(got)-1].ID != last || !strings.HasPrefix(got[len(got)-1].Msg, fmt.Sprintf("%03d", tt.write-1)) {
				t.Errorf("the newest line is not kept: last %d, %+v", last, got[len(got)-1])
			}
		})
	}
}

func TestQuery(t *testing.T) {
	b := New(0, 0, slog.LevelDebug)
	log := slog.New(b.Handler()).With("component", "runner").WithGroup("req")
	log.Debug("polling", "n", 1)
	log.Info("run started", "run", "run_abc")
	log.Warn("slow disk", "took", 3*time.Second)
	log.Error("write failed", "err", errors.New("disk full"))
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{name: "all", q: Query{Min: slog.LevelDebug}, want: []string{"polling", "run started", "slow disk", "write failed"}},
		{name: "warn and above", q: Query{Min: slog.LevelWarn}, want: []string{"slow disk", "write failed"}},
		{name: "text in a message, any case", q: Query{Min: slog.LevelDebug, Text: "SLOW"}, want: []string{"slow disk"}},
		{name: "text in an attribute", q: Query{Min: slog.LevelDebug, Text: "run_abc"}, want: []string{"run started"}},
		{name: "text in an error", q: Query{Min: slog.LevelDebug, Text: "disk full"}, want: []string{"write failed"}},
		{name: "after an id", q: Query{Min: slog.LevelDebug, After: 2}, want: []string{"slow disk", "write failed"}},
		{name: "the latest n", q: Query{Min: slog.LevelDebug, Limit: 1}, want: []string{"write failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := b.Lines(tt.q)
			var msgs []string
			for _, e := range got {
				msgs = append(msgs, e.Msg)
			}
			if fmt.Sprint(msgs) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", msgs, tt.want)
			}
		})
	}
	got, _ := b.Lines(Query{Min: slog.LevelInfo, Text: "run started"})
	if got[0].Attrs["component"] != "runner" || got[0].Attrs["req.run"] != "run_abc" || got[0].Level != "INFO" {
		t.Errorf("attrs %+v", got[0])
	}
	for _, s := range []string{"", "debug", "INFO", "warn", "error"} {
		if _, err := ParseLevel(s); err != nil {
			t.Errorf("ParseLevel(%q): %v", s, err)
		}
	}
	if _, err := ParseLevel("loud"); err == nil {
		t.Error("ParseLevel accepted loud")
	}
}

// As the app wires it: the buffer sits behind the redactor, so a key in
// an error's text never reaches it.
func TestSecretsNeverReachTheBuffer(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	b := New(0, 0, slog.LevelInfo)
	red := secret.NewRedactor(key)
	log := slog.New(red.Handler(slog.NewMultiHandler(slog.DiscardHandler, b.Handler())))
	log.Error("provider refused "+key, "err", fmt.Errorf("calling: %w", errors.New("401 for key "+key)),
		slog.Group("req", "auth", "Bearer "+key))
	log.With("key", key).Info("x")
	lines, _ := b.Lines(Query{Min: slog.LevelDebug})
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, e := range lines {
		if strings.Contains(fmt.Sprint(e), key) || strings.Contains(fmt.Sprint(e), "0123456789abcdef") {
			t.Errorf("the key reached the buffer: %+v", e)
		}
	}
}

func TestWaitWakesOnANewLine(t *testing.T) {
	b := New(0, 0, slog.LevelInfo)
	log := slog.New(b.Handler())
	log.Info("one")
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Wait(context.Background(), 1, time.Minute)
	}()
	time.Sleep(20 * time.Millisecond)
	log.Info("two")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not wake on a new line")
	}
	// Below the buffer's level: not kept, no wake-up needed.
	log.Debug("quiet")
	if got, last := b.Lines(Query{Min: slog.LevelDebug}); len(got) != 2 || last != 2 {
		t.Errorf("got %d lines, last %d", len(got), last)
	}
}

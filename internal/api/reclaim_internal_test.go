package api

import (
	"testing"
	"time"
)

// Streams that wrote little never cause a release; a wave of large ones
// ending causes exactly one, after the delay; the next wave's release
// waits until gap has passed since the previous one.
func TestReclaimer(t *testing.T) {
	t.Parallel()
	calls := make(chan time.Time, 10)
	r := &reclaimer{free: func() { calls <- time.Now() }, threshold: 100, delay: 20 * time.Millisecond, gap: 300 * time.Millisecond}
	none := func(d time.Duration) {
		t.Helper()
		select {
		case <-calls:
			t.Fatal("memory released without cause")
		case <-time.After(d):
		}
	}
	one := func() time.Time {
		t.Helper()
		select {
		case at := <-calls:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no release")
		}
		return time.Time{}
	}

	r.ended(40)
	r.ended(59)
	none(100 * time.Millisecond)

	start := time.Now()
	r.ended(1) // 100: the threshold
	for range 5 {
		r.ended(1000) // the rest of the wave
	}
	first := one()
	if first.Sub(start) < r.delay {
		t.Fatalf("released %s after the threshold, before the delay of %s", first.Sub(start), r.delay)
	}
	none(100 * time.Millisecond)

	r.ended(500)
	if second := one(); second.Sub(first) < r.gap {
		t.Fatalf("second release %s after the first, gap %s", second.Sub(first), r.gap)
	}
	none(50 * time.Millisecond)
}

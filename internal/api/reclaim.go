package api

import (
	"sync"
	"time"
)

// reclaimer gives memory back to the operating system once event streams
// that wrote a lot have ended. Go returns freed heap to the system only
// slowly: after 200 slow replays of a 20 MB history ended, the server's
// RSS stayed at its peak for two minutes (docs/BENCHMARKS.md, "Slow
// replays"). A wave of such streams ending is rare and its garbage large,
// so one forced collection and release after it (a few milliseconds of
// CPU for this heap) is worth it; ordinary streams never trigger one.
type reclaimer struct {
	free      func() // debug.FreeOSMemory
	threshold int64  // bytes written by ended streams that warrant a release
	delay     time.Duration
	gap       time.Duration // least time between two releases

	mu      sync.Mutex
	written int64
	armed   bool
	last    time.Time
}

// Defaults: a release once the streams that ended since the last one
// wrote 16 MiB, 2 s after the first end past that (the rest of a wave of
// disconnects ends meanwhile), at most every 30 s.
const (
	reclaimThreshold = 16 << 20
	reclaimDelay     = 2 * time.Second
	reclaimGap       = 30 * time.Second
)

// ended records a stream that ended after writing written bytes.
func (r *reclaimer) ended(written int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written += written
	if r.armed || r.written < r.threshold {
		return
	}
	r.armed = true
	wait := r.delay
	if next := time.Until(r.last.Add(r.gap)); next > wait {
		wait = next
	}
	time.AfterFunc(wait, r.run)
}

func (r *reclaimer) run() {
	r.mu.Lock()
	r.written, r.armed, r.last = 0, false, time.Now()
	r.mu.Unlock()
	r.free()
}

package wake

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchBuses opens a sender and two peers on one dir and waits until the
// sender has found both.
func benchBuses(b *testing.B) (a *Bus, peers []*Bus) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "wake")
	a = openT(b, dir, defaultOptions())
	peers = []*Bus{openT(b, dir, defaultOptions()), openT(b, dir, defaultOptions())}
	deadline := time.Now().Add(waitLong)
	for a.Peers() != 2 {
		if time.Now().After(deadline) {
			b.Fatal("the sender did not find its peers")
		}
		time.Sleep(time.Millisecond)
	}
	return a, peers
}

// BenchmarkNotify is what a commit pays: Notify hands off to the sender
// goroutine and returns. Back-to-back calls coalesce into fewer rounds.
func BenchmarkNotify(b *testing.B) {
	a, _ := benchBuses(b)
	b.ReportAllocs()
	for b.Loop() {
		a.Notify()
	}
}

// BenchmarkNotifyRound is the work behind one Notify with two peers: the
// peer-list check and one datagram to each, done by the sender goroutine.
func BenchmarkNotifyRound(b *testing.B) {
	a, _ := benchBuses(b)
	b.ReportAllocs()
	for b.Loop() {
		a.round(a.notifyMsg)
	}
	// Back to back, rounds outrun the peers' readers and find their queues
	// full; those sends are dropped, as they would be in production.
	b.ReportMetric(float64(a.dropped.Load())/float64(2*b.N), "dropped/send")
}

// BenchmarkWakeLatency measures Notify on one Bus to C() firing on another,
// one wake-up at a time, and reports the median and 99th percentile.
func BenchmarkWakeLatency(b *testing.B) {
	a, peers := benchBuses(b)
	p := peers[0]
	for len(p.C()) > 0 {
		<-p.C()
	}
	lat := make([]time.Duration, 0, 1024)
	for b.Loop() {
		t0 := time.Now()
		a.Notify()
		select {
		case <-p.C():
		case <-time.After(waitLong):
			b.Fatal("no wake-up")
		}
		lat = append(lat, time.Since(t0))
		// The other peer's wake-up is not measured; let it settle.
		for len(peers[1].C()) > 0 {
			<-peers[1].C()
		}
	}
	slices.Sort(lat)
	q := func(f float64) float64 {
		return float64(lat[int(f*float64(len(lat)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

package api

import (
	"sync"
	"time"
)

// Sign-in rate limiting. The counts live in this web node's memory: behind
// a load balancer each node counts on its own, so an attacker spreading
// guesses over n nodes gets n times the attempts (still exponentially
// slowed), and a restart forgets them. A shared count would cost a store
// write per failed attempt, which is what an attacker would then flood.
const (
	// loginFreeFailures may fail in a row before attempts are slowed.
	loginFreeFailures = 5
	// loginWindow forgets a name's or address's failures this long after
	// its last one; it is also the longest wait.
	loginWindow = 15 * time.Minute
	// loginMaxKeys bounds the memory of the limiter: past it, forgotten
	// entries are swept, and if none are the oldest is dropped.
	loginMaxKeys = 10000
)

// loginLimiter counts failed sign-ins per name and per client address.
// After loginFreeFailures failures within loginWindow, the k-th failure
// makes the next attempt wait 2^(k-5) seconds after it, up to loginWindow.
type loginLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]loginFailures
}

type loginFailures struct {
	count int
	last  time.Time
}

func newLoginLimiter(now func() time.Time) *loginLimiter {
	if now == nil {
		now = time.Now
	}
	return &loginLimiter{now: now, m: map[string]loginFailures{}}
}

func nameKey(name string) string { return "name\x00" + name }
func addrKey(addr string) string { return "addr\x00" + addr }

// wait returns how long the caller must wait before trying keys again;
// zero when it may try now.
func (l *loginLimiter) wait(keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var longest time.Duration
	for _, k := range keys {
		f, ok := l.m[k]
		if !ok || now.Sub(f.last) >= loginWindow || f.count < loginFreeFailures {
			continue
		}
		if w := f.last.Add(backoff(f.count)).Sub(now); w > longest {
			longest = w
		}
	}
	return longest
}

// backoff is the wait after the count-th failure (count ≥ loginFreeFailures).
func backoff(count int) time.Duration {
	shift := count - loginFreeFailures
	if shift >= 10 { // 2^10 s > loginWindow
		return loginWindow
	}
	return min(time.Duration(1<<shift)*time.Second, loginWindow)
}

// fail records a failed attempt under each key.
func (l *loginLimiter) fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f, ok := l.m[k]
		if !ok && len(l.m) >= loginMaxKeys {
			l.sweep(now)
		}
		if ok && now.Sub(f.last) >= loginWindow {
			f = loginFailures{}
		}
		l.m[k] = loginFailures{count: f.count + 1, last: now}
	}
}

// clear forgets key's failures (a successful sign-in clears its name).
func (l *loginLimiter) clear(key string) {
	l.mu.Lock()
	delete(l.m, key)
	l.mu.Unlock()
}

// sweep drops forgotten entries, and the oldest one if none was; l.mu is
// held.
func (l *loginLimiter) sweep(now time.Time) {
	var oldest string
	var oldestAt time.Time
	n := len(l.m)
	for k, f := range l.m {
		if now.Sub(f.last) >= loginWindow {
			delete(l.m, k)
			continue
		}
		if oldest == "" || f.last.Before(oldestAt) {
			oldest, oldestAt = k, f.last
		}
	}
	if len(l.m) == n && oldest != "" {
		delete(l.m, oldest)
	}
}

package wire

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Backoff says how often and how long to retry a request that failed
// before its response began.
type Backoff struct {
	Attempts int           // total tries including the first; 0 means 4
	Base     time.Duration // first delay before jitter; 0 means 500 ms
	Max      time.Duration // cap of one delay; 0 means 10 s
	// Jitter returns a number in [0,1); nil means math/rand. Tests fix it.
	Jitter func() float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Attempts <= 0 {
		b.Attempts = 4
	}
	if b.Base <= 0 {
		b.Base = 500 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 10 * time.Second
	}
	if b.Jitter == nil {
		b.Jitter = rand.Float64
	}
	return b
}

// delay is "full jitter" exponential backoff: retries of many clients
// spread out instead of hitting a recovering server in step.
func (b Backoff) delay(attempt int) time.Duration {
	d := b.Base << min(attempt, 16)
	if d <= 0 || d > b.Max {
		d = b.Max
	}
	return time.Duration(b.Jitter() * float64(d))
}

// Retryable reports whether a response status is worth retrying: rate
// limits, server errors and Anthropic's 529 "overloaded".
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// Do sends the request made by newReq until a response with a
// non-retryable status arrives, the attempts are used up or ctx ends.
// Connection failures (refused, reset, EOF before headers) are retried
// too. The returned response is the caller's to close; on a retryable
// status after the last attempt it is returned as is so the caller can
// read the server's message. onRetry, when set, hears about every retry.
func Do(ctx context.Context, client *http.Client, b Backoff, newReq func(context.Context) (*http.Request, error), onRetry func(attempt int, wait time.Duration, why string)) (*http.Response, error) {
	b = b.withDefaults()
	for attempt := 0; ; attempt++ {
		req, err := newReq(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		last := attempt+1 >= b.Attempts
		var wait time.Duration
		var why string
		switch {
		case err != nil:
			if ctx.Err() != nil || last || !transient(err) {
				return nil, err
			}
			wait, why = b.delay(attempt), "connection: "+err.Error()
		case Retryable(resp.StatusCode) && !last:
			wait, why = b.delay(attempt), resp.Status
			if ra, ok := retryAfter(resp.Header, time.Now()); ok {
				wait = min(max(wait, ra), b.Max)
			}
			drain(resp)
		default:
			return resp, nil
		}
		if onRetry != nil {
			onRetry(attempt+1, wait, why)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// transient reports connection failures that a retry may cure.
func transient(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// retryAfter reads how long the server asks us to wait: OpenAI's and
// Azure's retry-after-ms when present (it is finer than a second), else
// Retry-After in seconds (fractions tolerated) or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := seconds(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d, true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := seconds(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// seconds parses a non-negative number of units, capped at a day so a
// silly header cannot overflow a Duration.
func seconds(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	return time.Duration(min(f*float64(unit), float64(24*time.Hour))), true
}

// drain lets the connection be reused after a response we do not read.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

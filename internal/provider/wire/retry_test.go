package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fast retries without real waiting; jitter 0 makes every delay zero.
func fast(attempts int) Backoff {
	return Backoff{Attempts: attempts, Base: time.Millisecond, Max: 5 * time.Millisecond, Jitter: func() float64 { return 0 }}
}

type retryLog struct {
	mu      sync.Mutex
	retries []string
	waits   []time.Duration
}

func (l *retryLog) on(attempt int, wait time.Duration, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries = append(l.retries, fmt.Sprintf("%d:%s", attempt, why))
	l.waits = append(l.waits, wait)
}

// scripted answers with the given statuses in turn, then 200.
func scripted(t *testing.T, statuses ...int) (*httptest.Server, *int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != "payload" {
			t.Errorf("attempt got body %q: the request body must be rebuilt for every try", body)
		}
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		status := http.StatusOK
		if i < len(statuses) {
			status = statuses[i]
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "reply %d", i)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func post(url string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("payload"))
	}
}

func TestDoStatuses(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []int
		attempts   int
		wantStatus int
		wantTries  int
		wantWhy    []string
	}{
		{"success at once", nil, 4, 200, 1, nil},
		{"429 then success", []int{429}, 4, 200, 2, []string{"1:429 Too Many Requests"}},
		{"5xx then success", []int{500, 502, 503}, 4, 200, 4, []string{"1:500 Internal Server Error", "2:502 Bad Gateway", "3:503 Service Unavailable"}},
		{"529 overloaded is retried", []int{529}, 4, 200, 2, []string{"1:529 status code 529"}},
		{"408 is retried", []int{408}, 4, 200, 2, []string{"1:408 Request Timeout"}},
		{"retries exhausted returns the last response", []int{500, 500, 500, 500}, 3, 500, 3, []string{"1:500 Internal Server Error", "2:500 Internal Server Error"}},
		{"one attempt never retries", []int{503}, 1, 503, 1, nil},
		{"400 is not retried", []int{400}, 4, 400, 1, nil},
		{"401 is not retried", []int{401}, 4, 401, 1, nil},
		{"404 is not retried", []int{404}, 4, 404, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scripted(t, tt.statuses...)
			var log retryLog
			resp, err := Do(context.Background(), srv.Client(), fast(tt.attempts), post(srv.URL), log.on)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || *n != tt.wantTries {
				t.Fatalf("status %d after %d tries, want %d after %d", resp.StatusCode, *n, tt.wantStatus, tt.wantTries)
			}
			if want := fmt.Sprintf("reply %d", tt.wantTries-1); string(body) != want {
				t.Fatalf("body %q, want %q: the caller must be able to read the final response", body, want)
			}
			if strings.Join(log.retries, "|") != strings.Join(tt.wantWhy, "|") {
				t.Fatalf("retries %q, want %q", log.retries, tt.wantWhy)
			}
		})
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		value    string
		max      time.Duration
		wantWait time.Duration
	}{
		{"retry-after-ms", "Retry-After-Ms", "30", time.Second, 30 * time.Millisecond},
		{"retry-after seconds capped by Max", "Retry-After", "1", 40 * time.Millisecond, 40 * time.Millisecond},
		{"fractional seconds", "Retry-After", "0.02", time.Second, 20 * time.Millisecond},
		{"garbage is ignored", "Retry-After", "soon", time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					w.Header().Set(tt.header, tt.value)
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			var log retryLog
			b := Backoff{Attempts: 2, Base: time.Millisecond, Max: tt.max, Jitter: func() float64 { return 0 }}
			start := time.Now()
			resp, err := Do(context.Background(), srv.Client(), b, post(srv.URL), log.on)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || len(log.waits) != 1 || log.waits[0] != tt.wantWait {
				t.Fatalf("status %d waits %v, want 200 after one wait of %v", resp.StatusCode, log.waits, tt.wantWait)
			}
			if el := time.Since(start); el < tt.wantWait {
				t.Fatalf("returned after %v, before the %v the server asked for", el, tt.wantWait)
			}
		})
	}
}

func TestDoRetriesConnectionFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		var log retryLog
		_, err = Do(context.Background(), http.DefaultClient, fast(3), post("http://"+addr), log.on)
		if !errors.Is(err, syscall.ECONNREFUSED) || len(log.retries) != 2 {
			t.Fatalf("err %v after %d retries, want ECONNREFUSED after 2", err, len(log.retries))
		}
	})
	t.Run("closed before headers, then success", func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				panic(http.ErrAbortHandler) // connection dropped, no response
			}
			w.WriteHeader(http.StatusOK)
		}))
		defer srv.Close()
		var log retryLog
		resp, err := Do(context.Background(), srv.Client(), fast(3), post(srv.URL), log.on)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || len(log.retries) != 1 || !strings.HasPrefix(log.retries[0], "1:connection: ") {
			t.Fatalf("status %d retries %q", resp.StatusCode, log.retries)
		}
	})
	t.Run("permanent errors are not retried", func(t *testing.T) {
		boom := errors.New("tls: certificate signed by unknown authority")
		tries := 0
		client := &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) {
			tries++
			return nil, boom
		})}
		_, err := Do(context.Background(), client, fast(4), post("http://example.invalid"), nil)
		if !errors.Is(err, boom) || tries != 1 {
			t.Fatalf("err %v after %d tries, want the error after 1", err, tries)
		}
	})
	t.Run("building the request fails", func(t *testing.T) {
		boom := errors.New("bad request")
		_, err := Do(context.Background(), http.DefaultClient, fast(4), func(context.Context) (*http.Request, error) { return nil, boom }, nil)
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestDoStopsWhenContextEnds(t *testing.T) {
	srv, _ := scripted(t, 503, 503, 503)
	t.Run("during the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		b := Backoff{Attempts: 4, Base: time.Hour, Max: time.Hour, Jitter: func() float64 { return 0.99 }}
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		_, err := Do(ctx, srv.Client(), b, post(srv.URL), nil)
		if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
			t.Fatalf("err %v after %v, want context.Canceled promptly", err, time.Since(start))
		}
	})
	t.Run("before the first try", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		tries := 0
		client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			tries++
			return nil, r.Context().Err()
		})}
		_, err := Do(ctx, client, fast(4), post("http://example.invalid"), nil)
		if !errors.Is(err, context.Canceled) || tries > 1 {
			t.Fatalf("err %v after %d tries", err, tries)
		}
	})
}

func TestBackoffDelay(t *testing.T) {
	one := func() float64 { return 1 }
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Jitter: one}.withDefaults()
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, 100 * time.Millisecond},
		{1, 200 * time.Millisecond},
		{2, 400 * time.Millisecond},
		{3, 800 * time.Millisecond},
		{4, time.Second},
		{60, time.Second},
	}
	for _, tt := range tests {
		if got := b.delay(tt.attempt); got != tt.want {
			t.Errorf("delay(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
	huge := Backoff{Base: 1 << 60, Max: time.Minute, Jitter: one}.withDefaults()
	if got := huge.delay(16); got != time.Minute {
		t.Errorf("overflowing delay = %v, want the cap", got)
	}
	half := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Jitter: func() float64 { return 0.5 }}.withDefaults()
	if got := half.delay(1); got != 100*time.Millisecond {
		t.Errorf("jittered delay = %v, want 100ms", got)
	}
	d := Backoff{}.withDefaults()
	if d.Attempts != 4 || d.Base != 500*time.Millisecond || d.Max != 10*time.Second || d.Jitter == nil {
		t.Errorf("defaults %+v", d)
	}
	for range 100 {
		if got := d.delay(3); got < 0 || got > 4*time.Second {
			t.Fatalf("random delay %v outside [0, 4s]", got)
		}
	}
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 413: false, 422: false,
		408: true, 429: true, 500: true, 502: true, 503: true, 504: true, 529: true,
	} {
		if got := Retryable(status); got != want {
			t.Errorf("Retryable(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"fraction", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{"spaces", map[string]string{"Retry-After": " 3 "}, 3 * time.Second, true},
		{"negative", map[string]string{"Retry-After": "-1"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "later"}, 0, false},
		{"NaN", map[string]string{"Retry-After": "NaN"}, 0, false},
		{"absurd is capped", map[string]string{"Retry-After": "1e30"}, 24 * time.Hour, true},
		{"date ahead", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"date past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond, true},
		{"bad milliseconds fall back", map[string]string{"Retry-After-Ms": "x", "Retry-After": "1"}, time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("retryAfter = %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"EOF before headers", fmt.Errorf("Post: %w", io.EOF), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"timeout", timeoutErr{}, true},
		{"dns failure", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x"}}, true},
		{"cancelled", context.Canceled, false},
		{"certificate", errors.New("tls: failed to verify certificate"), false},
		{"plain", errors.New("boom"), false},
	}
	for _, tt := range tests {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("%s: transient = %v, want %v", tt.name, got, tt.want)
		}
	}
}

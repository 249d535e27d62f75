package api

import (
	"fmt"
	"testing"
	"time"
)

type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

// unchecked marks a step whose wait is not asserted.
const unchecked = time.Duration(-1)

func TestLoginLimiter(t *testing.T) {
	type step struct {
		advance time.Duration
		op      string // "fail", "ok" (clear the name), or "" (only check)
		keys    []string
		want    time.Duration // wait before the step's op, for its keys
	}
	ann, bob := nameKey("ann"), nameKey("bob")
	home, cafe := addrKey("10.0.0.1"), addrKey("10.0.0.2")
	fails := func(n int, keys ...string) []step {
		var s []step
		for range n {
			s = append(s, step{op: "fail", keys: keys, want: unchecked})
		}
		return s
	}
	cat := func(parts ...[]step) []step {
		var s []step
		for _, p := range parts {
			s = append(s, p...)
		}
		return s
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"five failures are free", []step{
			{op: "fail", keys: []string{ann, home}}, {op: "fail", keys: []string{ann, home}}, {op: "fail", keys: []string{ann, home}},
			{op: "fail", keys: []string{ann, home}}, {op: "fail", keys: []string{ann, home}, want: 0}}},
		{"the sixth attempt waits a second", cat(fails(5, ann, home), []step{{keys: []string{ann, home}, want: time.Second}})},
		{"doubling after each further failure", cat(fails(5, ann, home), []step{
			{advance: time.Second, op: "fail", keys: []string{ann, home}},
			{keys: []string{ann, home}, want: 2 * time.Second},
			{advance: 2 * time.Second, op: "fail", keys: []string{ann, home}},
			{keys: []string{ann, home}, want: 4 * time.Second},
			{advance: time.Second, keys: []string{ann, home}, want: 3 * time.Second},
		})},
		{"capped at the window", cat(fails(30, ann), []step{{keys: []string{ann}, want: loginWindow}})},
		{"per name: another name from another address is free", cat(fails(5, ann, home), []step{{keys: []string{bob, cafe}, want: 0}})},
		{"per address: another name from the same address waits", cat(fails(5, ann, home), []step{{keys: []string{bob, home}, want: time.Second}})},
		{"per name: the same name from another address waits", cat(fails(5, ann, home), []step{{keys: []string{ann, cafe}, want: time.Second}})},
		{"forgotten after the window", cat(fails(8, ann, home), []step{{advance: loginWindow, keys: []string{ann, home}, want: 0},
			{op: "fail", keys: []string{ann}, want: unchecked}, {keys: []string{ann}, want: 0}})},
		{"success clears the name, not the address", cat(fails(5, ann, home), []step{{op: "ok", keys: []string{ann}, want: unchecked},
			{keys: []string{ann, cafe}, want: 0}, {keys: []string{bob, home}, want: time.Second}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &testClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
			l := newLoginLimiter(clk.now)
			for i, s := range tt.steps {
				clk.t = clk.t.Add(s.advance)
				if got := l.wait(s.keys...); s.want != unchecked && got != s.want {
					t.Fatalf("step %d (%s %v): wait %v, want %v", i, s.op, s.keys, got, s.want)
				}
				switch s.op {
				case "fail":
					l.fail(s.keys...)
				case "ok":
					l.clear(s.keys[0])
				}
			}
		})
	}
}

func TestLoginLimiterBounded(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	l := newLoginLimiter(clk.now)
	for i := range loginMaxKeys + 50 {
		clk.t = clk.t.Add(time.Millisecond)
		l.fail(addrKey(fmt.Sprint(i)))
	}
	if n := len(l.m); n > loginMaxKeys {
		t.Fatalf("%d entries kept, bound %d", n, loginMaxKeys)
	}
}

package id

import (
	"testing"
	"time"
)

func TestNewIsSortableAndValid(t *testing.T) {
	a := New("run")
	time.Sleep(2 * time.Millisecond)
	b := New("run")
	if !(a < b) {
		t.Fatalf("ids not time-sorted: %s !< %s", a, b)
	}
	for _, s := range []string{a, b} {
		if !Valid("run", s) {
			t.Fatalf("Valid(%q) = false", s)
		}
	}
}

func TestValidRejects(t *testing.T) {
	for _, s := range []string{"", "run_", "ses_01hx", "run_0123456789abcdefghjkmnpqrsti", "run/../x", New("ses")} {
		if Valid("run", s) {
			t.Errorf("Valid(run, %q) = true", s)
		}
	}
}

func TestUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		s := New("evt")
		if seen[s] {
			t.Fatalf("duplicate %s", s)
		}
		seen[s] = true
	}
}

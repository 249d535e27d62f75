package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

type coded int

func (c coded) Error() string { return fmt.Sprintf("code %d", int(c)) }
func (c coded) Code() int     { return int(c) }

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"busy", coded(5), true},
		{"locked", coded(6), true},
		{"busy snapshot (extended code)", coded(5 | 2<<8), true},
		{"io error", coded(10), true},
		{"disk full", coded(13), true},
		{"cannot open", coded(14), true},
		{"wrapped", fmt.Errorf("append: %w", coded(13)), true},
		{"constraint", coded(19), false},
		{"conflict", store.ErrConflict, false},
		{"lease lost", store.ErrLeaseLost, false},
		{"plain", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		if got := store.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFull(t *testing.T) {
	if !store.Full(fmt.Errorf("x: %w", coded(13))) || store.Full(coded(5)) || store.Full(errors.New("disk full")) {
		t.Fatal("Full misjudges")
	}
}

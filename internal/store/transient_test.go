package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

type coded int

func (c coded) Error() string { return fmt.Sprintf("code %d", int(c)) }
func (c coded) Code() int     { return int(c) }

// safeToRetry is an error a driver marks as never having reached the
// server, as pgx's are.
type safeToRetry bool

func (s safeToRetry) Error() string     { return "conn closed" }
func (s safeToRetry) SafeToRetry() bool { return bool(s) }

// pgState is an error with a SQLSTATE, as PostgreSQL drivers' are.
type pgState string

func (s pgState) Error() string    { return "sqlstate " + string(s) }
func (s pgState) SQLState() string { return string(s) }

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
		{"pg serialization failure", pgState("40001"), true},
		{"pg deadlock", pgState("40P01"), true},
		{"pg disk full", fmt.Errorf("commit: %w", pgState("53100")), true},
		{"pg too many connections", pgState("53300"), true},
		{"pg connection failure", pgState("08006"), true},
		{"pg io error", pgState("58030"), true},
		{"pg admin shutdown", pgState("57P01"), true},
		{"pg starting up", pgState("57P03"), true},
		{"pg read-only standby", pgState("25006"), true},
		{"pg unique violation", pgState("23505"), false},
		{"pg syntax error", pgState("42601"), false},
		{"pg undefined table", pgState("42P01"), false},
		{"connection refused", fmt.Errorf("connect: %w", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}), true},
		{"connection cut", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"connection found closed", fmt.Errorf("query: %w", safeToRetry(true)), true},
		{"not safe to retry", safeToRetry(false), false},
		{"cancelled", fmt.Errorf("query: %w", context.Canceled), false},
		{"cancelled over a broken connection", errors.Join(context.DeadlineExceeded, &net.OpError{Op: "read", Err: syscall.ECONNRESET}), false},
	}
	for _, tc := range tests {
		if got := store.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFull(t *testing.T) {
	if !store.Full(fmt.Errorf("x: %w", coded(13))) || store.Full(coded(5)) || store.Full(errors.New("disk full")) ||
		!store.Full(fmt.Errorf("x: %w", pgState("53100"))) || store.Full(pgState("53300")) {
		t.Fatal("Full misjudges")
	}
}

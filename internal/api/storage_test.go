package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// codedErr looks like the SQLite driver's errors: a result code.
type codedErr int

func (c codedErr) Error() string { return fmt.Sprintf("sqlite error %d", int(c)) }
func (c codedErr) Code() int     { return int(c) }

// refusingStore fails every write with code while set (0: writes pass).
type refusingStore struct {
	store.Store
	code atomic.Int64
}

func (s *refusingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	if c := s.code.Load(); c != 0 {
		return codedErr(c)
	}
	return s.Store.Write(ctx, fn)
}

func (s *refusingStore) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	if c := s.code.Load(); c != 0 {
		return nil, codedErr(c)
	}
	return s.Store.WriteBatch(ctx, fns)
}

// A full disk or a busy database answers with a stable code and a plain
// message (507 storage_full, 503 store_unavailable), never 500, and
// nothing is stored; once the store takes writes again the same request
// succeeds.
func TestStorageFailures(t *testing.T) {
	t.Parallel()
	j := journaltest.Start(t, storetest.SQLite)
	rs := &refusingStore{Store: j.Store}
	log := slog.New(slog.DiscardHandler)
	w := journal.NewWriter(rs, j.Hub.Poke, log)
	w.Start()
	t.Cleanup(w.Close)
	svc := control.NewService(rs, w, t.TempDir(), control.RetryPolicy{})
	srv := httptest.NewServer(api.New(rs, svc, j.Hub, api.Info{Version: "test"}, api.Options{}, log).Handler())
	t.Cleanup(func() { j.StopHub(); srv.Close() })

	post := func(path, body string) (int, string, string) {
		t.Helper()
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e.Error.Code, res.Header.Get("Retry-After")
	}
	for _, tc := range []struct {
		name       string
		code       int
		status     int
		errCode    string
		retryAfter bool
	}{
		{"disk full", 13, http.StatusInsufficientStorage, "storage_full", false},
		{"database locked", 6, http.StatusServiceUnavailable, "store_unavailable", true},
		{"database busy", 5, http.StatusServiceUnavailable, "store_unavailable", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs.code.Store(int64(tc.code))
			status, code, ra := post("/api/sessions", `{"title":"x"}`)
			if status != tc.status || code != tc.errCode || (ra != "") != tc.retryAfter {
				t.Fatalf("POST /api/sessions: %d %q Retry-After %q, want %d %q", status, code, ra, tc.status, tc.errCode)
			}
			rs.code.Store(0)
			sessions, _, err := j.Store.ListSessions(context.Background(), store.SessionPage{Limit: 10})
			if err != nil || len(sessions) != 0 {
				t.Fatalf("sessions after a refused write: %d, %v", len(sessions), err)
			}
		})
	}
	if status, _, _ := post("/api/sessions", `{"title":"x"}`); status != http.StatusCreated {
		t.Fatalf("after the store recovered: %d", status)
	}
}

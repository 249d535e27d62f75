package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/workspace"
)

// BenchmarkFilesTree is the Files panel's first tree page of a
// 10,000-entry directory through the whole API handler (sign-in
// resolution, the route table, the session's row, opening the workspace,
// List, JSON), against a bare handler that lists an already open
// workspace and encodes the page: what the API adds on top of List.
func BenchmarkFilesTree(b *testing.B) {
	const n = 10_000
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.log\nd1*/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("entry-%06d.txt", i))
		var err error
		if i%10 == 0 {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	j := journaltest.Start(b, storetest.SQLite)
	b.Cleanup(j.StopHub)
	log := slog.New(slog.DiscardHandler)
	svc := control.NewService(j.Store, j.Writer, ws, control.RetryPolicy{})
	s, err := svc.CreateSession(ctx, control.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	h := api.New(j.Store, svc, j.Hub, api.Info{Version: "bench"}, api.Options{}, log).Handler()
	open, err := workspace.Open(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer open.Close()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, err := open.List(r.Context(), "", "", 0)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"api", h}} {
		b.Run(fmt.Sprintf("entries=%d/%s", n, c.name), func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				c.h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/sessions/"+s.ID+"/files", nil))
				if rec.Code != http.StatusOK || rec.Body.Len() < 10_000 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}

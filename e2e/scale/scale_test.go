package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// rare is the word only one assistant answer holds.
const rare = "zanzibarquux"

const messagesPerSession = 20 // half the person's, half answers

// world is an API over a store seeded with n sessions.
type world struct {
	h      http.Handler
	target string // the session whose answer holds rare
}

// filtered is the search for rare with every filter, each of which the
// target passes and a share of the sessions does not: half the sessions
// are in the project, half ran the model, a third are archived.
const filtered = "&project=prj_scale&model=m-even&archived=false"

// seed fills a fresh store of kind open with n sessions, each with one
// finished run of messagesPerSession messages of ordinary words; one
// answer, of the middle session, holds rare. Even sessions are in project
// prj_scale and ran model m-even, odd ones m-odd; every third is archived
// (never the middle one).
func seed(tb testing.TB, open storetest.Open, n int) world {
	tb.Helper()
	ctx := context.Background()
	j := journaltest.Start(tb, open)
	st := j.Store
	rng := rand.New(rand.NewPCG(1, 2))
	words := func(k int) string {
		var sb strings.Builder
		for i := range k {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString("w" + strconv.FormatInt(int64(rng.IntN(5000)), 36))
		}
		return sb.String()
	}
	base := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	var target string
	const batch = 500
	if err := st.Write(ctx, func(tx store.Tx) error {
		return tx.InsertProject(ctx, store.Project{ID: "prj_scale", Name: "Scale", CreatedAt: base, UpdatedAt: base})
	}); err != nil {
		tb.Fatalf("seed: %v", err)
	}
	for done := 0; done < n; done += batch {
		err := st.Write(ctx, func(tx store.Tx) error {
			var drafts []event.Draft
			for i := done; i < min(done+batch, n); i++ {
				sid, rid := fmt.Sprintf("ses_%026d", i), fmt.Sprintf("run_%026d", i)
				at := base.Add(time.Duration(i) * time.Second)
				sess := store.Session{ID: sid, Title: words(4), Workspace: "/ws", Model: "m-odd", CreatedAt: at, UpdatedAt: at}
				if i%2 == 0 {
					sess.ProjectID, sess.Model = "prj_scale", "m-even"
				}
				if i%3 == 1 && i != n/2 {
					sess.ArchivedAt = at
				}
				if err := tx.InsertSession(ctx, sess); err != nil {
					return err
				}
				if err := tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Completed, Input: "x",
					CreatedAt: at, StartedAt: at, EndedAt: at}); err != nil {
					return err
				}
				for m := range messagesPerSession / 2 {
					answer := words(14)
					if i == n/2 && m == 3 {
						target, answer = sid, answer+" "+rare+" "+words(3)
					}
					drafts = append(drafts,
						event.Draft{SessionID: sid, RunID: rid, Type: event.MessageUser,
							Payload: event.MessageUserPayload{MessageID: fmt.Sprintf("msg_%d_%d", i, m), Content: words(10)}},
						event.Draft{SessionID: sid, RunID: rid, Type: event.MessageDone,
							Payload: event.DonePayload{ID: fmt.Sprintf("txt_%d_%d", i, m), Text: answer}})
				}
				// One multi-row INSERT per 50 sessions: under SQLite's
				// limit of bound parameters.
				if len(drafts) >= 50*messagesPerSession {
					if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
						return err
					}
					drafts = drafts[:0]
				}
			}
			if len(drafts) > 0 {
				_, err := tx.AppendEvents(ctx, "", drafts...)
				return err
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("seed: %v", err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	svc := control.NewService(st, j.Writer, tb.TempDir(), control.RetryPolicy{})
	a := api.New(st, svc, j.Hub, api.Info{Version: "scale"}, api.Options{}, log)
	tb.Cleanup(j.StopHub)
	return world{h: a.Handler(), target: target}
}

// get serves one GET through the handler and decodes its JSON.
func (w world) get(tb testing.TB, path string, out any) {
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			tb.Fatalf("GET %s: %v", path, err)
		}
	}
}

type hits struct {
	Hits []struct {
		SessionID string `json:"session_id"`
		Kind      string `json:"kind"`
		Snippet   string `json:"snippet"`
	} `json:"hits"`
}

// sizes are the session counts; 100,000 only without -short.
func sizes() []int {
	if testing.Short() {
		return []int{1_000, 10_000}
	}
	return []int{1_000, 10_000, 100_000}
}

// TestSearchFindsTheOneAnswer is issue 15's acceptance: a word that only
// one assistant answer holds is found among every session's messages, on
// both stores, and the sidebar's first page is whole: at 100,000 sessions
// (100 s of seeding on SQLite, 150 s on PostgreSQL, on a loaded 2-core
// VM); at 1,000 under -short; at 200 under -race, as make test runs it
// (the race detector slows SQLite's appends about a hundredfold: seeding
// 1,000 sessions took 81 s).
func TestSearchFindsTheOneAnswer(t *testing.T) {
	n := 100_000
	switch {
	case raceEnabled:
		n = 200
	case testing.Short():
		n = 1_000
	}
	for _, k := range storetest.Kinds(pg) {
		{
			t.Run(fmt.Sprintf("%s/sessions=%d", k.Name, n), func(t *testing.T) {
				w := seed(t, k.Open, n)
				var got hits
				w.get(t, "/api/search?q="+rare, &got)
				if len(got.Hits) != 1 || got.Hits[0].SessionID != w.target || got.Hits[0].Kind != "message.done" ||
					!strings.Contains(got.Hits[0].Snippet, "\x02"+rare+"\x03") {
					t.Fatalf("search %s: %+v, want the one answer of %s", rare, got.Hits, w.target)
				}
				w.get(t, "/api/search?q="+rare+filtered, &got)
				if len(got.Hits) != 1 || got.Hits[0].SessionID != w.target {
					t.Fatalf("filtered search %s: %+v, want the one answer of %s", rare, got.Hits, w.target)
				}
				for _, miss := range []string{"&archived=true", "&model=m-odd", "&project=prj_none"} {
					if w.get(t, "/api/search?q="+rare+miss, &got); len(got.Hits) != 0 {
						t.Fatalf("search %s%s: %+v, want none", rare, miss, got.Hits)
					}
				}
				var page struct {
					Sessions []struct{ ID string } `json:"sessions"`
				}
				w.get(t, "/api/sessions?limit=50", &page)
				// The newest session the default list shows: every third
				// one is archived (seed).
				newest := n - 1
				for newest%3 == 1 && newest != n/2 {
					newest--
				}
				if len(page.Sessions) != 50 || page.Sessions[0].ID != fmt.Sprintf("ses_%026d", newest) {
					t.Fatalf("first page: %d sessions, first %+v", len(page.Sessions), page.Sessions[:min(1, len(page.Sessions))])
				}
			})
		}
	}
}

// BenchmarkScale is the sidebar's first page (GET /api/sessions) and a
// search with one hit (GET /api/search) through the handler, at each size
// on each store, with p50 and p95 of the requests.
func BenchmarkScale(b *testing.B) {
	for _, k := range storetest.Kinds(pg) {
		for _, n := range sizes() {
			w := seed(b, k.Open, n)
			for _, c := range []struct{ name, path string }{
				{"sidebar", "/api/sessions?limit=50"},
				{"search", "/api/search?q=" + rare},
				{"search-filtered", "/api/search?q=" + rare + filtered},
			} {
				b.Run(fmt.Sprintf("%s/sessions=%d/%s", k.Name, n, c.name), func(b *testing.B) {
					var ds []time.Duration
					for b.Loop() {
						t0 := time.Now()
						w.get(b, c.path, nil)
						ds = append(ds, time.Since(t0))
					}
					slices.Sort(ds)
					b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
				})
			}
		}
	}
}

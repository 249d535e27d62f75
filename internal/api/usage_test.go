package api_test

// Usage and cost (issue 16, h16-usage).

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type usageJSON struct {
	GroupBy string `json:"group_by"`
	From    string `json:"from"`
	To      string `json:"to"`
	TZ      string `json:"tz"`
	Rows    []struct {
		Key   string `json:"key"`
		Label string `json:"label"`
		usageTotalsJSON
	} `json:"rows"`
	Total usageTotalsJSON `json:"total"`
}

type usageTotalsJSON struct {
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd"`
	Runs            int64   `json:"runs"`
	Calls           int64   `json:"calls"`
}

// usageRun journals a run of session sid answered by model on provider,
// with one usage event per call.
func (e *env) usageRun(t *testing.T, sid, rid, model, provider string, calls ...event.UsageTotals) {
	t.Helper()
	err := e.st.Write(e.ctx, func(tx store.Tx) error {
		if err := tx.InsertRun(e.ctx, store.Run{ID: rid, SessionID: sid, Status: run.Running, Input: "x", CreatedAt: time.Now()}); err != nil {
			return err
		}
		ds := []event.Draft{{RunID: rid, SessionID: sid, Type: event.RunStarted,
			Payload: event.RunStartedPayload{Attempt: 1, Model: model, Provider: provider}}}
		for _, u := range calls {
			ds = append(ds, event.Draft{RunID: rid, SessionID: sid, Type: event.Usage, Payload: event.UsagePayload{TurnID: "t", Turn: u}})
		}
		_, err := tx.AppendEvents(e.ctx, "", ds...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) usage(t *testing.T, query string) usageJSON {
	t.Helper()
	r := e.req("GET", "/api/usage?"+query, "")
	r.want(t, http.StatusOK, "")
	var u usageJSON
	r.decode(t, &u)
	return u
}

func TestUsage(t *testing.T) {
	for _, kind := range []struct {
		name string
		open storetest.Open
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres(pg)}} {
		t.Run(kind.name, func(t *testing.T) { testUsage(t, kind.open) })
	}
}

func testUsage(t *testing.T, open storetest.Open) {
	e := newEnv(t, withStore(open))
	s1, s2 := e.session(t), e.session(t)
	e.req("PATCH", "/api/sessions/"+s1.ID, `{"title":"=cmd|' /C calc'!A0"}`).want(t, http.StatusOK, "")
	e.usageRun(t, s1.ID, "run-1", "m-a", "p-1",
		event.UsageTotals{InputTokens: 100, OutputTokens: 10, CostUSD: 0.25},
		event.UsageTotals{InputTokens: 200, OutputTokens: 20, CachedTokens: 50, CostUSD: 0.5})
	e.usageRun(t, s2.ID, "run-2", "m-b", "p-2", event.UsageTotals{InputTokens: 1000, OutputTokens: 1, ReasoningTokens: 9})
	e.usageRun(t, s2.ID, "run-3", "m-a", "p-1") // no model call reported usage
	all := usageTotalsJSON{InputTokens: 1300, OutputTokens: 31, CachedTokens: 50, ReasoningTokens: 9, CostUSD: 0.75, Runs: 2, Calls: 3}

	t.Run("by model", func(t *testing.T) {
		u := e.usage(t, "group_by=model")
		if u.GroupBy != "model" || u.TZ != "UTC" || len(u.Rows) != 2 || u.Total != all {
			t.Fatalf("usage = %+v", u)
		}
		a := usageTotalsJSON{InputTokens: 300, OutputTokens: 30, CachedTokens: 50, CostUSD: 0.75, Runs: 1, Calls: 2}
		b := usageTotalsJSON{InputTokens: 1000, OutputTokens: 1, ReasoningTokens: 9, Runs: 1, Calls: 1}
		if u.Rows[0].Key != "m-a" || u.Rows[0].usageTotalsJSON != a || u.Rows[1].Key != "m-b" || u.Rows[1].usageTotalsJSON != b {
			t.Fatalf("rows = %+v", u.Rows)
		}
	})
	t.Run("by profile", func(t *testing.T) {
		u := e.usage(t, "group_by=profile")
		if len(u.Rows) != 1 || u.Rows[0].Key != "none" || u.Rows[0].usageTotalsJSON != all {
			t.Fatalf("usage = %+v", u)
		}
	})
	t.Run("by session", func(t *testing.T) {
		u := e.usage(t, "group_by=session")
		titles := map[string]string{}
		for _, r := range u.Rows {
			titles[r.Key] = r.Label
		}
		if len(u.Rows) != 2 || titles[s1.ID] != "=cmd|' /C calc'!A0" || u.Total != all {
			t.Fatalf("usage = %+v", u)
		}
	})
	// Today in any zone holds all of it; every day of the period is a row.
	for _, tz := range []string{"", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu"} {
		t.Run("by day in "+tz, func(t *testing.T) {
			u := e.usage(t, "group_by=day&tz="+tz)
			loc, _ := time.LoadLocation(tz)
			today := time.Now().In(loc).Format(time.DateOnly)
			if len(u.Rows) != 30 || u.To != today || u.Total != all {
				t.Fatalf("usage = %+v (today %s)", u, today)
			}
			last := u.Rows[29]
			if last.Key != today || last.usageTotalsJSON != all || u.Rows[0].Key != u.From {
				t.Fatalf("last day %+v, want today %s with everything; first %q from %q", last, today, u.Rows[0].Key, u.From)
			}
		})
	}
	t.Run("a period before it", func(t *testing.T) {
		u := e.usage(t, "group_by=model&from=2020-01-01&to=2020-01-31")
		if len(u.Rows) != 0 || u.Total != (usageTotalsJSON{}) || u.From != "2020-01-01" || u.To != "2020-01-31" {
			t.Fatalf("usage = %+v", u)
		}
	})
	t.Run("csv", func(t *testing.T) {
		r := e.req("GET", "/api/usage?group_by=session&format=csv", "")
		if r.code != http.StatusOK || !strings.HasPrefix(r.hdr.Get("Content-Type"), "text/csv") ||
			!strings.Contains(r.hdr.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%d %v %s", r.code, r.hdr, r.body)
		}
		recs, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 3 || strings.Join(recs[0], ",") != "session,label,input_tokens,output_tokens,cached_tokens,reasoning_tokens,cost_usd,runs,calls" {
			t.Fatalf("csv = %q", recs)
		}
		for _, rec := range recs[1:] {
			if rec[0] == s1.ID && (rec[1] != "'=cmd|' /C calc'!A0" || rec[2] != "300" || rec[6] != "0.75" || rec[7] != "1" || rec[8] != "2") {
				t.Fatalf("csv row %q: the title must not be a formula, the sums the run's", rec)
			}
		}
	})

	e.runErrCases(t, []errCase{
		{name: "unknown group_by", method: "GET", path: "/api/usage?group_by=colour", status: 400, code: "invalid_group_by"},
		{name: "bad from", method: "GET", path: "/api/usage?from=yesterday", status: 400, code: "invalid_period"},
		{name: "bad to", method: "GET", path: "/api/usage?to=2026-02-30", status: 400, code: "invalid_period"},
		{name: "to before from", method: "GET", path: "/api/usage?from=2026-02-02&to=2026-02-01", status: 400, code: "invalid_period"},
		{name: "too long", method: "GET", path: "/api/usage?from=2020-01-01&to=2026-01-01", status: 400, code: "invalid_period"},
		{name: "unknown tz", method: "GET", path: "/api/usage?tz=Mars/Olympus_Mons", status: 400, code: "invalid_time_zone"},
		{name: "tz path", method: "GET", path: "/api/usage?tz=../../etc/passwd", status: 400, code: "invalid_time_zone"},
		{name: "tz Local", method: "GET", path: "/api/usage?tz=Local", status: 400, code: "invalid_time_zone"},
		{name: "bad format", method: "GET", path: "/api/usage?format=xml", status: 400, code: "invalid_format"},
	})
}

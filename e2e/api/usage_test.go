package api

// Usage and cost (issue 16, h16-usage): the acceptance line "usage for
// three sessions on two models adds up to the sum of their runs' usage, by
// day and by model".

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

type usageSums struct {
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd"`
	Runs            int64   `json:"runs"`
	Calls           int64   `json:"calls"`
}

func (u *usageSums) add(t event.UsageTotals) {
	u.InputTokens += t.InputTokens
	u.OutputTokens += t.OutputTokens
	u.CachedTokens += t.CachedTokens
	u.ReasoningTokens += t.ReasoningTokens
	u.CostUSD += t.CostUSD
	u.Calls++
}

// same compares sums: tokens and counts exactly, cost to a float sum's
// rounding (the server adds in another order).
func (u usageSums) same(o usageSums) bool {
	c, d := u, o
	c.CostUSD, d.CostUSD = 0, 0
	return c == d && math.Abs(u.CostUSD-o.CostUSD) < 1e-9
}

type usageReportJSON struct {
	Rows []struct {
		Key string `json:"key"`
		usageSums
	} `json:"rows"`
	Total usageSums `json:"total"`
}

func TestUsageAddsUpToTheRuns(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	an := newAnthropicFake(t, anthropicTestKey, anthropicTestKey)
	s := startWith(t, oa, an)

	// Three sessions, two models: the first session on one, the second on
	// the other, the third on both.
	plan := [][]*llmFake{{oa, oa}, {an}, {an, oa}}
	var runIDs []string
	for i, models := range plan {
		sid := s.NewSession(t)
		for j, m := range models {
			m.stream(m.fixture("text"))
			r := sendModel(t, s, sid, fmt.Sprintf("session %d, message %d", i, j), m.ref())
			if got := s.WaitStatus(t, r.ID, "completed"); got.Status != "completed" {
				t.Fatalf("run %s: %s", r.ID, got.Status)
			}
			runIDs = append(runIDs, r.ID)
		}
	}

	// What the journal says, per model and per day in the zone asked for.
	const tz = "Asia/Kolkata" // +05:30: days that are not UTC's
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	byModel, byDay := map[string]*usageSums{}, map[string]*usageSums{}
	var total usageSums
	for _, id := range runIDs {
		evs := s.Journal(t, id)
		var model string
		var done event.RunDonePayload
		var sum usageSums
		first := true
		for _, e := range evs {
			switch e.Type {
			case event.RunStarted:
				model = e2etest.Payload[event.RunStartedPayload](t, e).Model
			case event.Usage:
				u := e2etest.Payload[event.UsagePayload](t, e).Turn
				day := e.TS.In(loc).Format(time.DateOnly)
				for _, m := range []struct {
					into map[string]*usageSums
					key  string
				}{{byModel, model}, {byDay, day}} {
					if m.into[m.key] == nil {
						m.into[m.key] = &usageSums{}
					}
					m.into[m.key].add(u)
					if first {
						m.into[m.key].Runs++
					}
				}
				sum.add(u)
				total.add(u)
				if first {
					total.Runs++
				}
				first = false
			case event.RunDone:
				done = e2etest.Payload[event.RunDonePayload](t, e)
			}
		}
		// The run's own total is the sum of its usage events.
		if d := done.Usage; d.InputTokens != sum.InputTokens || d.OutputTokens != sum.OutputTokens || sum.Calls == 0 {
			t.Fatalf("run %s: run.done usage %+v, usage events %+v", id, d, sum)
		}
	}
	if len(byModel) != 2 || total.Runs != 5 {
		t.Fatalf("journal: %d models, %d runs with usage; want 2, 5", len(byModel), total.Runs)
	}

	for _, tc := range []struct {
		group string
		want  map[string]*usageSums
	}{{"model", byModel}, {"day", byDay}} {
		t.Run("by "+tc.group, func(t *testing.T) {
			var rep usageReportJSON
			if c := e2etest.Do(t, "GET", s.URL+"/api/usage?group_by="+tc.group+"&tz="+tz, nil, &rep); c != http.StatusOK {
				t.Fatalf("GET /api/usage: %d", c)
			}
			if !rep.Total.same(total) {
				t.Fatalf("total %+v, journal %+v", rep.Total, total)
			}
			seen := 0
			for _, row := range rep.Rows {
				want, ok := tc.want[row.Key]
				if !ok {
					if (row.usageSums != usageSums{}) {
						t.Fatalf("row %s = %+v, the journal has nothing there", row.Key, row.usageSums)
					}
					continue
				}
				seen++
				if !row.same(*want) {
					t.Fatalf("row %s = %+v, journal %+v", row.Key, row.usageSums, *want)
				}
			}
			if seen != len(tc.want) {
				t.Fatalf("%d of the journal's %d groups answered: %+v", seen, len(tc.want), rep.Rows)
			}
		})
	}
}

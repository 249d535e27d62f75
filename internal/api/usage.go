package api

// Usage and cost (issue 16, h16-usage): GET /api/usage sums the usage the
// journal recorded over a period, per day in the caller's time zone or per
// model, provider, profile or session, from the store's rollup.

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Stable error codes of GET /api/usage.
const (
	CodeInvalidGroupBy  = "invalid_group_by"
	CodeInvalidPeriod   = "invalid_period"
	CodeInvalidTimeZone = "invalid_time_zone"
	CodeInvalidFormat   = "invalid_format"
)

// usageGroups maps group_by to the store's grouping: days are summed from
// buckets here, since where a day starts depends on the caller's zone.
var usageGroups = map[string]string{
	"day":      store.UsageByBucket,
	"model":    store.UsageByModel,
	"provider": store.UsageByProvider,
	"profile":  store.UsageByProfile,
	"session":  store.UsageBySession,
}

// Periods: the last 30 days by default, at most maxUsageDays days (a day
// row each, and the buckets behind them, stay a bounded read).
const (
	defaultUsageDays = 30
	maxUsageDays     = 1000
)

// usageNone names the group of runs that named no model, provider or
// profile.
const usageNone = "none"

// usageTotals is one group's sums as the API shows them.
type usageTotals struct {
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd"`
	Runs            int64   `json:"runs"`
	Calls           int64   `json:"calls"`
}

func (u *usageTotals) add(r store.UsageRow) {
	u.InputTokens += r.Usage.InputTokens
	u.OutputTokens += r.Usage.OutputTokens
	u.CachedTokens += r.Usage.CachedTokens
	u.ReasoningTokens += r.Usage.ReasoningTokens
	u.CostUSD += r.Usage.CostUSD
	u.Runs += r.Runs
	u.Calls += r.Calls
}

// usageRow is one row of GET /api/usage: Key is the day (YYYY-MM-DD), the
// model, provider, profile id ("none" when the run named none) or the
// session id; Label is the session's title ("" once deleted).
type usageRow struct {
	Key   string `json:"key"`
	Label string `json:"label,omitempty"`
	usageTotals
}

// usageReport is GET /api/usage's answer.
type usageReport struct {
	GroupBy string      `json:"group_by"`
	From    string      `json:"from"`
	To      string      `json:"to"` // inclusive
	TZ      string      `json:"tz"`
	Rows    []usageRow  `json:"rows"`
	Total   usageTotals `json:"total"`
}

// usageRequest is a checked GET /api/usage query. from and to are
// calendar dates (midnight UTC stands for the date, whatever loc), the
// period the days of loc from the start of from to the end of to.
type usageRequest struct {
	group    string // the API's group_by
	from, to time.Time
	loc      *time.Location
	csv      bool
}

// start is the instant the period starts: from's first moment in loc.
func (q usageRequest) start() time.Time { return dayStart(q.from, q.loc) }

// end is the instant the period stops: the first moment of the day after
// to, so the period is whole local days.
func (q usageRequest) end() time.Time { return dayStart(q.to.AddDate(0, 0, 1), q.loc) }

// dayStart is the first instant of the calendar date d in loc. Usually
// midnight; where a zone skips midnight (clocks going from 00:00 to 01:00)
// time.Date answers an instant of the day before, so step to the day's
// first quarter hour, the resolution of every UTC offset in use.
func dayStart(d time.Time, loc *time.Location) time.Time {
	t := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	for i := 0; i < 4*24 && t.Format(time.DateOnly) != d.Format(time.DateOnly); i++ {
		t = t.Add(store.UsageBucket)
	}
	return t
}

func (a *API) usage(w http.ResponseWriter, r *http.Request) {
	q, ok := usageQuery(w, r, time.Now())
	if !ok {
		return
	}
	rows, err := a.st.Usage(r.Context(), store.UsageQuery{From: q.start(), To: q.end(), GroupBy: usageGroups[q.group]})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rep := usageReport{GroupBy: q.group, From: q.from.Format(time.DateOnly), To: q.to.Format(time.DateOnly),
		TZ: q.loc.String(), Rows: []usageRow{}}
	if q.group == "day" {
		rep.Rows = usageDays(rows, q.from, q.to, q.loc)
	} else {
		for _, row := range rows {
			out := usageRow{Key: row.Key, Label: row.Title}
			if out.Key == "" {
				out.Key = usageNone
			}
			out.add(row)
			rep.Rows = append(rep.Rows, out)
		}
	}
	// The total is the rows' sum, so it matches them whatever the grouping.
	for _, row := range rep.Rows {
		rep.Total.InputTokens += row.InputTokens
		rep.Total.OutputTokens += row.OutputTokens
		rep.Total.CachedTokens += row.CachedTokens
		rep.Total.ReasoningTokens += row.ReasoningTokens
		rep.Total.CostUSD += row.CostUSD
		rep.Total.Runs += row.Runs
		rep.Total.Calls += row.Calls
	}
	if q.csv {
		writeUsageCSV(w, rep)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// usageDays sums buckets into the days from..to (calendar dates) of loc,
// every day a row (a day without usage is a row of zeros, so a chart has
// no holes).
func usageDays(buckets []store.UsageRow, from, to time.Time, loc *time.Location) []usageRow {
	var out []usageRow
	index := map[string]int{}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		k := d.Format(time.DateOnly)
		index[k] = len(out)
		out = append(out, usageRow{Key: k})
	}
	for _, b := range buckets {
		if i, ok := index[b.Start.In(loc).Format(time.DateOnly)]; ok {
			out[i].add(b)
		}
	}
	return out
}

// usageQuery reads GET /api/usage's parameters at now, answering a bad
// one.
func usageQuery(w http.ResponseWriter, r *http.Request, now time.Time) (usageRequest, bool) {
	v := r.URL.Query()
	bad := func(code, msg string) (usageRequest, bool) {
		writeError(w, http.StatusBadRequest, code, msg, nil)
		return usageRequest{}, false
	}
	q := usageRequest{group: v.Get("group_by"), loc: time.UTC}
	if q.group == "" {
		q.group = "day"
	}
	if _, ok := usageGroups[q.group]; !ok {
		return bad(CodeInvalidGroupBy, "group_by must be one of day, model, provider, profile, session")
	}
	switch f := v.Get("format"); f {
	case "", "json":
	case "csv":
		q.csv = true
	default:
		return bad(CodeInvalidFormat, "format must be json or csv")
	}
	if tz := v.Get("tz"); tz != "" {
		// LoadLocation also reads a path-like name from the zone
		// database's directory: only plain IANA names are taken.
		if strings.Contains(tz, "..") || strings.HasPrefix(tz, "/") || len(tz) > 64 {
			return bad(CodeInvalidTimeZone, "tz must be an IANA time zone name such as Europe/Paris")
		}
		loc, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return bad(CodeInvalidTimeZone, "tz must be an IANA time zone name such as Europe/Paris")
		}
		q.loc = loc
	}
	today := now.In(q.loc)
	q.to = time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	q.from = q.to.AddDate(0, 0, 1-defaultUsageDays)
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &q.from}, {"to", &q.to}} {
		s := v.Get(f.name)
		if s == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return bad(CodeInvalidPeriod, f.name+" must be a date, YYYY-MM-DD")
		}
		*f.to = d
	}
	if v.Get("from") == "" && v.Get("to") != "" {
		q.from = q.to.AddDate(0, 0, 1-defaultUsageDays)
	}
	if q.to.Before(q.from) {
		return bad(CodeInvalidPeriod, "to must not be before from")
	}
	if q.from.AddDate(0, 0, maxUsageDays).Before(q.to.AddDate(0, 0, 1)) {
		return bad(CodeInvalidPeriod, fmt.Sprintf("the period must be at most %d days", maxUsageDays))
	}
	return q, true
}

// writeUsageCSV writes the report's rows as CSV, one header line first.
func writeUsageCSV(w http.ResponseWriter, rep usageReport) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="usage-%s-%s-%s.csv"`, rep.GroupBy, rep.From, rep.To))
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	i := strconv.FormatInt
	_ = cw.Write([]string{rep.GroupBy, "label", "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", "cost_usd", "runs", "calls"})
	for _, r := range rep.Rows {
		_ = cw.Write([]string{csvCell(r.Key), csvCell(r.Label), i(r.InputTokens, 10), i(r.OutputTokens, 10), i(r.CachedTokens, 10),
			i(r.ReasoningTokens, 10), strconv.FormatFloat(r.CostUSD, 'f', -1, 64), i(r.Runs, 10), i(r.Calls, 10)})
	}
	cw.Flush()
}

// csvCell keeps a spreadsheet from reading text (a session title) as a
// formula: a cell that would start one gets a leading apostrophe.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

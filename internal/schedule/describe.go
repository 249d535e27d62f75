package schedule

// Saying a schedule in words, for people: "every weekday at 09:00,
// Europe/Berlin". Only the common shapes are put in words; anything else
// is said as its expression and zone, never as a sentence that could be
// wrong.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Describe says a valid schedule in words; it is ErrInvalid for a schedule
// Parse refuses.
func Describe(kind, expr, tz string) (string, error) {
	if _, err := Parse(kind, expr, tz); err != nil {
		return "", err
	}
	expr = strings.TrimSpace(expr)
	switch kind {
	case KindInterval:
		d, _ := ParseInterval(expr) // Parse accepted it
		return "every " + durationWords(d), nil
	case KindOnce:
		t, _ := time.Parse(time.RFC3339, expr) // Parse accepted it
		t = t.UTC()
		return "once, on " + t.Format("2006-01-02") + " at " + clock(t.Hour(), t.Minute(), t.Second()) + " UTC", nil
	}
	zone := tz
	if zone == "" {
		zone = "UTC"
	}
	if s, ok := cronWords(expr, zone); ok {
		return s, nil
	}
	return "cron " + expr + ", " + zone, nil
}

var units = []struct {
	d    time.Duration
	name string
}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}

// durationWords says d as "2 hours", "hour", "1 hour 30 minutes".
func durationWords(d time.Duration) string {
	var parts []string
	for _, u := range units {
		n := d / u.d
		d -= n * u.d
		switch {
		case n == 1:
			parts = append(parts, "1 "+u.name)
		case n > 1:
			parts = append(parts, strconv.FormatInt(int64(n), 10)+" "+u.name+"s")
		}
	}
	if d > 0 { // below a second: MinInterval forbids it, but say it right
		parts = append(parts, d.String())
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "1 ") {
		return strings.TrimPrefix(parts[0], "1 ") // "every hour", not "every 1 hour"
	}
	return strings.Join(parts, " ")
}

func clock(h, m, s int) string {
	if s != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

var descriptors = map[string]string{
	"@hourly":   "0 * * * *",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@weekly":   "0 0 * * 0",
	"@monthly":  "0 0 1 * *",
}

// cronWords says a five-field expression whose month is "*" and which
// names either days of the month or days of the week, not both (cron
// would fire on either, which no short sentence says well).
func cronWords(expr, zone string) (string, bool) {
	if e, ok := descriptors[strings.ToLower(expr)]; ok {
		expr = e
	}
	f := strings.Fields(expr)
	if len(f) != 5 || f[3] != "*" {
		return "", false
	}
	min, hour, dom, dow := f[0], f[1], f[2], f[4]
	// A zone whose offset is not whole hours moves minutes too, so the
	// zone goes with every sentence but the plain "every N minutes".
	withZone := func(s string) string { return s + ", " + zone }
	if dom == "*" && dow == "*" {
		if min == "*" && hour == "*" {
			return "every minute", true
		}
		if n, ok := step(min, 60); ok && hour == "*" {
			return "every " + strconv.Itoa(n) + " minutes", true
		}
		if m, ok := number(min, 0, 59); ok {
			if hour == "*" {
				return withZone(fmt.Sprintf("every hour at :%02d", m)), true
			}
			if n, ok := step(hour, 24); ok {
				return withZone(fmt.Sprintf("every %d hours at :%02d", n, m)), true
			}
		}
	}
	times, ok := clockList(min, hour)
	if !ok {
		return "", false
	}
	var days string
	var plural bool // days said as a plural ("on weekdays") or a single "every ..." phrase
	switch {
	case dom == "*" && dow == "*":
		days = "day"
	case dom == "*":
		wd, ok := weekdays(dow)
		if !ok {
			return "", false
		}
		days, plural = wd, wd != "day"
	case dow == "*":
		ds, ok := list(dom, 1, 31)
		if !ok {
			return "", false
		}
		var ords []string
		for _, d := range ds {
			ords = append(ords, ordinal(d))
		}
		return withZone("on the " + and(ords) + " of every month at " + and(times)), true
	default:
		return "", false
	}
	if len(times) == 1 {
		return withZone("every " + days + " at " + times[0]), true
	}
	if !plural {
		return withZone("at " + and(times) + " every day"), true
	}
	return withZone("at " + and(times) + " on " + pluralDays(days)), true
}

// clockList is every time of day the minute and hour fields name, in
// order; false unless both are plain numbers or lists of them.
func clockList(min, hour string) ([]string, bool) {
	ms, ok := list(min, 0, 59)
	if !ok {
		return nil, false
	}
	hs, ok := list(hour, 0, 23)
	if !ok || len(ms)*len(hs) > 6 {
		return nil, false
	}
	var out []string
	for _, h := range hs {
		for _, m := range ms {
			out = append(out, clock(h, m, 0))
		}
	}
	return out, true
}

// step reads "*/n" where n divides whole: then the gaps are all equal.
func step(field string, whole int) (int, bool) {
	s, ok := strings.CutPrefix(field, "*/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || whole%n != 0 {
		return 0, false
	}
	return n, true
}

func number(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi
}

// list reads "5" or "0,30": numbers only, sorted and without repeats.
func list(field string, lo, hi int) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(field, ",") {
		n, ok := number(p, lo, hi)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func weekday(s string) (int, bool) {
	if i := slices.Index(dayNames, strings.ToLower(s)); i >= 0 {
		return i, true
	}
	return number(s, 0, 6)
}

// weekdays says a day-of-week field: "weekday", "Monday", "Monday and
// Thursday"; false for shapes it cannot say.
func weekdays(field string) (string, bool) {
	set := map[int]bool{}
	for _, p := range strings.Split(field, ",") {
		a, b, isRange := strings.Cut(p, "-")
		from, ok := weekday(a)
		if !ok {
			return "", false
		}
		to := from
		if isRange {
			if to, ok = weekday(b); !ok {
				return "", false
			}
			if to < from {
				return "", false
			}
		}
		for d := from; d <= to; d++ {
			set[d] = true
		}
	}
	if len(set) == 5 && !set[0] && !set[6] {
		return "weekday", true
	}
	if len(set) == 2 && set[0] && set[6] {
		return "Saturday and Sunday", true
	}
	if len(set) == 7 {
		return "day", true
	}
	var names []string
	for _, d := range []int{1, 2, 3, 4, 5, 6, 0} { // the week from Monday
		if set[d] {
			names = append(names, time.Weekday(d).String())
		}
	}
	return and(names), true
}

// pluralDays turns "weekday" into "weekdays", "Monday and Friday" into
// "Mondays and Fridays".
func pluralDays(days string) string {
	words := strings.Split(days, " ")
	for i, w := range words {
		if w != "and" && !strings.HasSuffix(w, ",") {
			words[i] = w + "s"
		} else if w != "and" {
			words[i] = strings.TrimSuffix(w, ",") + "s,"
		}
	}
	return strings.Join(words, " ")
}

func and(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " and " + xs[1]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

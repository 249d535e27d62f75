package store

// Usage and cost (issue 16, h16-usage).

import (
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// UsageBucket is the time resolution of the usage rollup: every real UTC
// offset is a multiple of it, so a day in any time zone is a whole number
// of buckets and the caller can sum buckets into local days.
const UsageBucket = 15 * time.Minute

// Usage groupings a store answers.
const (
	UsageByBucket   = "bucket"
	UsageByModel    = "model"
	UsageByProvider = "provider"
	UsageBySession  = "session"
	UsageByProfile  = "profile"
)

// UsageQuery asks for the usage of model calls in [From, To), both
// UsageBucket-aligned (a zero bound is open), summed per group.
type UsageQuery struct {
	From    time.Time
	To      time.Time
	GroupBy string // one of the UsageBy constants
}

// UsageRow is one group's usage.
type UsageRow struct {
	// Key is the model, provider, session id or profile id ("" when the
	// run named none); for UsageByBucket, "".
	Key string
	// Start is the bucket's start, for UsageByBucket only.
	Start time.Time
	// Title is the session's title for UsageBySession ("" once deleted).
	Title string
	Usage event.UsageTotals
	// Runs counts the runs whose first model call with usage falls in
	// this group; Calls the model calls.
	Runs  int64
	Calls int64
}

// ValidUsageGroup reports whether g is a grouping the stores answer.
func ValidUsageGroup(g string) bool {
	switch g {
	case UsageByBucket, UsageByModel, UsageByProvider, UsageBySession, UsageByProfile:
		return true
	}
	return false
}

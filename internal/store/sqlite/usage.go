package sqlite

// Usage and cost (issue 16): reads of migration 19's rollup.

import (
	"context"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// usageSums are the summed columns every grouping returns, in UsageRow's
// scan order.
const usageSums = `sum(input_tokens), sum(output_tokens), sum(cached_tokens), sum(reasoning_tokens),
	sum(cost_usd), sum(runs), sum(calls)`

// usageWhere bounds the period; a zero bound (0 ms) is open.
const usageWhere = `WHERE (?1 = 0 OR bucket_ms >= ?1) AND (?2 = 0 OR bucket_ms < ?2)`

// usageSQL is the query of each grouping: key, bucket start, title, sums.
var usageSQL = map[string]string{
	store.UsageByBucket: `SELECT '', bucket_ms, '', ` + usageSums + ` FROM usage_rollup ` + usageWhere +
		` GROUP BY bucket_ms ORDER BY bucket_ms`,
	store.UsageByModel:    usageByColumn("model"),
	store.UsageByProvider: usageByColumn("provider"),
	store.UsageByProfile:  usageByColumn("profile_id"),
	store.UsageBySession: `SELECT u.session_id, 0, ` + usageSums + `, COALESCE(max(s.title), '')
		FROM usage_rollup u LEFT JOIN sessions s ON s.id = u.session_id ` + usageWhere +
		` GROUP BY u.session_id ORDER BY u.session_id`,
}

func usageByColumn(col string) string {
	return `SELECT ` + col + `, 0, '', ` + usageSums + ` FROM usage_rollup ` + usageWhere +
		` GROUP BY ` + col + ` ORDER BY ` + col
}

func (r reader) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	query, ok := usageSQL[q.GroupBy]
	if !ok {
		return nil, fmt.Errorf("usage: unknown grouping %q", q.GroupBy)
	}
	rows, err := r.query(ctx, query, ms(q.From), ms(q.To))
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	out := []store.UsageRow{}
	for rows.Next() {
		var u store.UsageRow
		var bucket int64
		var title string
		var dest []any
		if q.GroupBy == store.UsageBySession {
			dest = []any{&u.Key, &bucket, &u.Usage.InputTokens, &u.Usage.OutputTokens, &u.Usage.CachedTokens,
				&u.Usage.ReasoningTokens, &u.Usage.CostUSD, &u.Runs, &u.Calls, &title}
		} else {
			dest = []any{&u.Key, &bucket, &title, &u.Usage.InputTokens, &u.Usage.OutputTokens, &u.Usage.CachedTokens,
				&u.Usage.ReasoningTokens, &u.Usage.CostUSD, &u.Runs, &u.Calls}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		u.Title = title
		if q.GroupBy == store.UsageByBucket {
			u.Start = fromMS(bucket)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}

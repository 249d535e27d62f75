package postgres

// Usage and cost (issue 16): reads of migration 19's rollup, as in the
// SQLite store.

import (
	"context"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// usageSums are the summed columns every grouping returns, in UsageRow's
// scan order.
const usageSums = `sum(input_tokens)::bigint AS i, sum(output_tokens)::bigint AS o, sum(cached_tokens)::bigint AS c,
	sum(reasoning_tokens)::bigint AS rt, sum(cost_usd)::double precision AS cost, sum(runs)::bigint AS runs,
	sum(calls)::bigint AS calls`

// usageWhere bounds the period; a zero bound (0 ms) is open.
const usageWhere = `WHERE ($1::bigint = 0 OR bucket_ms >= $1::bigint) AND ($2::bigint = 0 OR bucket_ms < $2::bigint)`

// usageSQL is the query of each grouping: key, bucket start, title, sums.
var usageSQL = map[string]string{
	store.UsageByBucket: `SELECT '', bucket_ms, '', ` + usageSums + ` FROM usage_rollup ` + usageWhere +
		` GROUP BY bucket_ms ORDER BY bucket_ms`,
	store.UsageByModel:    usageByColumn("model"),
	store.UsageByProvider: usageByColumn("provider"),
	store.UsageByProfile:  usageByColumn("profile_id"),
	store.UsageBySession: `SELECT g.*, COALESCE(s.title, '') FROM (SELECT session_id, 0::bigint AS b, ` + usageSums +
		` FROM usage_rollup ` + usageWhere + ` GROUP BY session_id) g LEFT JOIN sessions s ON s.id = g.session_id
		ORDER BY g.session_id`,
}

func usageByColumn(col string) string {
	return `SELECT ` + col + `, 0::bigint, '', ` + usageSums + ` FROM usage_rollup ` + usageWhere +
		` GROUP BY ` + col + ` ORDER BY ` + col
}

func (r reader) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	query, ok := usageSQL[q.GroupBy]
	if !ok {
		return nil, fmt.Errorf("usage: unknown grouping %q", q.GroupBy)
	}
	rows, err := r.q.Query(ctx, query, ms(q.From), ms(q.To))
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

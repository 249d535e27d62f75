package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// searchSQL ranks the matches with ts_rank and cuts ts_headline's snippet
// only for the page it returns: the headline re-parses the text, the
// costliest part of a search with many matches. Filters on the session or
// the run read them by primary key for the matched rows only.
func searchSQL(q store.SearchQuery, match string, limit, offset int) (string, []any) {
	args := []any{match}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	if v := ms(q.From); v != 0 {
		where.WriteString(` AND d.ts_ms >= ` + arg(v) + `::bigint`)
	}
	if v := ms(q.To); v != 0 {
		where.WriteString(` AND d.ts_ms < ` + arg(v) + `::bigint`)
	}
	// The session's filters are one scalar subquery per match, which
	// PostgreSQL never turns into a join: the scan of search_docs is the
	// unfiltered search's (the GIN index), and each match reads its session
	// (and run) by primary key. As a join, the planner hashed every session
	// or scanned every search row once its estimates went wrong.
	var conds []string
	if q.ProjectID != "" {
		conds = append(conds, `s.project_id = `+arg(q.ProjectID))
	}
	switch {
	case q.Archived == nil:
	case *q.Archived:
		conds = append(conds, `s.archived_at_ms IS NOT NULL`)
	default:
		conds = append(conds, `s.archived_at_ms IS NULL`)
	}
	if q.Model != "" {
		// A title is the session's; a run that names no model ran the
		// session's.
		m, alt := q.ModelKeys()
		conds = append(conds, `CASE WHEN d.kind = 'title.updated' THEN s.model ELSE COALESCE(
		(SELECT NULLIF(r.model, '') FROM events e JOIN runs r ON r.id = e.run_id WHERE e.id = d.event_id), s.model) END IN (`+
			arg(m)+`::text, `+arg(alt)+`::text)`)
	}
	if len(conds) > 0 {
		where.WriteString(` AND COALESCE((SELECT ` + strings.Join(conds, " AND ") + ` FROM sessions s WHERE s.id = d.session_id), false)`)
	}
	lim, off, opts := arg(limit), arg(offset), arg(headlineOptions)
	// The query is an expression, not a FROM item: as one, the planner may
	// start from search_docs before it (a sequential scan) once another
	// table joins; as an expression it is always the GIN index's condition.
	return `WITH page AS (
	SELECT d.session_id, d.event_id, d.kind, d.item_id, d.body, ts_rank(d.tsv, to_tsquery('simple', $1)) AS rank
	FROM search_docs d
	WHERE d.tsv @@ to_tsquery('simple', $1)` + where.String() + `
	ORDER BY rank DESC, d.event_id DESC
	LIMIT ` + lim + ` OFFSET ` + off + `
)
SELECT session_id, event_id, kind, item_id, ts_headline('simple', body, to_tsquery('simple', $1), ` + opts + `), rank
FROM page ORDER BY rank DESC, event_id DESC`, args
}

// headlineOptions: markers as store.SnippetOpen/Close, one fragment of
// about as many words as SQLite's snippet.
const headlineOptions = "StartSel=" + store.SnippetOpen + ", StopSel=" + store.SnippetClose +
	", MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…"

func (r reader) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, string, error) {
	offset := 0
	if q.Cursor != "" {
		v, err := strconv.Atoi(q.Cursor)
		if err != nil || v < 0 {
			return nil, "", fmt.Errorf("search cursor %q: %w", q.Cursor, store.ErrBadCursor)
		}
		offset = v
	}
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		return []store.SearchHit{}, "", nil
	}
	// Every term quoted as one lexeme, the last a prefix (the person may
	// still be typing it): nothing of the input reaches tsquery's syntax.
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = "'" + t + "'"
	}
	quoted[len(quoted)-1] += ":*"
	n := q.PageSize()
	query, args := searchSQL(q, strings.Join(quoted, " & "), n+1, offset)
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	hits, err := collect(rows, func(row sqlrow.Scanner) (store.SearchHit, error) {
		var h store.SearchHit
		var rank float32
		err := row.Scan(&h.SessionID, &h.EventID, &h.Kind, &h.ItemID, &h.Snippet, &rank)
		h.Rank = float64(rank)
		return h, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	if hits == nil {
		hits = []store.SearchHit{}
	}
	next := ""
	if len(hits) > n {
		hits, next = hits[:n], strconv.Itoa(offset+n)
	}
	return hits, next, nil
}

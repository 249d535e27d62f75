package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// searchSQL ranks with bm25 (smaller is better, hence the sign) and cuts a
// snippet of about 16 tokens around the match. The index holds one row per
// searchable event; migration 7's triggers keep it with the journal.
//
// Filters on the session or the run join them for the matched rows only:
// CROSS JOIN keeps SQLite's order (the full-text match first, then each
// match's session and run by primary key), so a filter that many sessions
// pass never starts from the sessions table.
func searchSQL(q store.SearchQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT d.session_id, d.event_id, d.kind, d.item_id,
	snippet(search_fts, 0, char(2), char(3), '…', 16), -bm25(search_fts)
FROM search_fts CROSS JOIN search_docs d`)
	if q.Filtered() {
		b.WriteString(` CROSS JOIN sessions s`)
	}
	b.WriteString(`
WHERE search_fts MATCH ? AND d.event_id = search_fts.rowid`)
	args := []any{searchMatch(q.Text)}
	if from := ms(q.From); from != 0 {
		b.WriteString(` AND d.ts_ms >= ?`)
		args = append(args, from)
	}
	if to := ms(q.To); to != 0 {
		b.WriteString(` AND d.ts_ms < ?`)
		args = append(args, to)
	}
	if q.Filtered() {
		b.WriteString(` AND s.id = d.session_id`)
	}
	if q.ProjectID != "" {
		b.WriteString(` AND s.project_id = ?`)
		args = append(args, q.ProjectID)
	}
	switch {
	case q.Archived == nil:
	case *q.Archived:
		b.WriteString(` AND s.archived_at_ms IS NOT NULL`)
	default:
		b.WriteString(` AND s.archived_at_ms IS NULL`)
	}
	if q.Model != "" {
		// A title is the session's; a run that names no model ran the
		// session's.
		b.WriteString(` AND CASE WHEN d.kind = 'title.updated' THEN s.model ELSE COALESCE(
	(SELECT NULLIF(r.model, '') FROM events e JOIN runs r ON r.id = e.run_id WHERE e.id = d.event_id), s.model) END IN (?, ?)`)
		m, alt := q.ModelKeys()
		args = append(args, m, alt)
	}
	b.WriteString(`
ORDER BY bm25(search_fts), d.event_id DESC
LIMIT ? OFFSET ?`)
	return b.String(), args
}

// searchMatch makes an FTS5 query of text: every term a phrase of one
// word, the last a prefix (the person may still be typing it), so nothing
// of the input reaches FTS5's syntax.
func searchMatch(text string) string {
	terms := store.SearchTerms(text)
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	quoted[len(quoted)-1] += "*"
	return strings.Join(quoted, " ")
}

func (r reader) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, string, error) {
	offset, err := searchOffset(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	if len(store.SearchTerms(q.Text)) == 0 {
		return []store.SearchHit{}, "", nil
	}
	n := q.PageSize()
	query, args := searchSQL(q)
	rows, err := r.query(ctx, query, append(args, n+1, offset)...)
	if err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	hits := []store.SearchHit{}
	for rows.Next() {
		var h store.SearchHit
		if err := rows.Scan(&h.SessionID, &h.EventID, &h.Kind, &h.ItemID, &h.Snippet, &h.Rank); err != nil {
			return nil, "", fmt.Errorf("search: %w", err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	next := ""
	if len(hits) > n {
		hits, next = hits[:n], strconv.Itoa(offset+n)
	}
	return hits, next, nil
}

// searchOffset reads a search cursor: the number of hits already returned.
func searchOffset(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(cursor)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("search cursor %q: %w", cursor, store.ErrBadCursor)
	}
	return v, nil
}

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
const searchSQL = `SELECT d.session_id, d.event_id, d.kind, d.item_id,
	snippet(search_fts, 0, char(2), char(3), '…', 16), -bm25(search_fts)
FROM search_fts JOIN search_docs d ON d.event_id = search_fts.rowid
WHERE search_fts MATCH ? AND (? = 0 OR d.ts_ms >= ?) AND (? = 0 OR d.ts_ms < ?)
ORDER BY bm25(search_fts), d.event_id DESC
LIMIT ? OFFSET ?`

func (r reader) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, string, error) {
	offset, err := searchOffset(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		return []store.SearchHit{}, "", nil
	}
	// Every term a phrase of one word, the last a prefix (the person may
	// still be typing it): nothing of the input reaches FTS5's syntax.
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	quoted[len(quoted)-1] += "*"
	from, to := ms(q.From), ms(q.To)
	n := q.PageSize()
	rows, err := r.query(ctx, searchSQL, strings.Join(quoted, " "), from, from, to, to, n+1, offset)
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

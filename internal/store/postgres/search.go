package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// searchSQL ranks the matches with ts_rank and cuts ts_headline's snippet
// only for the page it returns: the headline re-parses the text, the
// costliest part of a search with many matches.
const searchSQL = `WITH page AS (
	SELECT d.session_id, d.event_id, d.kind, d.item_id, d.body, ts_rank(d.tsv, q) AS rank, q
	FROM search_docs d, to_tsquery('simple', $1) q
	WHERE d.tsv @@ q AND ($2::bigint = 0 OR d.ts_ms >= $2::bigint) AND ($3::bigint = 0 OR d.ts_ms < $3::bigint)
	ORDER BY rank DESC, d.event_id DESC
	LIMIT $4 OFFSET $5
)
SELECT session_id, event_id, kind, item_id, ts_headline('simple', body, q, $6), rank
FROM page ORDER BY rank DESC, event_id DESC`

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
	rows, err := r.q.Query(ctx, searchSQL, strings.Join(quoted, " & "), ms(q.From), ms(q.To), n+1, offset, headlineOptions)
	if err != nil {
		return nil, "", fmt.Errorf("search: %w", err)
	}
	hits, err := collect(rows, func(row pgx.Row) (store.SearchHit, error) {
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

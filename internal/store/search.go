package store

import (
	"strings"
	"time"
	"unicode"
)

// SearchQuery selects the events Reader.Search ranks.
type SearchQuery struct {
	Text string
	// ProjectID keeps hits in sessions of that project ("": any).
	ProjectID string
	// Archived keeps hits in archived sessions (true), in sessions not
	// archived (false), or both (nil).
	Archived *bool
	// Model keeps hits the model produced ("": any): the run's model for an
	// event of a run, the session's for a title or a run that names none.
	Model string
	// ModelIsDefault says Model is the server's default model, the one a
	// session and run that name no model ran: their hits match too.
	ModelIsDefault bool

	From, To time.Time // the event's time, From inclusive, To exclusive; zero: open
	Limit    int       // at most this many hits; 0 or less: SearchLimit
	Cursor   string
}

// Filtered reports whether q filters by something the session or the run
// holds, which a store reads for the matched rows only.
func (q SearchQuery) Filtered() bool {
	return q.ProjectID != "" || q.Archived != nil || q.Model != ""
}

// ModelKeys are the stored model names a Model filter matches: Model, and
// "" (no model named) when it is the default.
func (q SearchQuery) ModelKeys() (string, string) {
	if q.ModelIsDefault {
		return q.Model, ""
	}
	return q.Model, q.Model
}

// SearchLimit is the page size of a search that names none, and the
// largest a search returns.
const SearchLimit = 50

// SearchHit is one matching event.
type SearchHit struct {
	SessionID string
	EventID   int64
	Kind      string // the event type: message.user, message.done, tool.started, title.updated
	ItemID    string // the transcript item it makes: message or tool call id; "" for a title
	// Snippet is the matching text around the match, the matched words
	// between SnippetOpen and SnippetClose.
	Snippet string
	Rank    float64 // higher is better; comparable within one search only
}

// Highlight markers in SearchHit.Snippet: control characters that no
// message text carries in practice, so a client splits on them and renders
// the parts as text, never as markup.
const (
	SnippetOpen  = "\x02"
	SnippetClose = "\x03"
)

// SearchTerms splits text into the words a search matches, all of which a
// hit must contain: runs of letters and digits, lower-cased, at most
// maxSearchTerms. Quotes, operators and punctuation are separators, so no
// input reaches the database's query syntax.
func SearchTerms(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
	out := make([]string, 0, len(words))
	for _, w := range words {
		if len(out) == maxSearchTerms {
			break
		}
		out = append(out, strings.ToLower(w))
	}
	return out
}

const maxSearchTerms = 16

// PageSize returns the page size q asks for, within (0, SearchLimit].
func (q SearchQuery) PageSize() int {
	if q.Limit <= 0 || q.Limit > SearchLimit {
		return SearchLimit
	}
	return q.Limit
}

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/websearch"
)

// NameWebSearch is the tool that searches the web through the configured
// back-end (issue 18).
const NameWebSearch = "web_search"

// WebSearcher is the configured search back-end (websearch.Service).
type WebSearcher interface {
	// Configured says whether a usable back-end is configured; without
	// one the tool is not offered (Registry.Available).
	Configured(ctx context.Context) bool
	// Endpoint is the back-end's address, for the approval policy.
	Endpoint(ctx context.Context) string
	Search(ctx context.Context, query string, count int) ([]websearch.Result, error)
}

// Availability is implemented by tools whose capability may be absent
// (web_search without a back-end): the runner leaves an unavailable tool
// out of the list the model receives.
type Availability interface {
	Available(ctx context.Context) bool
}

// Available returns r without the tools that say they are unavailable.
func (r *Registry) Available(ctx context.Context) *Registry {
	var drop []string
	for _, n := range r.names {
		if a, ok := r.tools[n].(Availability); ok && !a.Available(ctx) {
			drop = append(drop, n)
		}
	}
	if len(drop) == 0 {
		return r
	}
	return r.Without(drop...)
}

// WebSearchData is the structured result of web_search (seed 002: the
// card shows titles as links and snippets as text).
type WebSearchData struct {
	OK      bool               `json:"ok"`
	Query   string             `json:"query"`
	Results []websearch.Result `json:"results"`
	Error   string             `json:"error,omitempty"`
	Code    string             `json:"code,omitempty"`
}

type webSearchArgs struct {
	Query string `json:"query"`
	Count int    `json:"count"`
}

type webSearch struct{ s WebSearcher }

// NewWebSearch returns the web_search tool; s nil leaves it unavailable.
func NewWebSearch(s WebSearcher) Tool { return webSearch{s: s} }

var webSearchSchema = fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": %d, "description": "What to search for, as you would type it into a search engine."},
    "count": {"type": "integer", "minimum": 1, "maximum": %d, "description": "How many results to return at most. Default %d."}
  },
  "required": ["query"],
  "additionalProperties": false
}`, websearch.MaxQuery, websearch.MaxCount, websearch.DefaultCount)

func (webSearch) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameWebSearch,
		Description: "Search the web. Returns a numbered list of results, each with a title, a URL and a short snippet. " +
			"Read a result's page with web_fetch when the snippet is not enough.",
		Parameters: json.RawMessage(webSearchSchema),
	}
}

func (webSearch) parse(args json.RawMessage) (webSearchArgs, error) {
	var a webSearchArgs
	if err := decodeArgs(args, &a); err != nil {
		return a, err
	}
	a.Query = strings.TrimSpace(a.Query)
	switch {
	case a.Query == "":
		return a, errors.New("query is required")
	case len([]rune(a.Query)) > websearch.MaxQuery:
		return a, fmt.Errorf("query is longer than %d characters", websearch.MaxQuery)
	case a.Count < 0 || a.Count > websearch.MaxCount:
		return a, fmt.Errorf("count must be from 1 to %d", websearch.MaxCount)
	}
	return a, nil
}

func (t webSearch) Available(ctx context.Context) bool { return t.s != nil && t.s.Configured(ctx) }

func (t webSearch) Label(args json.RawMessage) string {
	a, err := t.parse(args)
	if err != nil {
		return "search the web (invalid arguments)"
	}
	return "search " + truncate(a.Query, 120)
}

// Intent names the back-end's address: the operator chose it, so a
// self-hosted SearXNG on the local network is asked about like any
// private address in the smart mode (docs/POLICY.md).
func (t webSearch) Intent(args json.RawMessage) Intent {
	a, err := t.parse(args)
	if err != nil {
		return Intent{Effect: EffectNetwork, Action: "web_search " + truncate(string(args), 500), Invalid: true}
	}
	u := ""
	if t.s != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		u = t.s.Endpoint(ctx)
		cancel()
	}
	return Intent{Effect: EffectNetwork, Action: "search the web for " + truncate(a.Query, 200), URL: u}
}

func (t webSearch) Run(ctx context.Context, _ Env, args json.RawMessage) (Result, error) {
	a, err := t.parse(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	data := WebSearchData{Query: a.Query, Results: []websearch.Result{}}
	if t.s == nil {
		data.Code, data.Error = websearch.CodeNotConfigured, "no web search back-end is configured"
		return Result{Status: event.ToolError, Output: data.Error, Data: data}, nil
	}
	rs, err := t.s.Search(ctx, a.Query, a.Count)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "search cancelled", Data: data}, nil
		}
		var we *websearch.Error
		if !errors.As(err, &we) {
			return Result{}, err
		}
		status := event.ToolError
		if we.Code == websearch.CodeTimeout {
			status = event.ToolTimeout
		}
		data.Code, data.Error = we.Code, we.Msg
		return Result{Status: status, Output: "search failed: " + we.Msg, Data: data}, nil
	}
	data.OK, data.Results = true, rs
	var b strings.Builder
	if len(rs) == 0 {
		fmt.Fprintf(&b, "No results for %q.", a.Query)
	}
	for i, r := range rs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%d. %s\n%s", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			b.WriteString("\n" + r.Snippet)
		}
	}
	return Result{Status: event.ToolOK, Output: b.String(), Data: data}, nil
}

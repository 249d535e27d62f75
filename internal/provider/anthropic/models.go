package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// maxModelPages stops a server that keeps saying has_more from keeping us
// paging for ever; real accounts fit in one page of 1000.
const maxModelPages = 50

// modelsPage is one page of GET /v1/models.
type modelsPage struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

// Models lists the ids of the models the API key can use, sorted.
func (p *Provider) Models(ctx context.Context) ([]string, error) {
	var ids []string
	after := ""
	for range maxModelPages {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		page, err := p.modelsPage(ctx, p.base+"/v1/models?"+q.Encode())
		if err != nil {
			return nil, err
		}
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			break
		}
		after = page.LastID
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (p *Provider) modelsPage(ctx context.Context, u string) (modelsPage, error) {
	var page modelsPage
	resp, err := wire.Do(ctx, p.client, p.backoff, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		p.setHeaders(r.Header)
		return r, nil
	}, p.onRetry)
	if err != nil {
		if ctx.Err() != nil {
			return page, ctx.Err()
		}
		return page, wire.TransportError(p.name, err, p.secrets...)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return page, wire.ResponseError(p.name, resp, p.secrets...)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&page); err != nil {
		if ctx.Err() != nil {
			return page, ctx.Err()
		}
		return page, &provider.Error{Provider: p.name, Code: "bad_response", Message: wire.Redact("cannot read the model list: "+err.Error(), p.secrets...)}
	}
	return page, nil
}

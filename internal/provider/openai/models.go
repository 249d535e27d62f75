package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// Models lists the ids of the models the server offers (GET {base}/models),
// sorted and without duplicates. It is how a configuration screen checks a
// key and lets people pick a model on servers whose names vary (Ollama, LM
// Studio).
func (p *Provider) Models(ctx context.Context) ([]string, error) {
	resp, err := p.do(ctx, http.MethodGet, "models", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, wire.ResponseError(p.name, resp, p.secrets...)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wire.TransportError(p.name, err, p.secrets...)
	}
	// llama.cpp adds a "models" list next to "data"; the rest send only
	// "data". Either yields ids.
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			ID    string `json:"id"`
			Model string `json:"model"`
			Name  string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, &provider.Error{Provider: p.name, Code: "bad_response",
			Message: wire.Redact("cannot decode the model list ("+err.Error()+"): "+clip(string(data), 200), p.secrets...)}
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		for _, m := range list.Models {
			if id := firstNonEmpty(m.ID, m.Model, m.Name); id != "" {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

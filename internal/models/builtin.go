package models

import "strings"

// DefaultContextWindow is assumed for models nobody described; the config
// file's "models" section corrects it.
const DefaultContextWindow = 128_000

// builtinModels are well-known models with their context windows, list
// prices (USD per million tokens) and image input as published when this
// table was written. Prices change: the config file overrides any entry. Dated
// variants ("gpt-4.1-2025-04-14") match by prefix.
func builtinModels() map[string]ModelInfo {
	return map[string]ModelInfo{
		"gpt-5":        {ContextWindow: 400_000, InputPrice: 1.25, CachedPrice: 0.125, OutputPrice: 10, Images: true},
		"gpt-5-mini":   {ContextWindow: 400_000, InputPrice: 0.25, CachedPrice: 0.025, OutputPrice: 2, Images: true},
		"gpt-5-nano":   {ContextWindow: 400_000, InputPrice: 0.05, CachedPrice: 0.005, OutputPrice: 0.4, Images: true},
		"gpt-4.1":      {ContextWindow: 1_047_576, InputPrice: 2, CachedPrice: 0.5, OutputPrice: 8, Images: true},
		"gpt-4.1-mini": {ContextWindow: 1_047_576, InputPrice: 0.4, CachedPrice: 0.1, OutputPrice: 1.6, Images: true},
		"gpt-4.1-nano": {ContextWindow: 1_047_576, InputPrice: 0.1, CachedPrice: 0.025, OutputPrice: 0.4, Images: true},
		"gpt-4o":       {ContextWindow: 128_000, InputPrice: 2.5, CachedPrice: 1.25, OutputPrice: 10, Images: true},
		"gpt-4o-mini":  {ContextWindow: 128_000, InputPrice: 0.15, CachedPrice: 0.075, OutputPrice: 0.6, Images: true},
		"o3":           {ContextWindow: 200_000, InputPrice: 2, CachedPrice: 0.5, OutputPrice: 8, Images: true},
		"o4-mini":      {ContextWindow: 200_000, InputPrice: 1.1, CachedPrice: 0.275, OutputPrice: 4.4, Images: true},

		"claude-opus-4-1":   {ContextWindow: 200_000, MaxOutputTokens: 32_000, InputPrice: 15, CachedPrice: 1.5, OutputPrice: 75, Images: true},
		"claude-opus-4":     {ContextWindow: 200_000, MaxOutputTokens: 32_000, InputPrice: 15, CachedPrice: 1.5, OutputPrice: 75, Images: true},
		"claude-sonnet-4-5": {ContextWindow: 200_000, MaxOutputTokens: 64_000, InputPrice: 3, CachedPrice: 0.3, OutputPrice: 15, Images: true},
		"claude-sonnet-4":   {ContextWindow: 200_000, MaxOutputTokens: 64_000, InputPrice: 3, CachedPrice: 0.3, OutputPrice: 15, Images: true},
		"claude-haiku-4-5":  {ContextWindow: 200_000, MaxOutputTokens: 64_000, InputPrice: 1, CachedPrice: 0.1, OutputPrice: 5, Images: true},
		"claude-3-5-haiku":  {ContextWindow: 200_000, MaxOutputTokens: 8_192, InputPrice: 0.8, CachedPrice: 0.08, OutputPrice: 4, Images: true},
	}
}

// defaultModelFor is the model a provider of this type gets when the
// configuration names none and the server cannot be asked.
func defaultModelFor(typ string) string {
	switch typ {
	case TypeAnthropic:
		return "claude-sonnet-4-5"
	case TypeOpenAI:
		return "gpt-4.1"
	}
	return ""
}

// lookupBuiltin finds a model by exact name, then by the longest known
// prefix followed by "-" (dated snapshots), ignoring an OpenRouter-style
// vendor prefix ("anthropic/claude-sonnet-4-5").
func lookupBuiltin(model string) (ModelInfo, bool) {
	table := builtinModels()
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	if m, ok := table[model]; ok {
		return m, true
	}
	best := ""
	for name := range table {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best = name
		}
	}
	if best == "" {
		return ModelInfo{}, false
	}
	return table[best], true
}

// Cost prices usage in USD; ok is false when the model has no known price.
func (m ModelInfo) Cost(input, cached, output int64) (usd float64, ok bool) {
	if m.InputPrice == 0 && m.OutputPrice == 0 {
		return 0, false
	}
	cachedPrice := m.CachedPrice
	if cachedPrice == 0 {
		cachedPrice = m.InputPrice
	}
	uncached := max(input-cached, 0)
	return (float64(uncached)*m.InputPrice + float64(cached)*cachedPrice + float64(output)*m.OutputPrice) / 1e6, true
}

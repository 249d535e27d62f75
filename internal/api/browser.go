package api

// Capability says whether an optional part (the agent's browser, h18-browser)
// is on, and when it is off why, so the UI can say so instead of leaving a
// person to guess (DESIGN.md: capability-gated extras say why).
type Capability struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason,omitempty"`
}

package event

// GoalUpdatedPayload is the payload of goal.updated: the session's goal as
// it is now.
type GoalUpdatedPayload struct {
	Text   string `json:"text"`
	Status string `json:"status"` // active, paused, met, blocked, cleared
	// Limits (0: none).
	MaxRuns       int     `json:"max_runs,omitempty"`
	MaxTokens     int64   `json:"max_tokens,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
	MaxDurationMS int64   `json:"max_duration_ms,omitempty"`
	// What the runs under the goal used.
	Runs    int     `json:"runs"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Note is the agent's last report or why the goal stopped.
	Note string `json:"note,omitempty"`
	// Reason is why the goal is no longer active: met, blocked, paused (a
	// person), limit_runs, limit_tokens, limit_cost, limit_duration,
	// run_failed, run_expired, run_cancelled, cleared.
	Reason string `json:"reason,omitempty"`
	// By is who changed it; absent when the server did (a run's report, a
	// limit).
	By *Actor `json:"by,omitempty"`
}

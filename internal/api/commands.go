package api

import "net/http"

// Command is a slash command a client offers in its composer. The list is
// served rather than built into the UI so that commands the server gains
// later (goals, retry, branch) appear in every client without a release of
// each.
type Command struct {
	Name        string `json:"name"`
	Args        string `json:"args,omitempty"` // placeholder for the argument, e.g. "<model>"
	Description string `json:"description"`
}

// Commands lists the slash commands, in the order a menu shows them. Each
// maps onto routes of this API: new → POST /api/sessions, stop → POST
// /api/runs/{id}/cancel, model and title → PATCH /api/sessions/{id},
// compact → POST /api/sessions/{id}/compact, retry → POST
// /api/runs/{id}/retry, undo → POST /api/sessions/{id}/undo, continue →
// POST /api/runs/{id}/continue; help is the client's own.
// compact → POST /api/sessions/{id}/compact, pin and archive → PATCH
// /api/sessions/{id} (organising sessions); help is the client's own.
func Commands() []Command {
	return []Command{
		{Name: "new", Description: "Start a new session"},
		{Name: "stop", Description: "Stop the running agent"},
		// Pause → POST /api/runs/{id}/pause (h16-budgets).
		{Name: "pause", Description: "Pause the running agent at its next step; resume it from the transcript"},
		// Steer → POST /api/sessions/{id}/messages with if_busy "steer".
		{Name: "steer", Args: "<text>", Description: "Tell the running agent something it reads after its current step"},
		{Name: "model", Args: "<model>", Description: "Use another model for this session"},
		{Name: "compact", Description: "Summarise older messages to free context"},
		{Name: "branch", Description: "Branch this session into a new one from its last message"},
		{Name: "export", Args: "[md|json]", Description: "Download this session as Markdown (default) or JSON"},
		{Name: "title", Args: "<title>", Description: "Rename this session"},
		// Goal → GET|PUT|DELETE /api/sessions/{id}/goal.
		{Name: "goal", Args: "set <text> | show | pause | resume | clear", Description: "Give the session a goal the agent works towards across runs"},
		// Versions of a conversation.
		{Name: "retry", Args: "[model]", Description: "Answer the last message again (the earlier answer stays a version away)"},
		{Name: "undo", Args: "[n|restore]", Description: "Take the last n turns out of the conversation, or restore them"},
		{Name: "continue", Description: "Go on from an answer that was cut short"},
		// Organising sessions.
		{Name: "pin", Description: "Pin or unpin this session"},
		{Name: "archive", Description: "Archive this session (or unarchive it)"},
		// Delete → DELETE /api/sessions/{id}, after the client's undo time.
		{Name: "delete", Description: "Delete this session (undo for a few seconds)"},
		{Name: "help", Description: "Show commands and keyboard shortcuts"},
	}
}

func (a *API) listCommands(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"commands": Commands()})
}

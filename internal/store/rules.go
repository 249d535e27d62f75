package store

// Where a rule came from (h16-policy): both stores keep Rule.CreatedBy as
// the actor's JSON, '' for none.

import (
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// RuleActorJSON is the stored form of a rule's CreatedBy.
func RuleActorJSON(a *event.Actor) string {
	if a == nil {
		return ""
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "" // an Actor of strings always marshals
	}
	return string(b)
}

// RuleActor reads RuleActorJSON's form back; what is not an actor is nil,
// so a damaged row still lists (as a rule of unknown origin).
func RuleActor(s string) *event.Actor {
	if s == "" {
		return nil
	}
	var a event.Actor
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil
	}
	return &a
}

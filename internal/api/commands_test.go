package api_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
)

// GET /api/commands serves the slash commands in menu order: unique
// one-word names, each described; the route takes no writes.
func TestCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.req("GET", "/api/commands", "")
	r.want(t, 200, "")
	var out struct {
		Commands []api.Command `json:"commands"`
	}
	r.decode(t, &out)
	if !slices.Equal(out.Commands, api.Commands()) {
		t.Fatalf("served %+v, want %+v", out.Commands, api.Commands())
	}
	name := regexp.MustCompile(`^[a-z]+$`)
	seen := map[string]bool{}
	for _, c := range out.Commands {
		if !name.MatchString(c.Name) || seen[c.Name] || c.Description == "" {
			t.Errorf("command %+v: want a unique lower-case word with a description", c)
		}
		seen[c.Name] = true
	}
	for _, want := range []string{"new", "stop", "model", "compact", "title", "help"} {
		if !seen[want] {
			t.Errorf("no /%s command", want)
		}
	}
	e.req("POST", "/api/commands", "{}").want(t, 405, "method_not_allowed")
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// pickFake resolves the refs in served and judges the ones in listed
// available; it records whether it was allowed to ask.
type pickFake struct {
	served, unlisted []string
	asked            []bool
}

func (p *pickFake) resolve(ref string) (models.Resolved, error) {
	if !slices.Contains(p.served, ref) {
		return models.Resolved{}, fmt.Errorf("%w %q", models.ErrUnknownModel, ref)
	}
	return models.Resolved{ProviderName: "p", Model: ref}, nil
}
func (p *pickFake) Resolve(_ context.Context, ref string) (models.Resolved, error) {
	return p.resolve(ref)
}
func (p *pickFake) Peek(ref string) (models.Resolved, error) { return p.resolve(ref) }
func (p *pickFake) Available(_ context.Context, ref string, ask bool) error {
	p.asked = append(p.asked, ask)
	if slices.Contains(p.unlisted, ref) {
		return fmt.Errorf("%w %q: not listed", models.ErrUnknownModel, ref)
	}
	_, err := p.resolve(ref)
	return err
}

func TestProfileModelChoice(t *testing.T) {
	prof := store.Profile{Model: "a", Fallbacks: []string{"b", "c"}}
	for _, tc := range []struct {
		name     string
		runModel string
		prof     store.Profile
		ok       bool
		served   []string
		unlisted []string
		want     string
		err      string
	}{
		{"the run's own model wins", "x", prof, true, []string{"x", "a"}, nil, "x", ""},
		{"no profile: the server's default", "", prof, false, []string{""}, nil, "", ""},
		{"the profile's model", "", prof, true, []string{"a", "b"}, nil, "a", ""},
		{"unresolvable: the first fallback", "", prof, true, []string{"b", "c"}, nil, "b", ""},
		{"unlisted: the next", "", prof, true, []string{"a", "b", "c"}, []string{"a", "b"}, "c", ""},
		{"the last is tried whatever its list says", "", prof, true, []string{"a", "b", "c"}, []string{"a", "b", "c"}, "c", ""},
		{"none served", "", prof, true, nil, nil, "", "no model of the profile is available"},
		{"a profile without a model: the default, then fallbacks", "", store.Profile{Fallbacks: []string{"b"}}, true, []string{"b"}, nil, "b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pick := &pickFake{served: tc.served, unlisted: tc.unlisted}
			r := &Runner{pick: pick}
			for _, ask := range []bool{true, false} {
				m, err := r.resolveModel(context.Background(), modelRefs(tc.runModel, tc.prof, tc.ok), ask)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, models.ErrUnknownModel) {
						t.Fatalf("err = %v, want %q", err, tc.err)
					}
					continue
				}
				if err != nil || m.Model != tc.want {
					t.Fatalf("ask=%v: model %q, %v; want %q", ask, m.Model, err, tc.want)
				}
			}
			for i, a := range pick.asked {
				if a != (i < len(pick.asked)/2) {
					t.Fatalf("asked = %v: the run asks, the claim never does", pick.asked)
				}
			}
		})
	}
}

func TestProfileToolsAndMode(t *testing.T) {
	all := tool.NewRegistry(tool.NewReadFile(tool.Config{}), tool.NewGrep(tool.Config{}), tool.NewRunCommand(tool.Config{}), tool.NewUpdateGoal())
	if got := profileTools(all, store.Profile{}, true).Names(); len(got) != 4 {
		t.Errorf("no tools listed: %v, want all", got)
	}
	got := profileTools(all, store.Profile{Tools: []string{"grep"}}, true).Names()
	if !slices.Equal(got, []string{"grep", tool.NameUpdateGoal}) {
		t.Errorf("tools = %v, want grep and the goal's", got)
	}
	if got := profileTools(all, store.Profile{Tools: []string{"grep"}}, false).Names(); len(got) != 4 {
		t.Errorf("no live profile: %v, want all", got)
	}

	r := &Runner{cfg: Config{ApprovalMode: "smart"}}
	for _, tc := range []struct {
		p    store.Profile
		ok   bool
		want string
	}{{store.Profile{ApprovalMode: "off"}, true, "off"}, {store.Profile{}, true, "smart"}, {store.Profile{ApprovalMode: "off"}, false, "smart"}} {
		if got := string(r.approvalMode(tc.p, tc.ok)); got != tc.want {
			t.Errorf("approvalMode(%+v, %v) = %q, want %q", tc.p, tc.ok, got, tc.want)
		}
	}
	if got := profilePrompt(store.Profile{Name: "Ada", Instructions: "Be Ada."}, true); got != "\n\n## Agent profile: Ada\n\nBe Ada." {
		t.Errorf("prompt = %q", got)
	}
	if got := profilePrompt(store.Profile{Name: "Ada"}, true) + profilePrompt(store.Profile{Name: "Ada", Instructions: "x"}, false); got != "" {
		t.Errorf("no instructions or no profile: %q", got)
	}
}

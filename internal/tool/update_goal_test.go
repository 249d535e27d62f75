package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestUpdateGoal(t *testing.T) {
	tests := []struct {
		args       string
		wantStatus string // tool status
		want       GoalReport
		wantErr    string
	}{
		{`{"status":"met","note":"  all green "}`, event.ToolOK, GoalReport{Status: "met", Note: "all green"}, ""},
		{`{"status":"in_progress"}`, event.ToolOK, GoalReport{Status: "in_progress"}, ""},
		{`{"status":"blocked","note":"need the API key"}`, event.ToolOK, GoalReport{Status: "blocked", Note: "need the API key"}, ""},
		{`{}`, event.ToolError, GoalReport{}, "status is required"},
		{`{"status":"done"}`, event.ToolError, GoalReport{}, "must be in_progress, met or blocked"},
		{`{"status":"met","note":"` + strings.Repeat("x", MaxGoalNote+1) + `"}`, event.ToolError, GoalReport{}, "at most 2000"},
		{`{"status":"met","extra":1}`, event.ToolError, GoalReport{}, "extra"},
	}
	for _, tt := range tests {
		res, err := NewUpdateGoal().Run(context.Background(), Env{}, json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != tt.wantStatus || (tt.wantErr != "" && !strings.Contains(res.Output, tt.wantErr)) {
			t.Errorf("%s: %s %q", tt.args, res.Status, res.Output)
			continue
		}
		if tt.wantErr == "" && res.Data.(GoalReport) != tt.want {
			t.Errorf("%s: data %+v, want %+v", tt.args, res.Data, tt.want)
		}
	}
}

func TestRegistryWithout(t *testing.T) {
	r := Builtin(Config{})
	w := r.Without(NameUpdateGoal)
	if _, ok := w.Get(NameUpdateGoal); ok || slices.Contains(w.Names(), NameUpdateGoal) || len(w.Names()) != len(r.Names())-1 {
		t.Fatalf("Without kept %v", w.Names())
	}
	if _, ok := r.Get(NameUpdateGoal); !ok {
		t.Fatal("Without changed the original")
	}
}

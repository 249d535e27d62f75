package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestParseDelegate(t *testing.T) {
	nine := `{"tasks":[` + strings.TrimSuffix(strings.Repeat(`{"prompt":"x"},`, 9), ",") + `]}`
	for _, tc := range []struct {
		name, args string
		err        string // a substring of the error; "" for none
		want       []DelegateTask
	}{
		{"defaults", `{"tasks":[{"prompt":"  Check the parser\nthen report  "}]}`, "",
			[]DelegateTask{{Prompt: "Check the parser\nthen report", Title: "Check the parser", Workspace: DelegateShared}}},
		{"all fields", `{"tasks":[{"prompt":"p","title":" T ","profile":" prf_1 ","workspace":"scratch"}]}`, "",
			[]DelegateTask{{Prompt: "p", Title: "T", Profile: "prf_1", Workspace: DelegateScratch}}},
		{"no tasks", `{"tasks":[]}`, "give 1 to 8 tasks", nil},
		{"too many", nine, "give 1 to 8 tasks, got 9", nil},
		{"empty prompt", `{"tasks":[{"prompt":"ok"},{"prompt":"  "}]}`, "task 2 has no prompt", nil},
		{"bad workspace", `{"tasks":[{"prompt":"p","workspace":"home"}]}`, "workspace must be shared or scratch", nil},
		{"unknown field", `{"tasks":[{"prompt":"p","tools":["x"]}]}`, "invalid arguments", nil},
		{"not json", `{`, "invalid arguments", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDelegate(json.RawMessage(tc.args))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) || got[0] != tc.want[0] {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

type fakeDelegator struct {
	out []DelegateOutcome
	err error
}

func (f fakeDelegator) Delegate(context.Context, Env, []DelegateTask) ([]DelegateOutcome, error) {
	return f.out, f.err
}

// The result lists every task's outcome for the model; a refusal is an
// error result the model can read, and no delegator (or no call id) is
// refused without effect.
func TestDelegateRun(t *testing.T) {
	args := json.RawMessage(`{"tasks":[{"prompt":"a"},{"prompt":"b"}]}`)
	env := Env{RunID: "run_1", SessionID: "ses_1", CallID: "call_1"}
	outs := []DelegateOutcome{
		{Index: 0, Title: "a", SessionID: "ses_a", Status: "completed", Answer: "A done"},
		{Index: 1, Title: "b", SessionID: "ses_b", Status: "failed", Error: "model unavailable"},
	}
	for _, tc := range []struct {
		name   string
		d      Delegator
		env    Env
		status string
		output []string
	}{
		{"outcomes", fakeDelegator{out: outs}, env, event.ToolOK,
			[]string{"## Task 1: a (completed; session ses_a)\nA done", "## Task 2: b (failed; session ses_b)\nError: model unavailable"}},
		{"refused", fakeDelegator{err: &DelegateError{Msg: "task 1: no such profile"}}, env, event.ToolError, []string{"task 1: no such profile"}},
		{"no delegator", nil, env, event.ToolError, []string{"not available"}},
		{"no call id", fakeDelegator{out: outs}, Env{RunID: "run_1"}, event.ToolError, []string{"not available"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := NewDelegate(tc.d).Run(context.Background(), tc.env, args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s (%s)", res.Status, tc.status, res.Output)
			}
			for _, w := range tc.output {
				if !strings.Contains(res.Output, w) {
					t.Fatalf("output %q lacks %q", res.Output, w)
				}
			}
		})
	}
}

// Package transcript folds a session's journal into a normalised transcript:
// user messages, assistant text, reasoning and tool calls with their
// results. The API serves it, the agent loop rebuilds model history from it
// and run finalisation uses it to find what is still open. One fold, three
// uses, so they never disagree.
package transcript

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// Item kinds.
const (
	KindUser      = "user"
	KindAssistant = "assistant"
	KindReasoning = "reasoning"
	KindTool      = "tool_call"
	KindRunEnd    = "run_end" // how a run ended when not plainly completed
	// KindCompaction marks where older messages were summarised for the
	// model; Text is the summary. The items before it stay in the
	// transcript: people see everything, the model sees the summary.
	KindCompaction = "compaction"
	// KindNotice is something the person should see that is not part of
	// the conversation: a diagnostic or a context warning. The model never
	// sees it.
	KindNotice = "notice"
)

// Item is one entry of the transcript.
type Item struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	RunID     string     `json:"run_id"`
	TurnID    string     `json:"turn_id,omitempty"`
	CreatedAt event.Time `json:"created_at"`
	Text      string     `json:"text,omitempty"`
	Signature string     `json:"signature,omitempty"`
	Redacted  string     `json:"redacted,omitempty"` // opaque reasoning a provider encrypted
	// Queued marks a user message whose run no runner has taken yet.
	Queued bool `json:"queued,omitempty"`
	// Attachments of a user message: files saved in the workspace.
	Attachments []event.Attachment `json:"attachments,omitempty"`
	// Steer marks a user message steered into a running run: it stands
	// where the run read it, between its steps.
	Steer bool `json:"steer,omitempty"`
	// Pending marks a steer not delivered yet (message.steered): it will
	// reach the agent after its current step. Its delivery moves the item
	// to where the run read it, or to the queued run it became. The model
	// never sees a pending steer.
	Pending bool `json:"pending,omitempty"`
	// Continuation is the number of the goal's run a user message starts:
	// the server wrote it, not a person.
	Continuation int `json:"continuation,omitempty"`
	// By names who sent a user message (message.user's by) or stopped a
	// run (a cancelled run_end: run.done's by), as Approval.By names who
	// answered: absent for the local user.
	By string `json:"by,omitempty"`
	// Superseded marks assistant text cut short whose run, resumed, answered
	// again after it: the page folds it away so nothing reads twice (the
	// model never saw it either).
	Superseded bool `json:"superseded,omitempty"`
	// Open: still streaming (or cut off by a crash); Partial: closed early.
	Open    bool `json:"open,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// DurationMS: how long a closed reasoning block took (0: unknown).
	DurationMS int64 `json:"duration_ms,omitempty"`
	Tool       *Tool `json:"tool,omitempty"`
	// For KindRunEnd: the terminal status and error.
	Status string           `json:"status,omitempty"`
	Error  *event.ErrorInfo `json:"error,omitempty"`
	// For KindCompaction: the event's payload.
	Compaction *event.ContextCompactedPayload `json:"compaction,omitempty"`

	// Notices: severity (info, warning, error), a stable code and the
	// technical details behind the plain-words text.
	Level   string         `json:"level,omitempty"`
	Code    string         `json:"code,omitempty"`
	Details map[string]any `json:"details,omitempty"`
	// Usage is the tokens and cost of the model call that wrote this item
	// (issue 15): on a turn's last assistant text, else its last item.
	Usage *event.UsageTotals `json:"usage,omitempty"`
	// Versions: on a person's message whose run has other versions (a
	// retry, an edit), which one this is (issue 15).
	Versions *Version `json:"versions,omitempty"`
	// LastEventID is the newest event folded into this item.
	LastEventID int64 `json:"last_event_id"`
}

// Tool is a tool call and, once done, its result.
type Tool struct {
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Label      string          `json:"label"`
	Args       json.RawMessage `json:"args"`
	Status     string          `json:"status"` // a Tool* state, then the result status
	Output     string          `json:"output,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationMS int64           `json:"duration_ms,omitempty"` // without WaitMS
	WaitMS     int64           `json:"wait_ms,omitempty"`     // waiting for a person
	RequestID  string          `json:"request_id,omitempty"`
	// Approval is how the call's approval was settled; nil when it needed
	// none or is still waiting.
	Approval *Approval `json:"approval,omitempty"`
	// CheckpointID is the checkpoint taken before the call ran (a call that
	// may change the workspace): its changes are that checkpoint → the
	// next (GET /api/runs/{id}/changes?tool_call=).
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// Approval outcomes: a person's choice (event.ResolvedPayload.Choice),
// or how the request ended without one, or a remembered rule.
const (
	ApprovalOnce      = "once"
	ApprovalSession   = "session"
	ApprovalAlways    = "always"
	ApprovalDeny      = "deny"
	ApprovalExpired   = "expired"
	ApprovalCancelled = "cancelled"
	ApprovalRule      = "rule" // approved by a remembered rule, nobody asked
)

// Approval is the settled approval of a tool call.
type Approval struct {
	Outcome string `json:"outcome"`
	// Pattern is the remembered rule's pattern (outcome "rule").
	Pattern string `json:"pattern,omitempty"`
	// By names who answered (approval.resolved's by): a person, or "server
	// token". Absent for the local user of an open loopback server, where
	// there is nobody else to tell apart, and for expiry and cancellation.
	By string `json:"by,omitempty"`
	// Note is what the person who denied the call said to do instead.
	Note string `json:"note,omitempty"`
}

// Tool call states before a result; after it, Status is the result status.
const (
	ToolPending          = "pending" // announced, not yet executing
	ToolAwaitingApproval = "awaiting_approval"
	ToolAwaitingClarify  = "awaiting_clarify"
	ToolRunning          = "running" // executing: never re-run after a crash
)

// Done reports whether the tool call has a result.
func (t *Tool) Done() bool {
	switch t.Status {
	case ToolPending, ToolAwaitingApproval, ToolAwaitingClarify, ToolRunning:
		return false
	}
	return true
}

// Builder folds events in ID order.
type Builder struct {
	started map[string]bool // runs a runner claimed (run.started seen)
	ended   map[string]bool // runs with their terminal event
	items   []*Item
	byID    map[string]*Item // segments by id, tools by call id and request id
	builder map[string]*strings.Builder
	session sessionState
	// usage of each model call by run and turn, shown on the turn's
	// answer when Items is read (a turn's tool calls start after it).
	turnUsage map[[2]string]event.UsageTotals
}

// New returns an empty Builder.
func New() *Builder {
	return &Builder{started: map[string]bool{}, ended: map[string]bool{}, byID: map[string]*Item{}, builder: map[string]*strings.Builder{},
		session: newSessionState(), turnUsage: map[[2]string]event.UsageTotals{}}
}

// Fold is New, Add for each event, Items.
func Fold(evs []event.Event) []Item {
	b := New()
	for _, e := range evs {
		b.Add(e)
	}
	return b.Items()
}

// Add folds one event. Unknown types and undecodable payloads are ignored:
// the transcript is a view, never a reason to fail.
func (b *Builder) Add(e event.Event) {
	b.session.add(e)
	switch e.Type {
	case event.MessageSteered:
		var p event.MessageSteeredPayload
		if json.Unmarshal(e.Payload, &p) == nil && p.MessageID != "" {
			if _, ok := b.byID[p.MessageID]; ok {
				return
			}
			it := &Item{ID: p.MessageID, Kind: KindUser, Text: p.Content, By: answeredBy(p.By), Steer: true, Pending: true}
			b.push(it, e)
			b.byID[p.MessageID] = it
		}
	case event.MessageUser:
		var p event.MessageUserPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			b.dropPending(p.MessageID)
			b.push(&Item{ID: p.MessageID, Kind: KindUser, Text: p.Content, By: answeredBy(p.By), Attachments: p.Attachments, Steer: p.Steer, Continuation: p.Continuation}, e)
		}
	case event.MessageDelta, event.ReasoningDelta:
		var p event.DeltaPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			return
		}
		it := b.segment(e, p.ID, p.TurnID)
		sb := b.builder[p.ID]
		if sb == nil {
			return // the segment is closed (or the id names a tool call)
		}
		sb.WriteString(p.Delta)
		it.LastEventID = e.ID
	case event.MessageDone, event.ReasoningDone:
		var p event.DonePayload
		if json.Unmarshal(e.Payload, &p) != nil {
			return
		}
		_, streamed := b.builder[p.ID]
		it := b.segment(e, p.ID, p.TurnID)
		if it.Kind == KindReasoning && it.Open {
			it.DurationMS = reasoningMS(p, it, e, streamed)
		}
		it.Text, it.Signature, it.Redacted, it.Partial, it.Open = p.Text, p.Signature, p.Redacted, p.Partial, false
		it.LastEventID = e.ID
		delete(b.builder, p.ID)
	case event.ToolStarted:
		var p event.ToolStartedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			b.push(&Item{ID: p.ToolCallID, Kind: KindTool, TurnID: p.TurnID, Tool: &Tool{
				ToolCallID: p.ToolCallID, Name: p.Name, Label: p.Label, Args: p.Args, Status: ToolPending,
			}}, e)
			b.byID[p.ToolCallID] = b.items[len(b.items)-1]
		}
	case event.ToolUpdated:
		var p event.ToolUpdatedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			if it := b.byID[p.ToolCallID]; it != nil && it.Tool != nil && !it.Tool.Done() {
				if p.Phase == "executing" {
					it.Tool.Status = ToolRunning
				}
				it.Tool.Output += p.Output
				it.LastEventID = e.ID
			}
		}
	case event.ToolDone:
		var p event.ToolDonePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			if it := b.byID[p.ToolCallID]; it != nil && it.Tool != nil {
				t := it.Tool
				t.Status, t.Output, t.Result, t.Error, t.DurationMS, t.WaitMS = p.Status, p.Output, p.Result, p.Error, p.DurationMS, p.WaitMS
				it.LastEventID = e.ID
			}
		}
	case event.CheckpointCreated:
		var p event.CheckpointCreatedPayload
		if json.Unmarshal(e.Payload, &p) == nil && p.ToolCallID != "" {
			if it := b.byID[p.ToolCallID]; it != nil && it.Tool != nil {
				it.Tool.CheckpointID = p.CheckpointID
				it.LastEventID = e.ID
			}
		}
	case event.ApprovalRequested, event.ClarifyRequested:
		var p struct {
			RequestID  string `json:"request_id"`
			ToolCallID string `json:"tool_call_id"`
		}
		if json.Unmarshal(e.Payload, &p) == nil {
			if it := b.byID[p.ToolCallID]; it != nil && it.Tool != nil && !it.Tool.Done() {
				it.Tool.RequestID = p.RequestID
				b.byID[p.RequestID] = it
				it.Tool.Status = ToolAwaitingApproval
				if e.Type == event.ClarifyRequested {
					it.Tool.Status = ToolAwaitingClarify
				}
				it.LastEventID = e.ID
			}
		}
	case event.ApprovalResolved, event.ClarifyResolved:
		var p event.ResolvedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			if it := b.byID[p.RequestID]; it != nil && it.Tool != nil && !it.Tool.Done() {
				if e.Type == event.ApprovalResolved {
					it.Tool.Approval = &Approval{Outcome: approvalOutcome(p), By: answeredBy(p.By), Note: p.Note}
				}
				it.Tool.Status = ToolPending
				it.LastEventID = e.ID
			}
		}
	case event.ContextCompacted:
		var p event.ContextCompactedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			b.session.compacted(p)
			b.push(&Item{ID: "cmp_" + strconv.FormatInt(e.ID, 10), Kind: KindCompaction, Text: p.Summary, Compaction: &p}, e)
		}
	case event.RunStarted:
		b.started[e.RunID] = true
	case event.Diagnostic:
		var p event.DiagnosticPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			b.push(&Item{ID: noticeID(e), Kind: KindNotice, Level: p.Level, Code: p.Code, Text: p.Message, Details: p.Details}, e)
			if p.Code == "auto_approved" {
				b.autoApproved(p, e)
			}
		}
	case event.ContextWarning:
		var p event.ContextWarningPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			b.session.warning(p)
			b.push(&Item{ID: noticeID(e), Kind: KindNotice, Level: "warning", Code: "context_warning", Text: ContextWarningText(p)}, e)
		}
	case event.Usage:
		// Total is the run's so far: neither the items nor the meter
		// read it, so it is not decoded.
		var p struct {
			TurnID string            `json:"turn_id"`
			Turn   event.UsageTotals `json:"turn"`
		}
		if json.Unmarshal(e.Payload, &p) == nil {
			b.session.usage(p.TurnID, p.Turn.InputTokens)
			b.addUsage(e.RunID, p.TurnID, p.Turn)
		}
	case event.RunDone:
		b.ended[e.RunID] = true
		var p struct { // event.RunDonePayload without the run's usage
			Status string           `json:"status"`
			Error  *event.ErrorInfo `json:"error,omitempty"`
			By     *event.Actor     `json:"by,omitempty"`
		}
		if json.Unmarshal(e.Payload, &p) != nil {
			return
		}
		b.session.runDone(e, p.Status)
		if p.Status == "completed" {
			return
		}
		if p.Status == "cancelled" && b.unstarted(e.RunID) {
			b.withdraw(e.RunID)
			return
		}
		b.push(&Item{ID: "end_" + e.RunID, Kind: KindRunEnd, Status: p.Status, Error: p.Error, By: answeredBy(p.By)}, e)
	}
}

// addUsage records a model call's tokens and cost for its turn (see
// placeUsage).
func (b *Builder) addUsage(runID, turnID string, turn event.UsageTotals) {
	if turnID != "" {
		b.turnUsage[[2]string{runID, turnID}] = turn
	}
}

// placeUsage puts each model call's usage on the answer it produced: the
// turn's last assistant text, else (a turn of tool calls only) its first
// item. LastEventID stays: it marks where a message ends (a branch point).
// A turn with no item (a compaction) shows nowhere but in the run's
// totals.
func (b *Builder) placeUsage(out []Item) {
	if len(b.turnUsage) == 0 {
		return
	}
	at := make(map[[2]string]int, len(b.turnUsage))
	for i := range out {
		k := [2]string{out[i].RunID, out[i].TurnID}
		if _, ok := b.turnUsage[k]; !ok {
			continue
		}
		if _, seen := at[k]; !seen || out[i].Kind == KindAssistant {
			at[k] = i
		}
	}
	for k, i := range at {
		u := b.turnUsage[k]
		out[i].Usage = &u
	}
}

// reasoningMS is how long a reasoning block took: what the runner measured,
// else (older journals, a block closed by whoever finished the run) the
// time from its first delta to its end. A block never seen streaming has
// no known duration. The browser applies the same rule to live events.
func reasoningMS(p event.DonePayload, it *Item, e event.Event, streamed bool) int64 {
	switch {
	case p.DurationMS > 0:
		return p.DurationMS
	case streamed:
		return max(0, e.TS.Sub(it.CreatedAt.Time).Milliseconds())
	}
	return 0
}

// answeredBy is the name shown for who answered an approval, sent a
// message or stopped a run ("" for the local user and for nobody).
func answeredBy(a *event.Actor) string {
	if a == nil || a.Kind == "local" {
		return ""
	}
	return a.Name
}

// approvalOutcome is the outcome of a resolved approval request.
func approvalOutcome(p event.ResolvedPayload) string {
	switch p.Status {
	case "resolved":
		if p.Choice == "" {
			return ApprovalDeny // approval fails closed
		}
		return p.Choice
	case "expired":
		return ApprovalExpired
	}
	return ApprovalCancelled
}

// autoApproved records on a tool call that a remembered rule approved it
// (diagnostic auto_approved, details tool_call_id and pattern).
func (b *Builder) autoApproved(p event.DiagnosticPayload, e event.Event) {
	callID, _ := p.Details["tool_call_id"].(string)
	pattern, _ := p.Details["pattern"].(string)
	if it := b.byID[callID]; it != nil && it.Tool != nil && !it.Tool.Done() {
		it.Tool.Approval = &Approval{Outcome: ApprovalRule, Pattern: pattern}
		it.LastEventID = e.ID
	}
}

func noticeID(e event.Event) string { return "ntc_" + strconv.FormatInt(e.ID, 10) }

// ContextWarningText is how a context warning reads in the transcript. The
// browser builds the same sentence for a live warning, so that a reload
// shows what the live view showed.
func ContextWarningText(p event.ContextWarningPayload) string {
	return fmt.Sprintf("The conversation is using about %d%% of the model's context window (%d of %d tokens). Older messages may be compacted.",
		int(math.Round(p.Ratio*100)), p.EstimatedTokens, p.ContextWindow)
}

// unstarted reports a run no runner took: no run.started and nothing but
// its message.
func (b *Builder) unstarted(runID string) bool {
	if b.started[runID] {
		return false
	}
	for _, it := range b.items {
		if it.RunID == runID && it.Kind != KindUser {
			return false
		}
	}
	return true
}

// withdraw drops a run that was cancelled before any runner took it: a
// queued message the person removed. Neither the transcript nor the model
// sees it, as if it had never been sent.
func (b *Builder) withdraw(runID string) {
	b.items = slices.DeleteFunc(b.items, func(it *Item) bool { return it.RunID == runID })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dropPending removes the pending steer id: its message.user puts it
// where it was delivered instead.
func (b *Builder) dropPending(id string) {
	it, ok := b.byID[id]
	if !ok || !it.Pending {
		return
	}
	delete(b.byID, id)
	for i, x := range b.items {
		if x == it {
			b.items = append(b.items[:i], b.items[i+1:]...)
			return
		}
	}
}

func (b *Builder) push(it *Item, e event.Event) {
	it.RunID, it.CreatedAt, it.LastEventID = e.RunID, e.TS, e.ID
	b.items = append(b.items, it)
}

// segment returns the text/reasoning item with id, creating it open.
func (b *Builder) segment(e event.Event, id, turnID string) *Item {
	if it, ok := b.byID[id]; ok {
		return it
	}
	kind := KindAssistant
	if e.Type == event.ReasoningDelta || e.Type == event.ReasoningDone {
		kind = KindReasoning
	}
	it := &Item{ID: id, Kind: kind, TurnID: turnID, Open: true}
	b.push(it, e)
	b.byID[id] = it
	b.builder[id] = &strings.Builder{}
	return it
}

// Items returns the transcript so far. Open segments carry the text
// streamed until now.
func (b *Builder) Items() []Item {
	out := make([]Item, len(b.items))
	for i, it := range b.items {
		out[i] = *it
		if it.Tool != nil {
			t := *it.Tool
			if t.Approval != nil {
				a := *t.Approval
				t.Approval = &a
			}
			out[i].Tool = &t
		}
		if sb, ok := b.builder[it.ID]; ok && it.Open {
			out[i].Text = sb.String()
		}
		if it.Kind == KindUser && !b.started[it.RunID] && !b.ended[it.RunID] {
			out[i].Queued = true
		}
	}
	// A pending steer waits below what its run still writes: it reaches
	// the agent after the current step, so it reads last until then.
	slices.SortStableFunc(out, func(x, y Item) int {
		return cmp.Compare(boolInt(x.Pending), boolInt(y.Pending))
	})
	answered := map[string]bool{} // runs with assistant text further on
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Kind != KindAssistant {
			continue
		}
		if out[i].Partial && answered[out[i].RunID] {
			out[i].Superseded = true
		}
		answered[out[i].RunID] = true
	}
	b.placeUsage(out)
	return out
}

// FoldRuns folds a session's events run by run (in the order of runs) up to
// and including the run until; later runs are left out. Within a run,
// events keep their journal order. until "" keeps every run. A message queued while an earlier run
// streamed thus comes after that run's answer.
func FoldRuns(evs []event.Event, runIDs []string, until string) []Item {
	return Fold(byRun(evs, runIDs, until))
}

// byRun orders a session's events as FoldRuns folds them.
func byRun(evs []event.Event, runIDs []string, until string) []event.Event {
	order := make(map[string]int, len(runIDs))
	for i, r := range runIDs {
		order[r] = i
		if r == until {
			break
		}
	}
	// Most reads keep every event and find them in order already (a run
	// follows the one before): those fold the events as they are, with no
	// copy of a long session's journal.
	inOrder, last := true, -1
	for _, e := range evs {
		k, ok := order[e.RunID]
		if !ok || k < last {
			inOrder = false
			break
		}
		last = k
	}
	if inOrder {
		return evs
	}
	kept := make([]event.Event, 0, len(evs))
	for _, e := range evs {
		if _, ok := order[e.RunID]; ok {
			kept = append(kept, e)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return order[kept[i].RunID] < order[kept[j].RunID] })
	return kept
}

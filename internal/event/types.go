package event

// The event types the server emits. Keep this list, Catalog, docs/EVENTS.md
// and the UI's handlers in step: tests compare them.
const (
	// Run lifecycle.
	RunQueued  Type = "run.queued"  // a run was created and waits for a runner
	RunStarted Type = "run.started" // a runner claimed the run (first claim or re-claim)
	RunStatus  Type = "run.status"  // a non-terminal status change
	RunDone    Type = "run.done"    // the one terminal event: completed, failed, cancelled or expired

	// Conversation content.
	MessageUser Type = "message.user" // the person's message that started the run
	// MessageSteered: a person steered a message into the running run; it
	// waits for the run's next step boundary (issue 15).
	MessageSteered Type = "message.steered"
	MessageDelta   Type = "message.delta"   // a fragment of assistant text
	MessageDone    Type = "message.done"    // an assistant text segment is complete (or cut short)
	ReasoningDelta Type = "reasoning.delta" // a fragment of model reasoning
	ReasoningDone  Type = "reasoning.done"  // a reasoning block is complete
	TurnStarted    Type = "turn.started"    // one model call begins
	TurnEnded      Type = "turn.ended"      // one model call ended
	Usage          Type = "usage"           // token usage of one model call
	TitleUpdated   Type = "title.updated"   // the session got a title

	// Tools, keyed by tool_call_id.
	ToolStarted Type = "tool.started"
	ToolUpdated Type = "tool.updated"
	ToolDone    Type = "tool.done"

	// Human requests.
	ApprovalRequested Type = "approval.requested"
	ApprovalResolved  Type = "approval.resolved"
	ClarifyRequested  Type = "clarify.requested"
	ClarifyResolved   Type = "clarify.resolved"
	// ApprovalDecided (h16-policy) records how the approval policy settled
	// a tool call with an effect: the decisions log is read from it.
	ApprovalDecided Type = "approval.decided"

	// The agent's plan: the todo tool replaced its list.
	TodoUpdated Type = "todo.updated"

	// Subagents (issue 18, h18-delegate, seed 004): the delegate tool's
	// child runs, journaled in the parent's run.
	SubagentStarted Type = "subagent.started" // a delegated task's child run was queued
	SubagentDone    Type = "subagent.done"    // a delegated task's child run ended

	// Context window management.
	ContextWarning   Type = "context.warning"   // the conversation nears the model's context window
	ContextCompacted Type = "context.compacted" // older turns were replaced by a summary

	// Checkpoints of the session's workspace (issue 14). Both are run
	// events when a run's tool call caused them and session events (run_id
	// "") for a person's edit or a rollback.
	CheckpointCreated  Type = "checkpoint.created"  // the workspace was recorded; what changed since the previous checkpoint
	CheckpointRestored Type = "checkpoint.restored" // files were put back as they were at a checkpoint

	// Diagnostics: something a person should know that is not content.
	Diagnostic Type = "diagnostic"

	// Session lifecycle. These belong to no run (run_id ""): they have a
	// gap-free seq of their own per session, and session.deleted outlives
	// the session it announces, so a stream can tell every tab.
	SessionCreated Type = "session.created" // a session was created
	SessionUpdated Type = "session.updated" // a person changed a session's title or model
	SessionDeleted Type = "session.deleted" // a session and its history were deleted

	// Workspace: a person's act on the session's workspace, of no run
	// (run_id ""), numbered with the session's lifecycle events but heard
	// only by streams of that session.
	GitCommitted Type = "git.committed" // a person committed through the Git panel

	// Terminals: a person's shell in the session's workspace, of no run
	// (run_id ""), numbered with the session's lifecycle events but heard
	// only by streams of that session.
	TerminalOpened Type = "terminal.opened" // a person opened a terminal
	TerminalClosed Type = "terminal.closed" // a terminal ended

	// Goals (issue 15): the session's goal changed (set, paused, resumed,
	// reported on, stopped by a limit, cleared). Of no run (run_id ""),
	// heard by streams of that session.
	GoalUpdated Type = "goal.updated"

	// Versions of a conversation (issue 15): which branch of the session's
	// tree of runs is on screen and in the model's history. Of no run
	// (run_id ""), heard by streams of that session.
	VersionSelected Type = "version.selected" // a person switched version, undid or restored turns

	// Projects (issue 15, organising sessions). They belong to no session
	// and no run: journaled with run_id "" and the project's id in
	// session_id, the key of their own gap-free seq (the project's row
	// counts it), and heard by every tab, so each sidebar follows a project
	// made, renamed or deleted anywhere. project.deleted outlives the
	// project it announces.
	ProjectCreated Type = "project.created" // a project was created
	ProjectUpdated Type = "project.updated" // a project's name or defaults changed
	ProjectDeleted Type = "project.deleted" // a project was deleted; its sessions are in none

	// Resync is never journaled: a stream sends it when it cannot honour the
	// client's cursor, so the client reloads state instead of showing a gap.
	Resync Type = "resync"
)

// Tier says where a UI shows an event by default (seed 004).
type Tier string

const (
	TierDefault Tier = "default"
	TierDebug   Tier = "debug"
)

// Info describes one event type.
type Info struct {
	Type     Type
	Tier     Tier
	Terminal bool
	Summary  string
}

// Catalog lists every event type the server can emit, in documentation order.
func Catalog() []Info {
	return []Info{
		{RunQueued, TierDefault, false, "run created; waits for a runner"},
		{RunStarted, TierDefault, false, "a runner claimed the run"},
		{RunStatus, TierDefault, false, "non-terminal status change"},
		{RunDone, TierDefault, true, "terminal state of the run"},
		{MessageUser, TierDefault, false, "the person's message"},
		{MessageSteered, TierDefault, false, "a steer waits for the running run's next step"},
		{MessageDelta, TierDefault, false, "assistant text fragment"},
		{MessageDone, TierDefault, false, "assistant text segment complete"},
		{ReasoningDelta, TierDefault, false, "reasoning fragment"},
		{ReasoningDone, TierDefault, false, "reasoning block complete"},
		{TurnStarted, TierDebug, false, "model call begins"},
		{TurnEnded, TierDebug, false, "model call ended"},
		{Usage, TierDebug, false, "token usage of one model call"},
		{TitleUpdated, TierDefault, false, "session title set"},
		{ToolStarted, TierDefault, false, "tool call begins"},
		{ToolUpdated, TierDefault, false, "tool call progress/output"},
		{ToolDone, TierDefault, false, "tool call finished"},
		{ApprovalRequested, TierDefault, false, "a tool call needs approval"},
		{ApprovalResolved, TierDefault, false, "approval answered or expired"},
		{ApprovalDecided, TierDebug, false, "how the approval policy settled a tool call"},
		{ClarifyRequested, TierDefault, false, "the agent asks a question"},
		{ClarifyResolved, TierDefault, false, "question answered or expired"},
		{TodoUpdated, TierDefault, false, "the agent's todo list changed"},
		{SubagentStarted, TierDefault, false, "a delegated task's child run was queued"},
		{SubagentDone, TierDefault, false, "a delegated task's child run ended"},
		{ContextWarning, TierDefault, false, "context window nearly full"},
		{ContextCompacted, TierDefault, false, "older turns summarised"},
		{CheckpointCreated, TierDefault, false, "a checkpoint of the workspace was taken"},
		{CheckpointRestored, TierDefault, false, "files were rolled back to a checkpoint"},
		{Diagnostic, TierDefault, false, "operational notice"},
		{SessionCreated, TierDefault, false, "a session was created"},
		{SessionUpdated, TierDefault, false, "a session was renamed or its model changed"},
		{SessionDeleted, TierDefault, false, "a session was deleted"},
		{GitCommitted, TierDefault, false, "a person committed in the Git panel"},
		{TerminalOpened, TierDefault, false, "a person opened a terminal in the workspace"},
		{TerminalClosed, TierDefault, false, "a terminal ended"},
		{GoalUpdated, TierDefault, false, "the session's goal changed"},
		{VersionSelected, TierDefault, false, "the version of the conversation on screen changed (switch, undo, restore)"},
		{ProjectCreated, TierDefault, false, "a project was created"},
		{ProjectUpdated, TierDefault, false, "a project's name or defaults changed"},
		{ProjectDeleted, TierDefault, false, "a project was deleted"},
		{Resync, TierDefault, false, "stream-only: cursor cannot be honoured"},
	}
}

// IsTerminal reports whether events of type t end a run.
func IsTerminal(t Type) bool { return t == RunDone }

// SessionTypes are the session lifecycle types: events of no run, which
// every browser tab hears of whichever session it shows.
func SessionTypes() []Type { return []Type{SessionCreated, SessionUpdated, SessionDeleted} }

// IsSession reports whether t is an event of a session rather than of a
// run (run_id ""): the lifecycle types and a person's workspace acts
// (git.committed, terminal.opened, terminal.closed). Only the lifecycle
// types reach every tab.
func IsSession(t Type) bool {
	return t == SessionCreated || t == SessionUpdated || t == SessionDeleted || t == GitCommitted ||
		t == TerminalOpened || t == TerminalClosed || t == GoalUpdated || t == VersionSelected
}

// ProjectTypes are the project types: events of no session and no run,
// keyed by the project's id, which every tab hears.
func ProjectTypes() []Type { return []Type{ProjectCreated, ProjectUpdated, ProjectDeleted} }

// IsProject reports whether t is a project event: its session_id holds a
// project's id and its seq is the project's.
func IsProject(t Type) bool { return t == ProjectCreated || t == ProjectUpdated || t == ProjectDeleted }

// Runless reports whether an event of type t may be journaled without a
// run (run_id ""): the session and project events above, and the
// checkpoint types, which a person's edit or rollback causes outside any
// run.
func Runless(t Type) bool {
	return IsSession(t) || IsProject(t) || t == CheckpointCreated || t == CheckpointRestored
}

// RunlessOnly reports whether an event of type t must not name a run.
func RunlessOnly(t Type) bool { return IsSession(t) || IsProject(t) }

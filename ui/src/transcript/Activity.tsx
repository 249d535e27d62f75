// The activity feed (seed 002): run → turns → reasoning and tool nodes, with
// state dots, durations and expandable arguments/results. History loaded
// from the snapshot (replay) is dimmed and older finished runs fold into one
// group; the agent's todo list sits on top.

import { useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { ActivityNode, SessionState, TodoItem } from "../state/types";
import { JsonBlock, OutputBlock } from "./Output";
import { approvalText, waitText } from "./RequestCard";
import { IconBrain, IconChevron, IconCpu, IconInfo, IconPlay, ToolIcon } from "./icons";
import { fmtDuration, fmtElapsed, useNow } from "./util";
import { sessionPath } from "../state/store";

const MAX_RUNS = 50;

function NodeIcon({ node }: { node: ActivityNode }) {
  switch (node.type) {
    case "run": return <IconPlay size={13} />;
    case "turn": return <IconCpu size={13} />;
    case "think": return <IconBrain size={13} />;
    case "tool": return <ToolIcon name={node.tool ?? ""} size={13} />;
    case "marker": return <IconPlay size={13} />;
    default: return <IconInfo size={13} />;
  }
}

function Duration({ node }: { node: ActivityNode }) {
  const running = node.state === "running" || node.state === "waiting";
  const now = useNow(running && node.endedAt == null);
  const ms = node.durationMs ?? (node.endedAt != null ? node.endedAt - node.startedAt : running ? now - node.startedAt : undefined);
  // A finished node with no measurable time (history without timings).
  if (ms == null || !isFinite(ms) || (ms <= 0 && !running)) return null;
  return <span class="act-dur">{running && node.endedAt == null ? fmtElapsed(ms) : fmtDuration(ms)}</span>;
}

/** A tool's approval outcome and its wait for a person, under its row
 * (apart from its own duration). */
function ApprovalNote({ node }: { node: ActivityNode }) {
  const me = useStore().account.me.value?.principal?.name;
  const text = [node.approval ? approvalText(node.approval, me) : "", waitText(node.waitMs, node.tool ?? "")].filter(Boolean).join(" · ");
  return <div class="act-note" data-testid="activity-approval">{text}</div>;
}

function hasDetails(n: ActivityNode): boolean {
  return n.args !== undefined || n.result !== undefined || !!n.output;
}

function NodeDetails({ node }: { node: ActivityNode }) {
  return (
    <div class="act-details">
      {node.args !== undefined && <JsonBlock value={node.args} label="Arguments" maxLines={14} />}
      {node.result !== undefined && <JsonBlock value={node.result} label="Result" maxLines={18} />}
      {node.output && <OutputBlock text={node.output} label={node.type === "think" ? "Reasoning" : "Output"} maxLines={14} />}
    </div>
  );
}

function Node({ node, defaultOpen }: { node: ActivityNode; defaultOpen: boolean }) {
  const store = useStore();
  const branch = node.children.length > 0;
  const [open, setOpen] = useState<boolean | null>(null);
  const isOpen = open ?? defaultOpen;
  const expandable = branch || hasDetails(node);
  const [showDetails, setShowDetails] = useState(false);
  const toggle = () => {
    if (branch) setOpen(!isOpen);
    else setShowDetails(!showDetails);
  };
  const expanded = branch ? isOpen : showDetails;
  return (
    <li
      class={"act-node act-" + node.type + " act-" + node.state + (node.replay ? " act-replay" : "")}
      data-testid="activity-node"
      data-type={node.type}
      data-state={node.state}
      data-replay={node.replay ? "true" : "false"}
      data-node-id={node.id}
    >
      <button
        type="button"
        class="act-row"
        aria-expanded={expandable ? expanded : undefined}
        onClick={expandable ? toggle : undefined}
        title={node.label}
      >
        <span class={"act-chev" + (expandable ? "" : " none")}>
          {expandable && <IconChevron size={11} class={"chev" + (expanded ? " open" : "")} />}
        </span>
        <span class={"act-dot dot-" + node.state} aria-label={node.state} role="img" />
        <span class="act-icon"><NodeIcon node={node} /></span>
        <span class="act-label">{node.label}</span>
        {node.attempt && <span class="act-attempt" title={`Execution ${node.attempt} of this run`}>attempt {node.attempt}</span>}
        {node.type !== "marker" && <Duration node={node} />}
      </button>
      {(node.approval || node.waitMs) && <ApprovalNote node={node} />}
      {node.link && (
        <a class="act-note act-link" href={sessionPath(node.link)} data-testid="activity-subagent-link"
          onClick={(e) => {
            if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
            e.preventDefault();
            store.selectSession(node.link!);
          }}>Open the subagent's session</a>
      )}
      {node.checkpoint && (
        <div class="act-note" data-testid="activity-checkpoint" title={node.checkpoint}>
          Workspace checkpointed before it ran
        </div>
      )}
      {branch && isOpen && (
        <>
          {hasDetails(node) && <NodeDetailsToggle node={node} />}
          <ul class="act-children">
            {node.children.map((c) => (
              <Node key={c.id} node={c} defaultOpen={c.type === "turn" || c.tool === "delegate"} />
            ))}
          </ul>
        </>
      )}
      {!branch && showDetails && <NodeDetails node={node} />}
    </li>
  );
}

/** A branch (run/turn) that also carries its own data: a small toggle. */
function NodeDetailsToggle({ node }: { node: ActivityNode }) {
  const [open, setOpen] = useState(false);
  return (
    <div class="act-own">
      <button type="button" class="t-link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide details" : "Details"}
      </button>
      {open && <NodeDetails node={node} />}
    </div>
  );
}

const TODO_GLYPH: Record<TodoItem["status"], string> = { done: "☑", in_progress: "◐", pending: "☐", cancelled: "☒" };
const TODO_LABEL: Record<TodoItem["status"], string> = { done: "done", in_progress: "in progress", pending: "pending", cancelled: "cancelled" };

function Todos({ todos }: { todos: TodoItem[] }) {
  const done = todos.filter((t) => t.status === "done").length;
  return (
    <section class="act-todos" aria-label="Todo list" data-testid="todos">
      <div class="act-sec-title">
        Todo <span class="act-count">{done}/{todos.length}</span>
      </div>
      <ul>
        {todos.map((t) => (
          <li key={t.id} class={"todo todo-" + t.status} data-status={t.status}>
            <span class="todo-box" role="img" aria-label={TODO_LABEL[t.status] ?? t.status}>{TODO_GLYPH[t.status] ?? "☐"}</span>
            <span class="todo-text">{t.content}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function ActivityPanel({ session }: { session: SessionState }) {
  const roots = session.activity.value;
  const todos = session.todos.value;
  const [showEarlier, setShowEarlier] = useState(false);

  const runs = roots.slice(-MAX_RUNS);
  const omitted = roots.length - runs.length;
  // Finished runs before the newest one fold into "Earlier runs (N)", live
  // or loaded alike (a reload shows what the live view showed); the newest
  // run and anything not finished stay out.
  let split = 0;
  while (split < runs.length - 1 && runs[split].endedAt != null) split++;
  const earlier = runs.slice(0, split);
  const recent = runs.slice(split);

  return (
    <div class="activity" data-testid="activity">
      {todos.length > 0 && <Todos todos={todos} />}
      {roots.length === 0 ? (
        <div class="act-empty">Reasoning and tool calls appear here as the agent works.</div>
      ) : (
        <ul class="act-tree" role="list">
          {earlier.length > 0 && (
            <li class="act-group">
              <button type="button" class="act-row act-group-row" aria-expanded={showEarlier} onClick={() => setShowEarlier(!showEarlier)}>
                <span class="act-chev"><IconChevron size={11} class={"chev" + (showEarlier ? " open" : "")} /></span>
                <span class="act-label">Earlier runs ({earlier.length})</span>
              </button>
              {showEarlier && (
                <ul class="act-children">
                  {omitted > 0 && <li class="act-omitted">{omitted} older run{omitted === 1 ? "" : "s"} not shown</li>}
                  {earlier.map((r) => <Node key={r.id} node={r} defaultOpen={false} />)}
                </ul>
              )}
            </li>
          )}
          {recent.map((r, i) => (
            <Node key={r.id} node={r} defaultOpen={!r.replay || i === recent.length - 1} />
          ))}
        </ul>
      )}
    </div>
  );
}

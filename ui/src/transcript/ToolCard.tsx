// A tool call in the transcript: icon, the server's concise label, a status
// pill (with a live timer while running), duration, a one-line summary of
// the result, and, expanded, what the tool said (its text output, as the
// agent read it), with the raw arguments and result one click further.
// Edits show their diff right away; calls waiting for a person embed the
// request card.

import { CallChangesLink } from "../workspace/RunChanges";
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import type { HumanRequest, SubagentInfo, ToolInfo, ToolStatus } from "../state/types";
import { subagentsOf } from "../state/activity";
import { sessionPath } from "../state/store";
import { useStore } from "../state/context";
import { ApprovalLine, RequestAnswered, RequestCard } from "./RequestCard";
import { Diff } from "./Diff";
import { MessageAttachments } from "./Attachments";
import type { Attachment } from "../state/types";
import { JsonBlock, OutputBlock } from "./Output";
import { IconChevron, ToolIcon } from "./icons";
import { WebResults, webResults } from "./WebResults";
import { toneClass } from "../shell/status";
import { asRecord, countLines, fmtBytes, fmtDuration, fmtElapsed, num, str, useNow } from "./util";

const STATUS_TEXT: Record<ToolStatus, string> = {
  pending: "Pending",
  awaiting_approval: "Needs approval",
  awaiting_clarify: "Needs answer",
  running: "Running",
  ok: "Done",
  error: "Error",
  timeout: "Timed out",
  denied: "Denied",
  cancelled: "Cancelled",
};

/** Pills for states that are not a ToolStatus of their own. */
const EXTRA_TEXT: Record<string, string> = { interrupted: "Interrupted" };

/** A call whose worker stopped while it ran: closed with an error when the
 * run resumed, never executed twice (EVENTS.md). Not a failure of the
 * tool, so it reads as a warning, not an error. */
export function isInterrupted(t: ToolInfo): boolean {
  return t.status === "error" && !!t.error && t.error.startsWith("interrupted:");
}

/** "interrupted: the worker stopped …" → "The worker stopped …." */
function interruptedText(err: string): string {
  const s = err.slice("interrupted:".length).trim();
  if (!s) return "The worker running this call stopped before it finished; it was not run again.";
  return s[0].toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? "" : ".");
}

export function StatusPill({ status, elapsed }: { status: ToolStatus | string; elapsed?: string }) {
  const text = STATUS_TEXT[status as ToolStatus] ?? EXTRA_TEXT[status] ?? status;
  return (
    <span class={"t-pill t-pill-" + status + " " + toneClass(status)} data-testid="tool-status">
      {status === "running" ? <span class="t-spin" aria-hidden="true" /> : <span class="t-pill-dot" aria-hidden="true" />}
      {text}
      {elapsed && <span class="t-pill-time">{elapsed}</span>}
    </span>
  );
}

/** One line about the result, visible without expanding. */
function summary(t: ToolInfo): ComponentChildren {
  const r = asRecord(t.result);
  const a = asRecord(t.args);
  switch (t.name) {
    case "run_command": {
      const code = num(r?.exit_code);
      if (code == null) return null;
      return (
        <span class={"exit-badge " + (code === 0 ? "exit-ok" : "exit-err")} data-testid="exit-code">
          exit {code}
        </span>
      );
    }
    case "write_file": {
      const area = asRecord(r?.area);
      const content = str(a?.content);
      const lines = num(area?.end_line) ?? (content != null ? countLines(content) : undefined);
      const path = str(asRecord(r?.file)?.path) ?? str(a?.path);
      if (lines == null && !path) return null;
      const bytes = num(r?.bytes);
      return (
        <span class="tool-meta">
          {path && <code class="path">{path}</code>}
          {lines != null && ` · ${lines} line${lines === 1 ? "" : "s"}`}
          {bytes != null && ` · ${fmtBytes(bytes)}`}
          {r?.created === true ? " · new file" : r ? " · overwritten" : ""}
        </span>
      );
    }
    case "read_file": {
      const area = asRecord(r?.area);
      const s = num(area?.start_line), e = num(area?.end_line), total = num(r?.total_lines);
      if (s == null || e == null) return null;
      return <span class="tool-meta">lines {s}–{e}{total != null && ` of ${total}`}{r?.truncated ? " · truncated" : ""}</span>;
    }
    case "list_dir": {
      const entries = Array.isArray(r?.entries) ? r!.entries.length : undefined;
      return entries == null ? null : <span class="tool-meta">{entries} entr{entries === 1 ? "y" : "ies"}{r?.truncated ? " (truncated)" : ""}</span>;
    }
    case "grep": case "glob": {
      const n = Array.isArray(r?.matches) ? r!.matches.length : undefined;
      return n == null ? null : <span class="tool-meta">{n} match{n === 1 ? "" : "es"}{r?.truncated ? " (truncated)" : ""}</span>;
    }
    case "web_fetch": {
      const st = num(r?.status);
      if (st == null) return null;
      return <span class="tool-meta">HTTP {st} · {str(r?.content_type)} · {fmtBytes(num(r?.bytes))}</span>;
    }
    case "web_search": {
      if (!r || r.ok !== true) return null;
      const n = Array.isArray(r.results) ? r.results.length : 0;
      return <span class="tool-meta" data-testid="web-search-count">{n} result{n === 1 ? "" : "s"}</span>;
    }
    case "browser_open": case "browser_read": case "browser_click": case "browser_type": case "browser_scroll": case "browser_screenshot": {
      // The page the call left the browser on, and what the network guard
      // refused on the way (h18-browser).
      const refused = Array.isArray(r?.refused) ? r!.refused.length : 0;
      const title = str(r?.title) || str(r?.url);
      if (!title && !refused) return null;
      return (
        <span class="tool-meta" title={str(r?.url)}>
          {title}{refused ? ` · ${refused} refused` : ""}
        </span>
      );
    }
    case "clarify": {
      const ans = str(r?.answer);
      return ans == null ? null : <span class="tool-meta">answered “{ans}”</span>;
    }
    case "delegate": {
      const n = subagents(t).length || (Array.isArray(a?.tasks) ? a!.tasks.length : 0);
      return n ? <span class="tool-meta">{n} subagent{n === 1 ? "" : "s"}</span> : null;
    }
    case "edit_file": {
      const n = num(r?.replacements);
      return n == null ? null : <span class="tool-meta">{n} replacement{n === 1 ? "" : "s"}</span>;
    }
  }
  return null;
}

/** A delegate call's child runs: live from subagent events, else from
 * its finished result. */
function subagents(t: ToolInfo): SubagentInfo[] {
  if (t.name !== "delegate") return [];
  return t.subagents?.length ? t.subagents : subagentsOf(t.result);
}

/** The delegate call's tasks, each with its state and a link to the child
 * session (h18-delegate). */
function Subagents({ list }: { list: SubagentInfo[] }) {
  const store = useStore();
  const go = (e: MouseEvent, sid: string) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    store.selectSession(sid);
  };
  return (
    <ul class="tool-subagents" data-testid="tool-subagents">
      {list.map((s) => (
        <li key={s.session_id} class="tool-subagent" data-testid="subagent" data-status={s.status}>
          <StatusPill status={s.status === "started" ? "running" : s.status === "completed" ? "ok" : s.status} />
          <a class="tool-subagent-link" href={sessionPath(s.session_id)} onClick={(e) => go(e, s.session_id)} data-testid="subagent-link">
            {s.title || "Subagent " + (s.index + 1)}
          </a>
          {s.summary && <span class="tool-subagent-sum">{s.summary}</span>}
        </li>
      ))}
    </ul>
  );
}

/** What the call did, readably: the full command of run_command (its
 * output shows under the head already), the content write_file wrote, and
 * the tool's text output (what the agent read; list_dir's listing is that
 * text, shown once). */
function Readable({ t }: { t: ToolInfo }) {
  const a = asRecord(t.args);
  const r = asRecord(t.result);
  const command = t.name === "run_command" && typeof a?.command === "string" ? a.command : undefined;
  const content = t.name === "write_file" && typeof a?.content === "string" ? a.content : undefined;
  // run_command's output is under the head once the command ran; a
  // failure's output is the error line already shown.
  const output = t.output && t.status !== "running" && !(t.name === "run_command" && r) && !(t.name === "web_search" && r?.ok === true) &&
    t.output.trim() !== (t.error ?? "").trim() ? t.output : "";
  return (
    <>
      {command != null && (
        <div class="tool-sec">
          <div class="out-label">Command</div>
          <pre class="out-pre cmd">$ {command}</pre>
        </div>
      )}
      {content != null && <OutputBlock text={content} label={`Content${typeof a?.path === "string" ? " · " + a.path : ""}`} maxLines={16} />}
      {output && <OutputBlock text={output} label="Output" maxLines={16} />}
      {!command && content == null && !output && t.status === "ok" && t.name !== "web_search" && <div class="tool-empty">No output.</div>}
    </>
  );
}

/** Image types shown inline: the bitmap ones (an SVG could carry script if
 * ever shown other than as an image). */
const SHOWN_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The images an MCP tool returned (mcp.ResultData: content parts of type
 * image with their base64 bytes), shown without expanding the card like a
 * command's output; the model read a line about each. */
function McpImages({ t }: { t: ToolInfo }) {
  if (!t.name.startsWith("mcp__")) return null;
  const content = asRecord(t.result)?.content;
  if (!Array.isArray(content)) return null;
  const images = content.map(asRecord).filter((p) => p?.type === "image" && typeof p.data === "string" && SHOWN_IMAGES.has(String(p.mime)));
  if (images.length === 0) return null;
  return (
    <div class="tool-images" data-testid="tool-images">
      {images.map((p, i) => <img key={i} src={`data:${String(p!.mime)};base64,${String(p!.data)}`} alt={`Image ${i + 1} from ${t.label || t.name}`} />)}
    </div>
  );
}

/** The raw arguments and result, as the API has them. */
function Raw({ t }: { t: ToolInfo }) {
  return (
    <div class="tool-raw" data-testid="tool-raw">
      <JsonBlock value={t.args ?? {}} label="Arguments" maxLines={16} />
      {t.result != null && <JsonBlock value={t.result} label="Result" maxLines={16} />}
      {t.request_id && <div class="tool-foot">Request {t.request_id}</div>}
    </div>
  );
}

function Details({ t }: { t: ToolInfo }) {
  const [raw, setRaw] = useState(false);
  return (
    <div class="tool-details" data-testid="tool-details">
      <Readable t={t} />
      <button type="button" class="t-link tool-raw-toggle" data-testid="tool-raw-toggle" aria-expanded={raw} onClick={() => setRaw(!raw)}>
        {raw ? "Hide details" : "Details"}
      </button>
      {raw && <Raw t={t} />}
    </div>
  );
}

/** Whether the call waited for a person before running (then tool.started's
 * time is not when it began executing). */
function waitedBefore(t: ToolInfo): boolean {
  return !!t.request_id;
}

function findRequest(pending: HumanRequest[], t: ToolInfo): HumanRequest | undefined {
  return pending.find((r) => (t.request_id && r.id === t.request_id) || r.tool_call_id === t.tool_call_id);
}

export function ToolCard({ tool: t, runId }: { tool: ToolInfo; runId?: string }) {
  const store = useStore();
  const [open, setOpen] = useState(false);
  const running = t.status === "running";
  const waiting = t.status === "awaiting_approval" || t.status === "awaiting_clarify";
  // The timer counts execution, not the wait for approval before it: for a
  // call that waited, the moment we see it switch to running is the start
  // (after a reload mid-run it restarts from the reload); otherwise
  // tool.started's time.
  const runStart = useRef<number | null>(null);
  if (running && runStart.current == null) runStart.current = t.started_ms != null && !waitedBefore(t) ? t.started_ms : Date.now();
  if (!running) runStart.current = null;
  const now = useNow(running);
  // Subscribes to `pending` only while this call waits for a person.
  const req = waiting ? findRequest(store.pending.value, t) : undefined;

  const elapsed = running && runStart.current != null ? fmtElapsed(now - runStart.current) : undefined;
  const done = !running && !waiting && t.status !== "pending";
  const dur = done && t.duration_ms ? fmtDuration(t.duration_ms) : "";
  const r = asRecord(t.result);
  const diff = t.name === "edit_file" ? str(r?.diff) : undefined;
  // A browser screenshot is a PNG in the workspace, described like an
  // attachment: shown as one, without expanding the card.
  const shot = t.name === "browser_screenshot" ? (asRecord(r?.screenshot) as Attachment | null) : null;
  const live = t.live_output ?? (running ? t.output : undefined);
  // Command output stays visible (it is what people look for); a command
  // that never ran (denied, cancelled before start) has only its error.
  const cmdOutput = t.name === "run_command" ? (running ? live : r ? t.output : undefined) : undefined;
  const interrupted = isInterrupted(t);
  const failed = !interrupted && (t.status === "error" || t.status === "timeout" || t.status === "denied");

  return (
    <div
      class={"tool tool-" + (interrupted ? "interrupted" : t.status) + " " + toneClass(interrupted ? "interrupted" : t.status)}
      data-testid="tool-card"
      data-tool={t.name}
      data-status={t.status}
      data-interrupted={interrupted ? "true" : undefined}
    >
      <button
        type="button"
        class="tool-head"
        data-testid="tool-toggle"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <IconChevron size={14} class={"chev" + (open ? " open" : "")} />
        <span class="tool-icon"><ToolIcon name={t.name} size={15} /></span>
        <span class="tool-label" data-testid="tool-label" title={t.label}>{t.label || t.name}</span>
        <span class="tool-right">
          {summary(t)}
          {dur && <span class="tool-dur">{dur}</span>}
          <StatusPill status={interrupted ? "interrupted" : t.status} elapsed={elapsed} />
        </span>
      </button>
      {!waiting && <ApprovalLine approval={t.approval} waitMs={t.request_id ? t.wait_ms : undefined} tool={t.name} />}
      {done && t.status === "ok" && t.checkpoint_id && runId && (
        <div class="tool-ckp"><CallChangesLink runId={runId} toolCallId={t.tool_call_id} /></div>
      )}
      {failed && t.error && <div class="tool-error">{t.error}</div>}
      {interrupted && <div class="tool-note" data-testid="tool-interrupted">{interruptedText(t.error!)}</div>}
      {waiting && (req ? <div class="tool-req"><RequestCard req={req} /></div> : <RequestAnswered />)}
      {diff != null && diff !== "" && <Diff diff={diff} truncated={r?.diff_truncated === true} />}
      {t.name === "web_search" && done && t.status === "ok" && <WebResults results={webResults(t.result)} />}
      {shot && typeof shot.path === "string" && <div class="tool-shot" data-testid="tool-screenshot"><MessageAttachments items={[shot]} /></div>}
      {cmdOutput ? <OutputBlock text={cmdOutput} follow={running} maxLines={running ? 10 : 8} class="cmd-out" /> : null}
      {!cmdOutput && running && live ? <OutputBlock text={live} follow maxLines={10} class="cmd-out" /> : null}
      {done && <McpImages t={t} />}
      {subagents(t).length > 0 && <Subagents list={subagents(t)} />}
      {open && <Details t={t} />}
    </div>
  );
}

// One transcript entry per component. Each reads only its own item signal,
// so a streaming delta re-renders the one entry it touches.

import { MessageAttachments } from "./Attachments";
import { Component, Fragment, createContext, type ComponentChildren } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { ReadonlySignal } from "@preact/signals";
import type { Item, ItemModel, Run } from "../state/types";
import { useStore } from "../state/context";
import { copyText, Markdown } from "./MarkdownView";
import { ToolCard } from "./ToolCard";
import { BranchButton, MessageUsage } from "./Branch";
import { QueuedNote } from "./Waiting";
import { ContinueButton, EditMessage, UserVersionActions, VersionNav } from "./Versions";
import { IconAlert, IconBrain, IconChevron, IconClock, IconInfo, IconLayers, IconPlay, IconStop } from "./icons";
import { recoveringText, tokens } from "../shell/format";
import { useRetryTick } from "../shell/useRetryTick";
import { ICheck, ICopy } from "../shell/icons";
import { toneClass } from "../shell/status";
import { fmtDuration, parseTime } from "./util";
import { JournalButton } from "./Journal";
import { PausedBar } from "./PausedBar";

/** What entries need from the transcript around them. */
export interface TranscriptEnv {
  /** Puts a finished assistant message into the polite live region. */
  announce(text: string): void;
  /** The run a person may resume, and the notice item its Resume button
   * sits on (null: none of its items is a notice; the transcript shows the
   * button at its end). */
  resume: ReadonlySignal<{ run: Run; anchor: string | null } | null>;
  /** Runs stopped part-way: their open text is not streaming. */
  stalled: ReadonlySignal<Set<string>>;
}
export const TranscriptCtx = createContext<TranscriptEnv | null>(null);

/** "14:03", or "21 Nov, 14:03" for another day. */
function when(t: number): string {
  const d = new Date(t);
  const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString([], { day: "numeric", month: "short" })}, ${time}`;
}

/** A message's time and its Copy button (the text as written: markdown
 * for the agent's). Shown on hover or keyboard focus; the button is always
 * in the tab order. */
function MessageActions({ item, children }: { item: Item; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  useEffect(() => {
    if (copied === null) return;
    const timer = setTimeout(() => setCopied(null), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  const t = parseTime(item.created_at);
  const label = copied === true ? "Copied" : copied === false ? "Copy failed" : "Copy message";
  return (
    <div class="msg-actions">
      <button
        type="button"
        class={"msg-copy" + (copied ? " done" : "")}
        data-testid="copy-message"
        aria-label={label}
        title={label}
        onClick={() => void copyText(item.text ?? "").then(setCopied)}
      >
        {copied ? <ICheck size={14} /> : <ICopy size={14} />}
      </button>
      <MessageUsage item={item} />
      <BranchButton item={item} />
      {item.run_id && <JournalButton runId={item.run_id} variant="icon" />}
      {children}
      {t != null && (
        <time class="msg-time" data-testid="message-time" dateTime={item.created_at} title={new Date(t).toLocaleString()}>
          {when(t)}
        </time>
      )}
      <span class="t-sr-only" aria-live="polite">{copied === true ? "Copied" : ""}</span>
    </div>
  );
}

function UserMessage({ item }: { item: Item }) {
  // Someone else's message is signed with their name; one's own is not.
  const me = useStore().account.me.value?.principal?.name;
  const [editing, setEditing] = useState(false);
  if (editing) return <EditMessage item={item} onDone={() => setEditing(false)} />;
  return (
    <div class={"msg-user" + (item.steer || item.continuation ? " msg-steer" : "") + (item.pending ? " msg-pending" : "")} data-steer={item.steer ? "true" : undefined}
      data-pending={item.pending ? "true" : undefined} data-continuation={item.continuation || undefined}>
      {item.steer && (
        <div class="msg-steer-note" data-testid="steer-note">
          {item.pending ? "Steer pending: will reach the agent after the current step" : "Steered into the running turn"}
        </div>
      )}
      {item.continuation && (
        <div class="msg-steer-note" data-testid="continuation-note">
          {item.continuation === 1 ? "Goal: first run" : `Goal: continuation ${item.continuation}`}
        </div>
      )}
      {item.by && item.by !== me && <div class="msg-author" data-testid="message-author">{item.by}</div>}
      {item.text && !item.pending ? <MessageActions item={item}><UserVersionActions item={item} onEdit={() => setEditing(true)} /></MessageActions> : null}
      {item.versions && <VersionNav item={item} />}
      {item.attachments?.length ? (
        <div class="msg-user-body">
          {item.text ? <div class="bubble">{item.text}</div> : null}
          <MessageAttachments items={item.attachments} />
        </div>
      ) : (
        <div class="bubble">{item.text ?? ""}</div>
      )}
      {item.queued && <QueuedNote runId={item.run_id} />}
    </div>
  );
}

function AssistantMessage({ item }: { item: Item }) {
  const env = useContext(TranscriptCtx);
  // Open text of a run that stopped part-way is not coming any more.
  const stalled = !!item.open && !!env?.stalled.value.has(item.run_id);
  const open = !!item.open && !stalled;
  const text = item.text ?? "";
  // Announce once, when a message we saw streaming finishes (not replays).
  const wasOpen = useRef(open);
  useEffect(() => {
    // A message cut short (its runner stopped) is not an answer to read out.
    if (wasOpen.current && !open && text && !stalled && !item.partial) env?.announce(text);
    wasOpen.current = open;
  }, [open]);
  if (item.superseded) return <SupersededText text={text} />;
  return (
    <div class="msg-assistant">
      {text ? <Markdown text={text} streaming={open} /> : open ? <span class="typing" aria-label="Writing"><i /><i /><i /></span> : null}
      {(item.partial || stalled) && <div class="cut-note">Cut short {item.partial && <ContinueButton runId={item.run_id} />}</div>}
      {text ? <MessageActions item={item} /> : null}
    </div>
  );
}

/** Text cut short when its runner stopped, answered again below: folded
 * away so the answer does not read twice, one click from view. */
function SupersededText({ text }: { text: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div class="msg-assistant superseded" data-superseded="true">
      <button type="button" class="superseded-toggle" aria-expanded={shown} onClick={() => setShown(!shown)}>
        <IconChevron size={12} /> An attempt cut short when its runner stopped; the answer below replaces it
      </button>
      {shown && <div class="superseded-text"><Markdown text={text} streaming={false} /></div>}
    </div>
  );
}

function Reasoning({ item }: { item: Item }) {
  const env = useContext(TranscriptCtx);
  const stalled = !!item.open && !!env?.stalled.value.has(item.run_id);
  const open = !!item.open && !stalled;
  // null: follow the default (expanded while thinking, collapsed after).
  const [choice, setChoice] = useState<boolean | null>(null);
  const expanded = choice ?? open;
  // The folded duration (item.duration_ms), the same live and after a
  // reload; absent or 0 means unknown, and it reads just "Thought".
  const ms = open || !item.duration_ms || item.duration_ms <= 0 ? null : item.duration_ms;
  const label = open
    ? "Thinking…"
    : ms != null
      ? `Thought for ${fmtDuration(ms)}`
      : "Thought";
  const text = item.text ?? "";
  return (
    <div class={"reasoning" + (open ? " thinking" : "")}>
      <button type="button" class="reasoning-head" aria-expanded={expanded} onClick={() => setChoice(!expanded)}>
        <IconChevron size={13} class={"chev" + (expanded ? " open" : "")} />
        <IconBrain size={14} />
        <span class={open ? "shimmer" : ""}>{label}</span>
        {(item.partial || stalled) && <span class="cut-note">cut short</span>}
      </button>
      {expanded && text && (
        <div class="reasoning-body">
          <Markdown text={text} streaming={open} />
        </div>
      )}
    </div>
  );
}

/** "Expired after 10m" from run.done's message "Expired after 10m: …";
 * a message of another shape (an older server) reads "Expired". */
export function expiredHeadline(msg: string | undefined): string {
  const head = (msg ?? "").split(": ")[0];
  return head.startsWith("Expired after ") ? head : "Expired";
}

function expiredDetail(msg: string | undefined): string {
  const i = (msg ?? "").indexOf(": ");
  return msg && i >= 0 ? " — " + msg.slice(i + 2) : "";
}

function RunEnd({ item }: { item: Item }) {
  const status = item.status ?? "";
  const me = useStore().account.me.value?.principal?.name;
  return (
    <div class={"run-end run-end-" + status + " " + toneClass(status)}>
      {/* The status alone is announced and read; the journal button is
          beside it, not in it. */}
      <span class="run-end-status" data-testid="run-end" data-status={status} role="status">
      {status === "cancelled" ? (
        <>
          <IconStop size={14} /> <span>Stopped{item.by && item.by !== me ? ` by ${item.by}` : ""}</span>
        </>
      ) : status === "failed" ? (
        <>
          <IconAlert size={14} />
          <span class="run-end-text">
            <strong>Run failed</strong>
            {item.error && (
              <>
                {" "}<code>{item.error.code}</code> {item.error.message}
              </>
            )}
          </span>
        </>
      ) : status === "expired" ? (
        <>
          {/* The run's deadline passed (h17-expiry): the server's message
              leads with "Expired after 10m", the rest says when. */}
          <IconClock size={14} />
          <span class="run-end-text">
            <strong>{expiredHeadline(item.error?.message)}</strong>
            {expiredDetail(item.error?.message)}
          </span>
        </>
      ) : (
        <>
          <IconInfo size={14} /> <span>Run {status}{item.error ? `: ${item.error.message}` : ""}</span>
        </>
      )}
      </span>
      {item.run_id && <JournalButton runId={item.run_id} variant="text" />}
    </div>
  );
}

function Compaction({ item }: { item: Item }) {
  const c = item.compaction;
  const [open, setOpen] = useState(false);
  if (!c) return <Unknown item={item} />;
  const n = c.covered_messages || Math.max(0, c.original_count - c.compacted_count + 1);
  return (
    <div class="compaction">
      <div class="divider">
        <button type="button" class="divider-label" aria-expanded={open} onClick={() => setOpen(!open)} disabled={!c.summary}>
          <IconLayers size={13} />
          <span>
            Context compacted — {n} message{n === 1 ? "" : "s"} summarised, {tokens(c.tokens_saved)} tokens saved
          </span>
          {c.summary && <IconChevron size={12} class={"chev" + (open ? " open" : "")} />}
        </button>
      </div>
      {open && c.summary && (
        <div class="compaction-summary">
          <Markdown text={c.summary} />
        </div>
      )}
    </div>
  );
}

function Notice({ item }: { item: Item }) {
  const env = useContext(TranscriptCtx);
  // Diagnostics say "warn" or "warning"; they look the same.
  const level = (item.level as string) === "warn" ? "warning" : item.level ?? "info";
  const resume = env?.resume.value;
  return (
    <>
      <div class={"notice notice-" + level} title={item.code} data-code={item.code}>
        {level === "info" ? <IconInfo size={13} /> : <IconAlert size={13} />}
        <span>{item.text ?? item.code ?? ""}</span>
      </div>
      {item.details && Object.keys(item.details).length > 0 && <NoticeDetails code={item.code} details={item.details} />}
      {resume && resume.anchor === item.id && <ResumeBar key={resume.run.id + ":" + resume.run.status} run={resume.run} cause={item} />}
    </>
  );
}

/** The technical side of a notice (runner, last journal position, error
 * code), one click away from the plain-words text. */
function NoticeDetails({ code, details }: { code?: string; details: Record<string, unknown> }) {
  return (
    <details class="notice-details" data-testid="notice-details">
      <summary>Details</summary>
      <dl>
        {code && (<><dt>code</dt><dd>{code}</dd></>)}
        {Object.entries(details).map(([k, v]) => (
          <Fragment key={k}><dt>{k}</dt><dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd></Fragment>
        ))}
      </dl>
    </details>
  );
}

/** What an interrupted or recovering run offers: resume it now. The button
 * stays disabled after a click until the run's status moves on (then the
 * bar goes) or the server refuses (the toast says why). */
export function ResumeBar({ run, cause }: { run: Run; cause?: Item }) {
  if (run.status === "paused") return <PausedBar run={run} cause={cause} />;
  return <StoppedBar run={run} />;
}

function StoppedBar({ run }: { run: Run }) {
  const store = useStore();
  const [busy, setBusy] = useState(false);
  const recovering = run.status === "recovering";
  const operate = store.account.permissions.value.operate;
  useRetryTick(run);
  const resume = async () => {
    setBusy(true);
    if (await store.resume(run.id)) setBusy(false);
  };
  return (
    <div class={"resume-bar resume-" + run.status} data-testid="resume-bar" data-run-id={run.id} data-status={run.status}>
      <span class="resume-text">
        {recovering
          ? `${recoveringText(run)}. Resume now to skip the wait.`
          : "This run stopped before it finished. Resume continues from where its journal ends; nothing that finished runs again."}
      </span>
      {operate && (
        <button type="button" class="btn btn-sm btn-primary resume-btn" data-testid="resume-run" disabled={busy} aria-busy={busy} onClick={() => void resume()}>
          <IconPlay size={12} /> {busy ? "Resuming…" : recovering ? "Resume now" : "Resume"}
        </button>
      )}
    </div>
  );
}

function Unknown({ item }: { item: Item }) {
  let s: string;
  try {
    s = JSON.stringify(item);
  } catch {
    s = String(item.kind);
  }
  return <div class="unknown-item">{s.length > 600 ? s.slice(0, 600) + "…" : s}</div>;
}

function Body({ item }: { item: Item }) {
  switch (item.kind) {
    case "user": return <UserMessage item={item} />;
    case "assistant": return <AssistantMessage item={item} />;
    case "reasoning": return <Reasoning item={item} />;
    case "tool_call": return item.tool ? <ToolCard tool={item.tool} runId={item.run_id} /> : <Unknown item={item} />;
    case "run_end": return <RunEnd item={item} />;
    case "compaction": return <Compaction item={item} />;
    case "notice": return <Notice item={item} />;
    default: return <Unknown item={item} />;
  }
}

/** Keeps one malformed item from taking the whole transcript down. */
class ItemBoundary extends Component<{ item: Item; children: ComponentChildren }, { failed: boolean }> {
  state = { failed: false };
  componentDidCatch(err: unknown) {
    console.error("transcript item failed to render", this.props.item.id, err);
    this.setState({ failed: true });
  }
  render() {
    return this.state.failed ? <Unknown item={this.props.item} /> : this.props.children;
  }
}

export function ItemView({ model }: { model: ItemModel }) {
  const item = model.sig.value;
  return (
    <div
      class={"ti ti-" + item.kind + (item.open ? " ti-open" : "") + (item.replay ? " ti-replay" : "")}
      data-testid="item"
      data-kind={item.kind}
      data-item-id={item.id}
      data-open={item.open ? "true" : undefined}
    >
      <ItemBoundary item={item}>
        <Body item={item} />
      </ItemBoundary>
    </div>
  );
}

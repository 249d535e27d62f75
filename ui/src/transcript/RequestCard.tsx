// The card for a human request: an approval (run this exact action?) or a
// clarify question. Used inside tool cards and by the shell's "needs you"
// panel. It answers through store.respond and then waits, buttons disabled,
// for the resolving event to move the request out of `pending`.

import { useState } from "preact/hooks";
import type { ApprovalInfo, ApprovalPrompt, ClarifyPrompt, HumanRequest } from "../state/types";
import type { ActionError } from "../state/contract";
import { useStore } from "../state/context";
import { fmtDuration, fmtElapsed, parseTime, useNow } from "./util";
import { IconQuestion, IconShield } from "./icons";

export const CHOICE_LABELS: Record<string, string> = {
  once: "Allow once",
  session: "Allow for this session",
  always: "Always allow",
  deny: "Deny",
};

/** How an approval was settled, in words: the same on the request card,
 * the tool card and the activity tree, live and after a reload (all read
 * the folded outcome, ApprovalInfo). `me` is the name of whoever looks:
 * their own answer, or one nobody is named for, reads "by you". */
export function approvalText(a: ApprovalInfo, me?: string): string {
  const who = !a.by || a.by === me ? "you" : a.by;
  switch (a.outcome) {
    case "once": return `allowed once by ${who}`;
    case "session": return `allowed for this session by ${who}`;
    case "always": return `always allowed by ${who}`;
    case "deny": return a.note ? `denied by ${who}: “${a.note}”` : `denied by ${who}`;
    case "expired": return "expired";
    case "cancelled": return "cancelled";
    case "rule": return a.pattern ? `allowed by rule ${a.pattern}` : "allowed by a remembered rule";
    default: return a.outcome;
  }
}

/** "waited 12s for approval": the wait for a person, shown apart from the
 * call's own duration. Empty when nobody was asked. */
export function waitText(waitMs: number | undefined, tool: string): string {
  if (!waitMs || waitMs <= 0) return "";
  return `waited ${fmtDuration(waitMs)} for ${tool === "clarify" ? "an answer" : "approval"}`;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const RISK_LABELS: Record<string, string> = {
  dangerous_command: "Dangerous command",
  unparsed_command: "Unreadable command",
  network_private: "Private network",
  side_effect: "Side effect",
};

function riskClass(risk: string): string {
  if (risk === "dangerous_command") return "risk-danger";
  if (risk === "unparsed_command" || risk === "network_private") return "risk-warn";
  return "risk-info";
}

function errorText(e: ActionError): string {
  if (e.code === "not_pending") return "Already answered";
  if (e.code === "not_found") return "This request no longer exists";
  return e.message || e.code;
}

/** "Expires in 4:32" while the request has a deadline. */
function Expiry({ at }: { at: string | null }) {
  const deadline = parseTime(at);
  const now = useNow(deadline != null);
  if (deadline == null) return null;
  const left = deadline - now;
  if (left <= 0) return <span class="req-expiry expired">Expired</span>;
  const s = Math.ceil(left / 1000);
  const text = s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : fmtElapsed(left);
  return (
    <span class={"req-expiry" + (s <= 30 ? " soon" : "")} title={`Expires at ${new Date(deadline).toLocaleTimeString()}`}>
      Expires in {text}
    </span>
  );
}

/** The outcome line of a request that is no longer pending. */
export function RequestOutcome({ req }: { req: HumanRequest }) {
  let text: string;
  let cls = "";
  if (req.status === "resolved") {
    if (req.kind === "approval") {
      text = capitalize(approvalText({ outcome: req.response || "deny" }));
      cls = req.response === "deny" ? "outcome-deny" : "outcome-ok";
    } else {
      text = `Answered: ${req.response ?? ""}`;
      cls = "outcome-ok";
    }
  } else if (req.status === "expired") {
    text = req.kind === "approval" ? capitalize(approvalText({ outcome: "expired" })) : "Expired without an answer";
    cls = "outcome-deny";
  } else if (req.status === "cancelled") {
    text = "Cancelled";
  } else {
    text = "Answered";
  }
  return <div class={"req-outcome " + cls} data-testid="request-outcome">{text}</div>;
}

function useRespond(req: HumanRequest) {
  const store = useStore();
  const [sending, setSending] = useState<string | null>(null);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const respond = async (body: { choice?: string; answer?: string; note?: string }, key: string) => {
    if (sending || sent) return;
    setSending(key);
    setError(null);
    const err = await store.respond(req.id, body);
    setSending(null);
    if (err) {
      setError(errorText(err));
      // A request someone else answered stays locked; other errors retry.
      if (err.code === "not_pending") setSent(true);
    } else {
      setSent(true);
    }
  };
  // A viewer sees the request but cannot answer it.
  const operate = store.account.permissions.value.operate;
  return { respond, sending, locked: sending != null || sent, sent, error, operate };
}

/** In place of the answer buttons for someone who may only read. */
function ReadOnlyNote() {
  return <div class="req-note" data-testid="request-readonly">An operator answers this; your role may only read.</div>;
}

function ApprovalBody({ req, p }: { req: HumanRequest; p: ApprovalPrompt }) {
  const { respond, sending, locked, sent, error, operate } = useRespond(req);
  const remembers = p.pattern && p.choices.some((c) => c === "session" || c === "always");
  // "Deny with note…": the note is what the agent gets instead of a bare no.
  const [noting, setNoting] = useState(false);
  const [note, setNote] = useState("");
  return (
    <>
      <div class="req-head">
        <IconShield size={15} />
        <span class="req-title">Approval needed</span>
        <span class="req-tool">{p.tool}</span>
        {p.risk && <span class={"risk-badge " + riskClass(p.risk)} data-risk={p.risk}>{RISK_LABELS[p.risk] ?? p.risk}</span>}
        <Expiry at={p.expires_at ?? req.expires_at} />
      </div>
      <pre class="req-action" data-testid="approval-action">{p.action}</pre>
      {p.reason && <div class="req-reason">{p.reason}</div>}
      {!operate ? <ReadOnlyNote /> : <div class="req-buttons" role="group" aria-label="Approve or deny">
        {p.choices.map((c) => (
          <button
            type="button"
            key={c}
            data-choice={c}
            class={"rc-btn " + (c === "deny" ? "rc-danger" : c === "once" ? "rc-primary" : "rc-secondary")}
            disabled={locked}
            aria-busy={sending === c ? "true" : undefined}
            onClick={() => respond({ choice: c }, c)}
          >
            {sending === c && <span class="t-spin" aria-hidden="true" />}
            {CHOICE_LABELS[c] ?? c}
          </button>
        ))}
        {p.choices.includes("deny") && !noting && (
          <button type="button" class="rc-btn rc-secondary" data-testid="deny-note-open" disabled={locked} onClick={() => setNoting(true)}>
            Deny with note…
          </button>
        )}
      </div>}
      {operate && noting && (
        <form
          class="req-free req-deny-note"
          data-testid="deny-note"
          onSubmit={(e) => {
            e.preventDefault();
            if (note.trim()) void respond({ choice: "deny", note: note.trim() }, "deny-note");
          }}
        >
          <input
            type="text"
            class="rc-input"
            data-testid="deny-note-input"
            aria-label="What the agent should do instead"
            placeholder="Do this instead…"
            value={note}
            disabled={locked}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
            autoFocus
          />
          <button type="submit" class="rc-btn rc-danger" data-testid="deny-note-send" disabled={locked || !note.trim()} aria-busy={sending === "deny-note" ? "true" : undefined}>
            {sending === "deny-note" && <span class="t-spin" aria-hidden="true" />}
            Deny
          </button>
          <button type="button" class="rc-btn rc-secondary" disabled={locked} onClick={() => setNoting(false)}>Cancel</button>
        </form>
      )}
      {operate && remembers && (
        <div class="req-pattern">
          “Allow for this session” and “Always allow” remember <code>{p.pattern}</code>
        </div>
      )}
      {sent && !error && <div class="req-note">Answer sent, waiting for the agent…</div>}
      {error && <div class="req-error" role="alert">{error}</div>}
    </>
  );
}

function ClarifyBody({ req, p }: { req: HumanRequest; p: ClarifyPrompt }) {
  const { respond, sending, locked, sent, error, operate } = useRespond(req);
  const [text, setText] = useState("");
  const submit = (e: Event) => {
    e.preventDefault();
    const answer = text.trim();
    if (answer) respond({ answer }, "\u0000free");
  };
  return (
    <>
      <div class="req-head">
        <IconQuestion size={15} />
        <span class="req-title">Question</span>
        <Expiry at={p.expires_at ?? req.expires_at} />
      </div>
      <div class="req-question">{p.question}</div>
      {!operate && <ReadOnlyNote />}
      {operate && p.choices && p.choices.length > 0 && (
        <div class="req-buttons" role="group" aria-label="Suggested answers">
          {p.choices.map((c) => (
            <button
              type="button"
              key={c}
              data-choice={c}
              class="rc-btn rc-secondary"
              disabled={locked}
              aria-busy={sending === c ? "true" : undefined}
              onClick={() => respond({ choice: c }, c)}
            >
              {sending === c && <span class="t-spin" aria-hidden="true" />}
              {c}
            </button>
          ))}
        </div>
      )}
      {operate && <form class="req-free" onSubmit={submit}>
        <input
          type="text"
          data-testid="clarify-input"
          class="rc-input"
          placeholder={p.choices?.length ? "Or type your own answer…" : "Type your answer…"}
          aria-label="Your answer"
          value={text}
          disabled={locked}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" data-testid="clarify-submit" class="rc-btn rc-primary" disabled={locked || !text.trim()}>
          {sending === "\u0000free" && <span class="t-spin" aria-hidden="true" />}
          Answer
        </button>
      </form>}
      {sent && !error && <div class="req-note">Answer sent, waiting for the agent…</div>}
      {error && <div class="req-error" role="alert">{error}</div>}
    </>
  );
}

export function RequestCard({ req }: { req: HumanRequest }) {
  const approval = req.kind === "approval";
  const pending = req.status === "pending";
  const p = req.prompt;
  const danger = approval && (p as ApprovalPrompt).risk === "dangerous_command";
  return (
    <div
      class={"req " + (approval ? "req-approval" : "req-clarify") + (danger ? " req-danger" : "") + (pending ? "" : " req-resolved")}
      data-testid={approval ? "approval-card" : "clarify-card"}
      data-request-id={req.id}
      data-status={req.status}
      role="group"
      aria-label={approval ? "Approval request" : "Question from the agent"}
    >
      {!pending ? (
        <>
          <div class="req-head">
            {approval ? <IconShield size={15} /> : <IconQuestion size={15} />}
            <span class="req-title">{approval ? "Approval" : "Question"}</span>
          </div>
          {approval
            ? <pre class="req-action">{(p as ApprovalPrompt).action}</pre>
            : <div class="req-question">{(p as ClarifyPrompt).question}</div>}
          <RequestOutcome req={req} />
        </>
      ) : approval ? (
        <ApprovalBody req={req} p={p as ApprovalPrompt} />
      ) : (
        <ClarifyBody req={req} p={p as ClarifyPrompt} />
      )}
    </div>
  );
}

/** The approval line of a tool card: how its approval was settled and how
 * long the call waited for it. */
export function ApprovalLine({ approval, waitMs, tool }: { approval?: ApprovalInfo; waitMs?: number; tool: string }) {
  const me = useStore().account.me.value?.principal?.name;
  const wait = waitText(waitMs, tool);
  if (!approval && !wait) return null;
  const text = [approval ? approvalText(approval, me) : "", wait].filter(Boolean).join(" · ");
  const deny = approval && approval.outcome !== "once" && approval.outcome !== "session" && approval.outcome !== "always" && approval.outcome !== "rule";
  return (
    <div class={"tool-approval" + (deny ? " outcome-deny" : "")} data-testid="tool-approval" data-outcome={approval?.outcome}>
      {capitalize(text)}
    </div>
  );
}

/** Shown in a tool card whose request is no longer pending but whose status
 * has not moved on yet (the resolving event is on its way). */
export function RequestAnswered() {
  return (
    <div class="req-outcome req-wait">
      <span class="t-spin" aria-hidden="true" /> Answered, waiting for the agent…
    </div>
  );
}

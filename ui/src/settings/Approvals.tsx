// Settings → Approvals (issue 16, h16-policy): the approval policy in one
// place. The server's default mode and each profile's (admins change a
// profile's); the remembered rules, with where each came from (operators
// add and delete them); and the log of how the policy settled each call
// with an effect — by the mode, a rule, a person or the policy itself —
// each row opening its session. A table on wide screens, cards on a phone.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import type { Profile } from "../state/types";
import { ConfirmDialog } from "../shell/Dialog";
import { ago } from "../shell/format";
import { openPage, useView, type ViewState } from "../shell/view";
import { APPROVAL_TEXT, loadProfiles } from "./Profiles";

interface Actor { kind: string; name: string }

export interface Rule {
  id: string; tool: string; pattern: string; scope: "always" | "session"; session_id?: string;
  created_at: string; created_by?: Actor; request_id?: string;
}

export interface Decision {
  id: number; at: string; session_id: string; run_id: string; tool_call_id: string; tool: string;
  action: string; risk: string; mode: string; profile_id: string;
  outcome: "allowed" | "denied" | "expired";
  decided_by: "mode" | "policy" | "rule" | "person" | "timeout";
  rule_id?: string; pattern?: string; request_id?: string; choice?: string; by?: Actor;
}

interface DecisionPage { decisions: Decision[]; next: string }

const MODES = ["manual", "smart", "off"] as const;
const PAGE = 50;

export function ApprovalsPage() {
  return (
    <div class="settings-section" data-testid="approvals-page">
      <p class="page-lead">
        Before a tool call with an effect runs, the approval policy lets it run, asks a person, or refuses it. Here: how
        much each agent asks, the answers remembered as rules, and who or what decided each call.
      </p>
      <Modes />
      <Rules />
      <Decisions />
    </div>
  );
}

function Modes() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const mode = useSignal<string>("");
  const profiles = useSignal<Profile[] | null>(null);
  const error = useSignal<string | null>(null);
  const load = async () => {
    const [m, list] = await Promise.all([store.api.get<{ default_mode: string }>("/api/approvals/mode"), loadProfiles(store)]);
    if (m.ok) mode.value = m.value.default_mode;
    profiles.value = list;
    if (!m.ok || !list) error.value = "The approval modes could not be loaded.";
  };
  useEffect(() => void load(), []);
  const change = async (p: Profile, v: string) => {
    const r = await store.api.patch<Profile>(`/api/profiles/${p.id}`, { approval_mode: v });
    error.value = r.ok ? null : r.error.message;
    await load();
  };
  return (
    <section class="card policy-block" aria-labelledby="policy-modes-h" data-testid="approval-modes">
      <h3 id="policy-modes-h" class="policy-h">Modes</h3>
      <p class="page-note">
        The server’s default is <strong data-testid="default-mode">{mode.value || "…"}</strong> (<code>--approval-mode</code>);
        a profile may set its own. Manual asks before every call with an effect, smart before risky ones, off only before dangerous commands.
      </p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      {profiles.value && profiles.value.length === 0 && <p class="page-note">No profiles: every session takes the default.</p>}
      <ul class="policy-modes">
        {profiles.value?.map((p) => (
          <li key={p.id} class="policy-mode" data-testid="profile-mode" data-id={p.id}>
            <span class="policy-dot" style={{ background: p.color || "var(--fg-muted)" }} aria-hidden="true" />
            <span class="policy-name">{p.name}{p.default && <span class="scope-badge">default</span>}</span>
            {admin ? (
              <select class="input" aria-label={`Approval mode of ${p.name}`} data-testid="profile-mode-select" value={p.approval_mode} autocomplete="off"
                onChange={(e) => void change(p, e.currentTarget.value)}>
                {(["", ...MODES] as Profile["approval_mode"][]).map((m) => (
                  <option key={m} value={m}>{m === "" ? `Server default (${mode.value})` : APPROVAL_TEXT[m]}</option>
                ))}
              </select>
            ) : (
              <span class="proc-sub" data-testid="profile-mode-text">{p.approval_mode ? APPROVAL_TEXT[p.approval_mode] : `Server default (${mode.value})`}</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function who(a?: Actor): string {
  if (!a) return "";
  return a.kind === "local" ? "local access" : a.name || a.kind;
}

function Rules() {
  const store = useStore();
  const operate = store.account.permissions.value.operate;
  const rules = useSignal<Rule[] | null>(null);
  const error = useSignal<string | null>(null);
  const deleting = useSignal<Rule | null>(null);
  const tool = useSignal("run_command");
  const pattern = useSignal("");
  const session = useSignal("");
  const tools = useSignal<string[]>([]);
  const view = useView();
  const load = async () => {
    const r = await store.api.get<{ rules: Rule[] }>("/api/rules");
    if (r.ok) rules.value = r.value.rules;
    else error.value = r.error.message;
  };
  useEffect(() => {
    void load();
    void store.api.get<{ tools: { name: string }[] }>("/api/tools").then((r) => r.ok && (tools.value = r.value.tools.map((t) => t.name)));
  }, []);
  const add = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, string> = { tool: tool.value.trim(), pattern: pattern.value };
    if (session.value.trim()) body.session_id = session.value.trim();
    const r = await store.api.post<Rule>("/api/rules", body);
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    error.value = null;
    pattern.value = "";
    session.value = "";
    await load();
  };
  const remove = async (ru: Rule) => {
    deleting.value = null;
    const r = await store.api.del(`/api/rules/${ru.id}`);
    if (!r.ok && r.error.code !== "not_found") error.value = r.error.message;
    await load();
  };
  const now = view.now.value;
  return (
    <section class="card policy-block" aria-labelledby="policy-rules-h" data-testid="approval-rules">
      <h3 id="policy-rules-h" class="policy-h">Remembered rules</h3>
      <p class="page-note">
        A rule answers “yes” in a person’s place when the policy would ask about a call it matches — never for dangerous or
        unreadable commands. In a pattern <code>*</code> matches any text (in commands, not <code>; &amp; | $</code> and the
        like); <code>\*</code> is a star.
      </p>
      {error.value && <p class="form-error" role="alert" data-testid="rules-error">{error.value}</p>}
      {operate && (
        <form class="form-row policy-add" onSubmit={(e) => void add(e)} data-testid="rule-form">
          <label class="field">
            <span class="field-label">Tool</span>
            <input class="input" list="policy-tools" required maxLength={64} value={tool.value} data-testid="rule-tool"
              onInput={(e) => (tool.value = e.currentTarget.value)} />
            <datalist id="policy-tools">{tools.value.map((t) => <option key={t} value={t} />)}</datalist>
          </label>
          <label class="field grow">
            <span class="field-label">Pattern</span>
            <input class="input mono" required maxLength={4096} placeholder="go test *" value={pattern.value} data-testid="rule-pattern"
              onInput={(e) => (pattern.value = e.currentTarget.value)} />
          </label>
          <label class="field">
            <span class="field-label">Session (optional)</span>
            <input class="input mono" placeholder="every session" value={session.value} data-testid="rule-session"
              onInput={(e) => (session.value = e.currentTarget.value)} />
          </label>
          <button type="submit" class="btn btn-primary" data-testid="rule-add">Add rule</button>
        </form>
      )}
      {rules.value === null ? (
        <p class="page-note">Loading…</p>
      ) : rules.value.length === 0 ? (
        <p class="page-note" data-testid="rules-empty">No rules yet. Answering “session” or “always” to a request, or adding one here, makes one.</p>
      ) : (
        <div class="proc-table policy-rules" role="table" aria-label="Remembered rules" data-testid="rule-list">
          <div class="proc-head" role="row">
            <span role="columnheader">Pattern</span>
            <span role="columnheader">Tool</span>
            <span role="columnheader">Holds for</span>
            <span role="columnheader">From</span>
            <span role="columnheader"><span class="sr-only">Actions</span></span>
          </div>
          {rules.value.map((ru) => (
            <div key={ru.id} class="proc-row" role="row" data-testid="rule-row" data-id={ru.id}>
              <span class="proc-cmd" role="cell"><code>{ru.pattern}</code><span class="proc-sub mono">{ru.id}</span></span>
              <span class="proc-sub" role="cell">{ru.tool}</span>
              <span class="proc-sub" role="cell">
                {ru.scope === "session" ? <>this session: <button type="button" class="linkish mono" onClick={() => openRun(store, view, ru.session_id!, "")}>{ru.session_id}</button></> : "every session"}
              </span>
              <span class="proc-sub" role="cell" title={ru.created_at} data-testid="rule-origin">
                {ru.request_id ? `answered “${ru.scope}” by ${who(ru.created_by) || "a person"}` : ru.created_by ? `added by ${who(ru.created_by)}` : "added"}
                {" · "}{ago(ru.created_at, now)}
              </span>
              <span class="proc-actions" role="cell">
                {operate && <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="rule-delete" onClick={() => (deleting.value = ru)}>Delete</button>}
              </span>
            </div>
          ))}
        </div>
      )}
      {deleting.value && (
        <ConfirmDialog
          title="Delete this rule?"
          body={<>Calls matching “{deleting.value.pattern}” ({deleting.value.tool}) will ask again.</>}
          confirmLabel="Delete rule"
          confirmTestId="confirm-rule-delete"
          cancelTestId="cancel-rule-delete"
          onCancel={() => (deleting.value = null)}
          onConfirm={() => void remove(deleting.value!)}
        />
      )}
    </section>
  );
}

/** Opens a session, scrolled to the call when it is on screen. */
function openRun(store: Store, view: ViewState, sessionID: string, toolCallID: string) {
  if (toolCallID) view.focusItem.value = { session: sessionID, item: toolCallID };
  store.selectSession(sessionID);
  openPage(view, "chat");
}

const BY_TEXT: Record<Decision["decided_by"], string> = {
  mode: "mode", policy: "policy", rule: "rule", person: "person", timeout: "timeout",
};

function decidedBy(d: Decision): string {
  switch (d.decided_by) {
    case "mode": return `the ${d.mode} mode`;
    case "policy": return "the policy (refused in every mode)";
    case "rule": return `rule “${d.pattern ?? ""}”`;
    case "person": return `${who(d.by) || "a person"} (${d.choice ?? ""})`;
    case "timeout": return "nobody answered in time";
  }
  return d.decided_by;
}

function Decisions() {
  const store = useStore();
  const view = useView();
  const rows = useSignal<Decision[] | null>(null);
  const next = useSignal("");
  const error = useSignal<string | null>(null);
  const outcome = useSignal("");
  const profile = useSignal("");
  const session = useSignal("");
  const from = useSignal("");
  const profiles = useSignal<Profile[]>([]);
  const query = (cursor: string) => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (outcome.value) q.set("outcome", outcome.value);
    if (profile.value) q.set("profile", profile.value);
    if (session.value.trim()) q.set("session", session.value.trim());
    if (from.value) q.set("from", new Date(from.value).toISOString());
    if (cursor) q.set("cursor", cursor);
    return "/api/approvals/decisions?" + q.toString();
  };
  const load = async (cursor = "") => {
    const r = await store.api.get<DecisionPage>(query(cursor));
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    error.value = null;
    rows.value = cursor && rows.value ? rows.value.concat(r.value.decisions) : r.value.decisions;
    next.value = r.value.next;
  };
  useEffect(() => void loadProfiles(store).then((l) => l && (profiles.value = l)), []);
  useEffect(() => void load(), [outcome.value, profile.value, session.value, from.value]);
  const names = new Map(profiles.value.map((p) => [p.id, p.name]));
  const now = view.now.value;
  return (
    <section class="card policy-block" aria-labelledby="policy-log-h" data-testid="approval-decisions">
      <div class="policy-h-row">
        <h3 id="policy-log-h" class="policy-h">Decisions</h3>
        <button type="button" class="btn btn-sm" data-testid="decisions-refresh" onClick={() => void load()}>Refresh</button>
      </div>
      <div class="logs-bar">
        <label class="field">
          <span class="field-label">Outcome</span>
          <select class="input" data-testid="decisions-outcome" value={outcome.value} onChange={(e) => (outcome.value = e.currentTarget.value)}>
            <option value="">any</option><option value="allowed">allowed</option><option value="denied">denied</option><option value="expired">expired</option>
          </select>
        </label>
        <label class="field">
          <span class="field-label">Profile</span>
          <select class="input" data-testid="decisions-profile" value={profile.value} onChange={(e) => (profile.value = e.currentTarget.value)}>
            <option value="">any</option>
            {profiles.value.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </label>
        <label class="field grow">
          <span class="field-label">Session</span>
          <input class="input mono" placeholder="ses_…" data-testid="decisions-session" value={session.value}
            onChange={(e) => (session.value = e.currentTarget.value)} />
        </label>
        <label class="field">
          <span class="field-label">Since</span>
          <input class="input" type="datetime-local" data-testid="decisions-from" value={from.value} onChange={(e) => (from.value = e.currentTarget.value)} />
        </label>
      </div>
      {error.value && <p class="form-error" role="alert" data-testid="decisions-error">{error.value}</p>}
      {rows.value === null ? (
        <p class="page-note">Loading…</p>
      ) : rows.value.length === 0 ? (
        <p class="page-note" data-testid="decisions-empty">No decisions{outcome.value || profile.value || session.value || from.value ? " match" : " yet"}.</p>
      ) : (
        <div class="proc-table policy-log" role="table" aria-label="Approval decisions" data-testid="decision-list">
          <div class="proc-head" role="row">
            <span role="columnheader">Call</span>
            <span role="columnheader">Outcome</span>
            <span role="columnheader">Decided by</span>
            <span role="columnheader">When</span>
            <span role="columnheader"><span class="sr-only">Open</span></span>
          </div>
          {rows.value.map((d) => (
            <div key={d.id} class="proc-row" role="row" data-testid="decision-row" data-id={d.id} data-outcome={d.outcome} data-by={d.decided_by}>
              <span class="proc-cmd" role="cell">
                <code>{d.action}</code>
                <span class="proc-sub">{d.tool}{d.risk && <> · <span class="mono">{d.risk}</span></>}{d.profile_id && <> · {names.get(d.profile_id) ?? d.profile_id}</>}</span>
              </span>
              <span class="proc-status" role="cell">
                <span class={"proc-badge policy-" + d.outcome} data-testid="decision-outcome">{d.outcome}</span>
              </span>
              <span class="proc-sub" role="cell" data-testid="decision-by"><span class="scope-badge">{BY_TEXT[d.decided_by] ?? d.decided_by}</span> {decidedBy(d)}</span>
              <span class="proc-sub" role="cell" title={d.at}>{ago(d.at, now)}</span>
              <span class="proc-actions" role="cell">
                <button type="button" class="btn btn-sm" data-testid="decision-open" title={`${d.session_id} · ${d.run_id}`}
                  onClick={() => openRun(store, view, d.session_id, d.tool_call_id)}>Open run</button>
              </span>
            </div>
          ))}
        </div>
      )}
      {next.value && <button type="button" class="btn" data-testid="decisions-more" onClick={() => void load(next.value)}>Older decisions</button>}
    </section>
  );
}

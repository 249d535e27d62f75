// The main column's header: session title and run status, model picker,
// token/context usage, connection dot, the global "needs you" bell, the
// theme switch and the activity toggle. Heights are fixed so nothing shifts
// while text streams. The run status sits under the title, so the title
// keeps the header's width for itself.

import { useStore } from "../state/context";
import { defaultModelLabel } from "../state/store";
import { resumableRun } from "../state/reducer";
import type { SessionState } from "../state/types";
import { recoveringText, statusText, tokens } from "./format";
import { answeredWaiting, waitingText } from "./waiting";
import { useRetryTick } from "./useRetryTick";
import { IActivity, IBell, IMenu } from "./icons";
import { AccountMenu } from "./Account";
import { NeedsYouPanel, pausedSessions } from "./NeedsYou";
import { ProfileChip } from "./ProfileChip";
import { toneClass } from "./status";
import { ThemeSwitch } from "./ThemeSwitch";
import { useView } from "./view";

/** The status the header shows: the busy run's, else "queued" while a run
 * waits to start, else "interrupted" while the latest run can be resumed,
 * else idle. */
export function runStatusOf(s: SessionState | null): string {
  if (!s) return "idle";
  const busy = s.busyRun.value;
  // Answered while parked: nobody needs to do anything but a runner.
  if (answeredWaiting(busy)) return "answered";
  if (busy) return busy.status;
  const runs = s.runs.value;
  if (runs.some((r) => r.status === "queued")) return "queued";
  return resumableRun(runs)?.status === "interrupted" ? "interrupted" : "idle";
}

/** The status in full, where the badge is short: a recovering run says
 * which retry comes when (the composer's status line shows it too). */
export function statusDetail(s: SessionState | null, status: string): string | undefined {
  const busy = s?.busyRun.value;
  if (status === "recovering" && busy) return recoveringText(busy);
  if (status === "answered" && busy) return waitingText(busy) || undefined;
  if (status === "queued") {
    const first = s?.runs.value.find((r) => r.status === "queued");
    return (first && waitingText(first)) || undefined;
  }
  return undefined;
}

export function Header() {
  const store = useStore();
  const view = useView();
  const s = store.active.value;
  const id = store.activeId.value;
  const session = id ? store.sessions.value.find((x) => x.id === id) : undefined;
  const status = runStatusOf(s);
  useRetryTick(s?.busyRun.value);

  return (
    <header class="header">
      <button
        type="button"
        class="icon-btn hdr-menu"
        data-testid="sidebar-toggle"
        aria-label="Sessions"
        aria-controls="sidebar"
        aria-expanded={view.sidebarOpen.value}
        onClick={() => (view.sidebarOpen.value = !view.sidebarOpen.value)}
      >
        <IMenu />
      </button>
      <div class="hdr-title-wrap">
        <h1 class={"hdr-title" + (session?.title ? "" : " placeholder")} title={session?.title || undefined}>
          {id ? session?.title || "New session" : "Caduceus"}
        </h1>
        {id && (
          <span class="hdr-sub">
            <span class={"badge badge-" + status + " " + toneClass(status)} data-testid="run-status" data-status={status} title={statusDetail(s, status)} role="status" aria-live="polite">
              <span class="dot" aria-hidden="true" />
              {statusText(status)}
            </span>
            {session?.workspace && (
              <span class="hdr-ws" data-testid="session-workspace" title={`Workspace: ${session.workspace}`}>
                {session.workspace.replace(/\/+$/, "").split("/").pop() || "/"}
              </span>
            )}
            {session && <ProfileChip sessionId={session.id} profileId={session.profile_id ?? ""} />}
          </span>
        )}
      </div>
      <div class="hdr-tools">
        {id && <ModelPicker />}
        {s && <Usage s={s} />}
        <Connection />
        <NeedsYouButton />
        <ThemeSwitch where="header" />
        <button
          type="button"
          class={"icon-btn" + (view.activityOpen.value ? " on" : "")}
          data-testid="activity-toggle"
          aria-label="Activity"
          title="Activity (what the agent is doing)"
          aria-pressed={view.activityOpen.value}
          aria-controls="activity-pane"
          onClick={() => (view.activityOpen.value = !view.activityOpen.value)}
        >
          <IActivity />
        </button>
        <AccountMenu />
      </div>
    </header>
  );
}

function ModelPicker() {
  const store = useStore();
  const id = store.activeId.value;
  const session = store.sessions.value.find((x) => x.id === id);
  const models = store.models.value;
  const value = session?.model ?? "";
  const providers = [...new Set(models.map((m) => m.provider))];
  // A model set elsewhere that this server does not list stays selectable.
  const unknown = value && !models.some((m) => m.ref === value);
  return (
    <label class="model-picker">
      <span class="sr-only">Model</span>
      <select
        data-testid="model-picker"
        value={value}
        disabled={!store.account.permissions.value.operate}
        title="Model for this session's next runs"
        onChange={(e) => void store.setModel(e.currentTarget.value)}
      >
        <option value="">{defaultModelLabel(store.meta.value)}</option>
        {unknown && <option value={value}>{value}</option>}
        {providers.map((p) => (
          <optgroup key={p} label={p}>
            {models.filter((m) => m.provider === p).map((m) => (
              <option key={m.ref} value={m.ref}>{m.label}</option>
            ))}
          </optgroup>
        ))}
      </select>
    </label>
  );
}

function Usage({ s }: { s: SessionState }) {
  const u = s.usage.value;
  const total = u.total.input_tokens + u.total.output_tokens;
  const pct = u.contextWindow > 0 && u.contextTokens > 0 ? Math.min(100, (u.contextTokens / u.contextWindow) * 100) : null;
  const level = pct === null ? "" : pct >= 80 ? " hot" : pct >= 60 ? " warm" : "";
  const detail = [
    `Input ${u.total.input_tokens.toLocaleString()} · output ${u.total.output_tokens.toLocaleString()} tokens`,
    u.total.cached_tokens ? `Cached ${u.total.cached_tokens.toLocaleString()}` : "",
    u.total.reasoning_tokens ? `Reasoning ${u.total.reasoning_tokens.toLocaleString()}` : "",
    u.total.cost_usd ? `Cost $${u.total.cost_usd.toFixed(4)}` : "",
    u.contextWindow ? `Context ${u.contextTokens.toLocaleString()} of ${u.contextWindow.toLocaleString()} tokens` : "",
    u.model ? `Model ${u.model}${u.provider && !u.model.startsWith(u.provider) ? ` (${u.provider})` : ""}` : "",
  ].filter(Boolean).join("\n");
  return (
    <div class={"usage" + level} data-testid="usage" title={detail}>
      <span class="usage-text">
        {tokens(total)} tok{u.total.cost_usd ? <span data-testid="usage-cost"> · ${u.total.cost_usd < 0.01 ? u.total.cost_usd.toFixed(4) : u.total.cost_usd.toFixed(2)}</span> : null}{pct !== null && <> · {pct < 1 && pct > 0 ? "<1" : Math.round(pct)}% ctx</>}
      </span>
      <span class="meter" aria-hidden="true"><span style={{ width: `${pct ?? 0}%` }} /></span>
      <span class="sr-only">{detail}</span>
    </div>
  );
}

const CONNECTION_TEXT = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", offline: "Offline" } as const;

function Connection() {
  const store = useStore();
  const c = store.connection.value;
  const loud = c === "reconnecting" || c === "offline";
  return (
    <span class={"conn conn-" + c} data-testid="connection" data-state={c} title={`Event stream: ${CONNECTION_TEXT[c]}`} role="status">
      <span class="dot" aria-hidden="true" />
      {loud ? <span class="conn-text">{CONNECTION_TEXT[c]}</span> : <span class="sr-only">{CONNECTION_TEXT[c]}</span>}
    </span>
  );
}

function NeedsYouButton() {
  const store = useStore();
  const view = useView();
  const n = store.pending.value.length + pausedSessions(store).length;
  return (
    <div class="needs-you-wrap">
      <button
        type="button"
        class={"icon-btn needs-you" + (n > 0 ? " has" : "")}
        data-testid="needs-you"
        data-count={n}
        aria-label={n ? `Needs you: ${n} waiting` : "Needs you: nothing waiting"}
        aria-haspopup="dialog"
        aria-expanded={view.needsYouOpen.value}
        onClick={() => (view.needsYouOpen.value = !view.needsYouOpen.value)}
      >
        <IBell />
        {n > 0 && <span class="count" aria-hidden="true">{n > 99 ? "99+" : n}</span>}
      </button>
      {view.needsYouOpen.value && <NeedsYouPanel />}
    </div>
  );
}

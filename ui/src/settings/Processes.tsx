// Settings → Processes: every background process of this server (the
// agent's, terminals', those a runner that died left behind) with its
// command, session, run, status and exit code; a live tail of its output;
// a kill after a confirmation. A table on wide screens, cards on a phone.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { ConfirmDialog } from "../shell/Dialog";
import { ago } from "../shell/format";
import { useView } from "../shell/view";
import { follow, killable, type OutputChunk, type ProcessList, type ProcessView } from "./ops";

/** How often the list is asked again while the section is open. */
const REFRESH_MS = 2000;
/** The most output a tail keeps on screen. */
const TAIL_CHARS = 200_000;

const STATUS_TEXT: Record<string, string> = {
  running: "running", starting: "starting", exited: "exited", killed: "killed", orphaned: "orphaned", elsewhere: "other host",
};

export function ProcessesPage() {
  const store = useStore();
  const list = useSignal<ProcessList | null>(null);
  const error = useSignal<string | null>(null);
  const open = useSignal<string | null>(null);
  const killing = useSignal<ProcessView | null>(null);
  const canKill = store.account.permissions.value.operate;

  const load = async () => {
    const r = await store.api.get<ProcessList>("/api/processes");
    if (r.ok) {
      list.value = r.value;
      error.value = null;
    } else if (r.error.code !== "unauthorized") error.value = r.error.message;
  };
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(t);
  }, []);

  const kill = async (p: ProcessView) => {
    killing.value = null;
    const r = await store.api.post<{ process: ProcessView }>(`/api/processes/${encodeURIComponent(p.id)}/kill`);
    if (!r.ok && r.error.code !== "not_found") error.value = r.error.message;
    await load();
  };

  const ps = list.value?.processes ?? null;
  return (
    <div class="settings-section" data-testid="processes-page">
      <p class="page-lead">
        The background processes the agent started, terminals’ shells, and what a runner that stopped left running.
        Follow a process’s output live, or kill it with everything it started.
      </p>
      {error.value && <p class="form-error" role="alert" data-testid="processes-error">{error.value}</p>}
      {ps === null ? (
        <p class="page-note">Loading…</p>
      ) : ps.length === 0 ? (
        <p class="page-note" data-testid="processes-empty">No background processes.</p>
      ) : (
        <div class="proc-table" role="table" aria-label="Background processes" data-testid="process-list">
          <div class="proc-head" role="row">
            <span role="columnheader">Command</span>
            <span role="columnheader">Status</span>
            <span role="columnheader">Session · run</span>
            <span role="columnheader">Started</span>
            <span role="columnheader"><span class="sr-only">Actions</span></span>
          </div>
          {ps.map((p) => (
            <ProcessRow key={p.id} p={p} open={open.value === p.id} canKill={canKill}
              onToggle={() => (open.value = open.value === p.id ? null : p.id)} onKill={() => (killing.value = p)} />
          ))}
        </div>
      )}
      {list.value && <p class="page-note" data-testid="processes-visibility">Shown here: {list.value.visibility}.</p>}
      {killing.value && (
        <ConfirmDialog
          title="Kill this process?"
          body={<>“{short(killing.value.command)}” (pid {killing.value.pid}) and every process it started get SIGTERM, then SIGKILL two seconds later.</>}
          confirmLabel="Kill process"
          confirmTestId="confirm-kill"
          cancelTestId="cancel-kill"
          onCancel={() => (killing.value = null)}
          onConfirm={() => void kill(killing.value!)}
        />
      )}
    </div>
  );
}

function short(s: string): string {
  return s.length > 80 ? s.slice(0, 79) + "…" : s;
}

function ProcessRow({ p, open, canKill, onToggle, onKill }: { p: ProcessView; open: boolean; canKill: boolean; onToggle: () => void; onKill: () => void }) {
  const view = useView();
  const now = view.now.value;
  const ended = p.exit_code !== null ? `exit ${p.exit_code}${p.signal ? ` (${p.signal})` : ""}` : "";
  return (
    <div class={"proc-row status-" + p.status} role="row" data-testid="process-row" data-id={p.id} data-status={p.status} data-pid={p.pid}>
      <span class="proc-cmd" role="cell">
        <code title={p.command}>{p.command}</code>
        <span class="proc-sub">
          <span class="scope-badge">{p.kind}</span> {p.id} · pid {p.pid || "—"}
        </span>
      </span>
      <span class="proc-status" role="cell">
        <span class={"proc-badge proc-" + p.status} data-testid="process-status">{STATUS_TEXT[p.status] ?? p.status}</span>
        {ended && <span class="proc-sub" data-testid="process-exit">{ended}</span>}
        {p.reason && <span class="proc-sub">{p.reason}</span>}
      </span>
      <span class="proc-where" role="cell">
        <span class="proc-sub mono">{p.session_id || "—"}</span>
        {p.run_id && <span class="proc-sub mono">{p.run_id}</span>}
      </span>
      <span class="proc-when proc-sub" role="cell" title={p.started_at}>{ago(p.started_at, now)}</span>
      <span class="proc-actions" role="cell">
        {p.output && (
          <button type="button" class="btn btn-sm" aria-expanded={open} data-testid="process-output-toggle" onClick={onToggle}>
            {open ? "Hide output" : "Output"}
          </button>
        )}
        {canKill && killable(p) && p.status !== "elsewhere" && (
          <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="process-kill" onClick={onKill}>Kill</button>
        )}
      </span>
      {open && <ProcessTail id={p.id} />}
    </div>
  );
}

/** The live tail of a process's output: the last 64 KiB, then everything
 * it writes until it ends. */
function ProcessTail({ id }: { id: string }) {
  const store = useStore();
  const text = useSignal("");
  const state = useSignal<"live" | "ended" | "error">("live");
  const note = useSignal<string | null>(null);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const ac = new AbortController();
    void follow(store.api, `/api/processes/${encodeURIComponent(id)}/log?follow=1`, ac.signal, (name, data) => {
      if (name === "output") {
        const c = data as OutputChunk;
        let t = text.peek() + (c.dropped > 0 ? `… ${c.dropped} bytes no longer kept …\n` : "") + c.output;
        if (t.length > TAIL_CHARS) t = t.slice(t.length - TAIL_CHARS);
        text.value = t;
      } else if (name === "end") {
        state.value = "ended";
      }
    }).then((err) => {
      if (err) {
        state.value = "error";
        note.value = err;
      }
    });
    return () => ac.abort();
  }, [id]);
  useEffect(() => {
    const el = pre.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text.value]);
  return (
    <div class="proc-tail" data-testid="process-tail" data-state={state.value}>
      <pre ref={pre} class="proc-output mono" data-testid="process-output" tabIndex={0} aria-label="Output">{text.value || (state.value === "live" ? "(no output yet)" : "")}</pre>
      <span class="proc-sub">{state.value === "live" ? "following live…" : state.value === "ended" ? "the process has ended" : note.value}</span>
    </div>
  );
}

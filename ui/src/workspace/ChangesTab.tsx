// The Changes tab of the workspace pane (issue 14): what the session, a run
// or one tool call changed — the files with their line counts and unified
// diffs — and rollback: revert a run or a call, restore one file, restore
// everything since a checkpoint. Every rollback is previewed first (what
// happens to each file, conflicts flagged and left alone unless the person
// ticks them) and asks for confirmation; afterwards "Undo rollback" puts
// back what it replaced. Viewers see everything and change nothing.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { ActionError } from "../state/contract";
import { trapFocus } from "../shell/Dialog";
import { useView } from "../shell/view";
import { Diff } from "../transcript/Diff";
import type { TabProps } from "./tab";
import {
  rollbackRequest, summary, useCheckpoints, useFetched,
  type Changes, type Checkpoint, type Rollback, type Target,
} from "./changes";
import "./changes.css";

/** git's per-file header (diff --git, index, mode lines) repeats what the
 * list says; the Diff view starts at the first hunk. */
function hunks(diff: string): string {
  const at = diff.indexOf("\n@@");
  return diff.startsWith("@@") || at < 0 ? diff : diff.slice(at + 1);
}

const STATUS_MARK: Record<string, string> = { added: "A", modified: "M", deleted: "D", renamed: "R" };

export function ChangesTab({ session, canOperate }: TabProps) {
  const store = useStore();
  const view = useView();
  const tick = session.checkpoints.value;
  const checkpoints = useCheckpoints(store.api, session);
  const runs = session.runs.value;
  const runId = view.changesRun.value;
  const toolCall = view.changesCall.value ?? "";
  const setToolCall = (c: string) => (view.changesCall.value = c || null);
  const [file, setFile] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ target: Target; title: string; plan: Rollback; paths?: string[] } | null>(null);
  const [undo, setUndo] = useState<Target | null>(null);
  const [error, setError] = useState<ActionError | null>(null);

  useEffect(() => setFile(null), [runId, toolCall]);

  // Runs that took checkpoints, newest first, labelled by what was asked.
  const changedRuns = useMemo(() => {
    const ids = new Set(checkpoints.map((c) => c.run_id).filter(Boolean));
    return runs.filter((r) => ids.has(r.id)).reverse();
  }, [checkpoints, runs]);
  const calls = useMemo(() => checkpoints.filter((c) => runId && c.run_id === runId && c.tool_call_id), [checkpoints, runId]);

  const path = runId
    ? `/api/runs/${encodeURIComponent(runId)}/changes${toolCall ? `?tool_call=${encodeURIComponent(toolCall)}` : ""}`
    : `/api/sessions/${encodeURIComponent(session.id)}/changes`;
  const { data, error: loadError } = useFetched<Changes>(store.api, path, [tick]);
  const files = data?.files ?? [];
  const chosen = files.find((f) => f.path === file) ?? null;

  // What "revert" and "restore this file" undo in the current scope.
  const scopeTarget: Target | null = runId
    ? { kind: "run", runId, toolCall: toolCall || undefined }
    : data?.from ? { kind: "since", checkpoint: data.from } : null;

  const ask = async (target: Target, title: string, paths?: string[]) => {
    setError(null);
    const [url, body] = rollbackRequest(target, { dry_run: true, paths });
    const r = await store.api.post<Rollback>(url, body);
    if (!r.ok) return setError(r.error);
    setPreview({ target, title, plan: r.value, paths });
  };

  const apply = async (forced: Set<string>) => {
    if (!preview) return;
    let paths = preview.paths;
    if (forced.size > 0) {
      // A conflicting file is written only when the request names it: name
      // every file the plan writes, plus the conflicts the person ticked.
      paths = preview.plan.files.filter((f) => (!f.conflict && f.action !== "none") || forced.has(f.path)).map((f) => f.path);
    }
    const [url, body] = rollbackRequest(preview.target, { paths });
    setPreview(null);
    const r = await store.api.post<Rollback>(url, body);
    if (!r.ok) return setError(r.error);
    const { before_checkpoint_id: before, after_checkpoint_id: after } = r.value;
    setUndo(before && after ? { kind: "span", checkpoint: before, to: after } : null);
  };

  return (
    <div class="chg" data-testid="changes-tab">
      <div class="chg-scope">
        <label>
          <span class="chg-label">Changes of</span>
          <select
            data-testid="changes-run"
            value={runId ?? ""}
            onChange={(e) => {
              view.changesRun.value = (e.target as HTMLSelectElement).value || null;
              view.changesCall.value = null;
            }}
          >
            <option value="">the whole session</option>
            {changedRuns.map((r) => (
              <option key={r.id} value={r.id}>
                run: {(r.input || "/compact").slice(0, 48)}
              </option>
            ))}
            {runId && !changedRuns.some((r) => r.id === runId) && <option value={runId}>run {runId}</option>}
          </select>
        </label>
        {runId && calls.length > 0 && (
          <label>
            <span class="chg-label">Tool call</span>
            <select data-testid="changes-call" value={toolCall} onChange={(e) => setToolCall((e.target as HTMLSelectElement).value)}>
              <option value="">every call of the run</option>
              {calls.map((c, i) => (
                <option key={c.id} value={c.tool_call_id}>
                  {i + 1}. {c.reason.replace(/^before /, "")}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>

      {error && <p class="chg-error" role="alert">{error.message}</p>}
      {loadError && <p class="chg-error" role="alert">{loadError.message}</p>}
      {undo && canOperate && (
        <div class="chg-undo">
          <span>Rolled back.</span>
          <button type="button" class="btn btn-sm" data-testid="changes-undo" onClick={() => void ask(undo, "Undo rollback")}>
            Undo rollback
          </button>
        </div>
      )}

      <div class="chg-head">
        <span data-testid="changes-summary">{data ? (files.length ? summary(data) : "No files changed.") : "Loading…"}</span>
        {canOperate && scopeTarget && files.length > 0 && (
          <button
            type="button"
            class="btn btn-sm"
            data-testid="changes-revert"
            onClick={() => void ask(scopeTarget, runId ? (toolCall ? "Revert this tool call" : "Revert run") : "Revert every change of the session")}
          >
            {runId ? (toolCall ? "Revert this call" : "Revert run") : "Revert all"}
          </button>
        )}
      </div>

      <ul class="chg-files" data-testid="changes-files">
        {files.map((f) => (
          <li key={f.path}>
            <button
              type="button"
              class={"chg-file" + (f.path === file ? " on" : "")}
              data-testid="changes-file"
              data-path={f.path}
              onClick={() => setFile(f.path === file ? null : f.path)}
            >
              <span class={"chg-st chg-st-" + f.status} title={f.status}>{STATUS_MARK[f.status] ?? "?"}</span>
              <span class="chg-path">{f.old_path ? `${f.old_path} → ${f.path}` : f.path}</span>
              <span class="diff-add-n">+{f.added}</span>
              <span class="diff-del-n">−{f.removed}</span>
            </button>
          </li>
        ))}
      </ul>

      {chosen && (
        <div class="chg-diff">
          <div class="chg-head">
            <span class="chg-path">{chosen.path}</span>
            {canOperate && scopeTarget && (
              <button type="button" class="btn btn-sm" data-testid="changes-restore-file" onClick={() => void ask(scopeTarget, `Restore ${chosen.path}`, [chosen.path])}>
                Restore this file
              </button>
            )}
          </div>
          {chosen.binary ? <p class="muted-text">Binary file: no diff.</p> : chosen.diff ? <Diff diff={hunks(chosen.diff)} truncated={chosen.truncated} collapsedLines={400} /> : <p class="muted-text">Empty file.</p>}
        </div>
      )}

      <Checkpoints list={checkpoints} canOperate={canOperate} onRestore={(c) => void ask({ kind: "since", checkpoint: c.id }, "Restore to this checkpoint")} />
      {!canOperate && <p class="muted-text chg-viewer">You can see the changes; rolling them back needs the operator role.</p>}

      {preview && <Preview title={preview.title} plan={preview.plan} onCancel={() => setPreview(null)} onConfirm={(forced) => void apply(forced)} />}
    </div>
  );
}

function Checkpoints({ list, canOperate, onRestore }: { list: Checkpoint[]; canOperate: boolean; onRestore: (c: Checkpoint) => void }) {
  if (list.length === 0) return null;
  return (
    <details class="chg-cps">
      <summary>Checkpoints ({list.length})</summary>
      <ol>
        {[...list].reverse().map((c) => (
          <li key={c.id} data-testid="checkpoint">
            <span class="chg-cp-reason">{c.reason}{c.by ? ` (${c.by.name})` : ""}</span>
            <span class="muted-text">{new Date(c.created_at).toLocaleTimeString()}</span>
            {c.files_changed > 0 && <span class="muted-text">{summary(c)}</span>}
            {canOperate && (
              <button type="button" class="btn btn-sm" data-testid="checkpoint-restore" onClick={() => onRestore(c)}>
                Restore to this checkpoint
              </button>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

const ACTION: Record<string, string> = {
  restore: "put back", delete: "deleted", recreate: "recreated", none: "already as it was", skip: "skipped (nested repository)",
};

/** The rollback's preview and confirmation: each file and what happens to
 * it; conflicts are left alone unless ticked. */
function Preview(props: { title: string; plan: Rollback; onCancel: () => void; onConfirm: (forced: Set<string>) => void }) {
  const [forced, setForced] = useState(new Set<string>());
  const { plan } = props;
  const todo = plan.files.filter((f) => f.action !== "none");
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => trapFocus(box.current!, props.onCancel), []);
  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onCancel()}>
      <div class="modal chg-preview" ref={box} role="dialog" aria-modal="true" aria-label={props.title} data-testid="rollback-preview">
        <h2 class="modal-title">{props.title}</h2>
        {todo.length === 0 ? (
          <p>Nothing to do: every file is already as it was.</p>
        ) : (
          <ul class="chg-plan">
            {plan.files.map((f) => (
              <li key={f.path} class={f.conflict ? "conflict" : ""} data-testid="rollback-file" data-conflict={f.conflict ? "true" : undefined}>
                <span class="chg-path">{f.path}</span>
                <span class="muted-text">{ACTION[f.action] ?? f.action}</span>
                {f.conflict && (
                  <label class="chg-force">
                    <input
                      type="checkbox"
                      checked={forced.has(f.path)}
                      onChange={(e) => {
                        const next = new Set(forced);
                        if ((e.target as HTMLInputElement).checked) next.add(f.path);
                        else next.delete(f.path);
                        setForced(next);
                      }}
                    />
                    changed again since — overwrite anyway
                  </label>
                )}
              </li>
            ))}
          </ul>
        )}
        {plan.conflicts > 0 && (
          <p class="chg-warn">
            {plan.conflicts} file{plan.conflicts === 1 ? " was" : "s were"} changed again after these changes (by the agent or a person): left as {plan.conflicts === 1 ? "it is" : "they are"} unless ticked.
          </p>
        )}
        <p class="muted-text">{plan.note}</p>
        <div class="modal-actions">
          <button type="button" class="btn" data-testid="rollback-cancel" onClick={props.onCancel}>Cancel</button>
          <button type="button" class="btn btn-primary" data-testid="rollback-confirm" disabled={todo.length === 0} onClick={() => props.onConfirm(forced)}>
            Roll back
          </button>
        </div>
      </div>
    </div>
  );
}

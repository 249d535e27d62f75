// Wire shapes of "Changes and rollback" (docs/API.md) and the fetches the
// Changes tab and the line under each run share.

import { useEffect, useState } from "preact/hooks";
import type { Api } from "../state/api";
import type { ActionError } from "../state/contract";
import type { SessionState } from "../state/types";

export interface Checkpoint {
  id: string; session_id: string; run_id?: string; tool_call_id?: string; parent_id?: string;
  reason: string; files_changed: number; added: number; removed: number;
  by?: { kind: string; name: string }; created_at: string;
}

export interface FileChange {
  path: string; old_path?: string; status: "added" | "modified" | "deleted" | "renamed";
  added: number; removed: number; binary?: boolean; diff?: string; truncated?: boolean;
}

export interface Changes {
  session_id?: string; from?: string; to?: string; run_id?: string; tool_call_id?: string;
  files_changed: number; added: number; removed: number; files: FileChange[];
}

export interface PlanFile {
  path: string; action: "restore" | "delete" | "recreate" | "none" | "skip";
  conflict?: boolean; reason?: string; applied?: boolean; error?: string;
}

export interface Rollback {
  dry_run: boolean; from: string; to?: string; files: PlanFile[]; conflicts: number;
  undoable: boolean; note: string; before_checkpoint_id?: string; after_checkpoint_id?: string;
}

/** What a rollback undoes: a run's or a tool call's changes, everything
 * since a checkpoint, or (undo) a rollback's own span. */
export type Target =
  | { kind: "run"; runId: string; toolCall?: string }
  | { kind: "since"; checkpoint: string }
  | { kind: "span"; checkpoint: string; to: string };

export function rollbackRequest(t: Target, body: { paths?: string[]; dry_run?: boolean; force?: boolean }): [string, unknown] {
  switch (t.kind) {
    case "run":
      return [`/api/runs/${encodeURIComponent(t.runId)}/revert`, { ...body, ...(t.toolCall ? { tool_call: t.toolCall } : {}) }];
    case "since":
      return [`/api/checkpoints/${encodeURIComponent(t.checkpoint)}/restore`, body];
    case "span":
      return [`/api/checkpoints/${encodeURIComponent(t.checkpoint)}/restore`, { ...body, to: t.to }];
  }
}

/** Loads path with api whenever one of deps changes (the session's
 * checkpoint counter among them); the previous answer stays while the next
 * loads. */
export function useFetched<T>(api: Api, path: string | null, deps: unknown[]): { data: T | null; error: ActionError | null } {
  const [state, setState] = useState<{ data: T | null; error: ActionError | null }>({ data: null, error: null });
  useEffect(() => {
    if (!path) {
      setState({ data: null, error: null });
      return;
    }
    const ctl = new AbortController();
    void api.get<T>(path, ctl.signal).then((r) => {
      if (ctl.signal.aborted) return;
      setState(r.ok ? { data: r.value, error: null } : { data: null, error: r.error });
    });
    return () => ctl.abort();
  }, [path, ...deps]);
  return state;
}

/** The session's checkpoints, fetched again after every checkpoint event. */
export function useCheckpoints(api: Api, session: SessionState): Checkpoint[] {
  const tick = session.checkpoints.value;
  const { data } = useFetched<{ checkpoints: Checkpoint[] }>(api, `/api/sessions/${encodeURIComponent(session.id)}/checkpoints`, [tick]);
  return data?.checkpoints ?? [];
}

/** "3 files changed +20 −5". */
export function summary(c: { files_changed: number; added: number; removed: number }): string {
  return `${c.files_changed} file${c.files_changed === 1 ? "" : "s"} changed +${c.added} −${c.removed}`;
}

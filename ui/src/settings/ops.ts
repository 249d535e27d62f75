// The operator's console (processes, logs, a run's raw journal): the
// types of their routes (docs/API.md, "Processes", "Logs", "Journal") and
// a reader of the event streams they follow with.

import type { Api } from "../state/api";

export interface ProcessView {
  id: string;
  kind: "agent" | "terminal";
  /** running, starting, exited, killed, orphaned, elsewhere */
  status: string;
  command: string;
  session_id: string;
  run_id: string;
  pid: number;
  started_at: string;
  ended_at: string | null;
  exit_code: number | null;
  signal?: string;
  reason?: string;
  /** GET .../log can show its output. */
  output: boolean;
  output_bytes: number;
  runner_id?: string;
}

export interface ProcessList { processes: ProcessView[]; visibility: string }

export interface OutputChunk { output: string; from: number; next: number; dropped: number; process: ProcessView }

export interface LogLine { id: number; time: string; level: string; msg: string; attrs?: Record<string, string> }

export interface JournalEvent { id: number; seq: number; run_id: string; session_id: string; type: string; ts: string; terminal: boolean; payload: unknown }

export interface JournalPage { run_id: string; session_id: string; status: string; events: JournalEvent[]; next: number; more: boolean }

/** Whether a process can still be killed. */
export const killable = (p: ProcessView) => p.status === "running" || p.status === "starting" || p.status === "orphaned";

/** Reads the named events of an event stream until it ends or signal
 * aborts; resolves with the error message when it could not be opened. */
export async function follow(api: Api, path: string, signal: AbortSignal, onEvent: (name: string, data: unknown) => void): Promise<string | null> {
  const r = await api.stream(path, signal);
  if (!r.ok) return r.error.code === "aborted" ? null : r.error.message;
  const body = r.value.body;
  if (!body) return "The server sent no stream";
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      buf += value;
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let name = "message";
        let data = "";
        for (const line of frame.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (!data) continue;
        try {
          onEvent(name, JSON.parse(data));
        } catch {
          // a frame we cannot read is skipped
        }
      }
    }
  } catch {
    return null; // aborted or the connection dropped: the caller decides
  } finally {
    reader.releaseLock();
  }
}

/** Copies text, answering whether it worked (no clipboard on an insecure
 * origin or when denied). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

// A thin fetch wrapper for the Caduceus JSON API (docs/API.md). Every call
// resolves to a Result instead of throwing, so the store can turn failures
// into toasts without try/catch at each call site.

import type { ActionError } from "./contract";

export type Result<T> = { ok: true; value: T } | { ok: false; error: ActionError };

/** Turns an error body ({error:{code,message}}) or a failed fetch into an
 * ActionError. */
async function errorOf(res: Response): Promise<ActionError> {
  try {
    const body = (await res.json()) as { error?: Partial<ActionError> };
    if (body && body.error && typeof body.error.code === "string") {
      return { code: body.error.code, message: body.error.message || body.error.code };
    }
  } catch {
    // not JSON: fall through to the status line
  }
  return { code: `http_${res.status}`, message: `${res.status} ${res.statusText || "request failed"}` };
}

export async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Result<T>> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: "no-store",
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") return { ok: false, error: { code: "aborted", message: "cancelled" } };
    return { ok: false, error: { code: "network", message: "Cannot reach the Caduceus server" } };
  }
  if (!res.ok) return { ok: false, error: await errorOf(res) };
  if (res.status === 204) return { ok: true, value: undefined as T };
  try {
    return { ok: true, value: (await res.json()) as T };
  } catch {
    return { ok: false, error: { code: "bad_response", message: "The server sent an unreadable answer" } };
  }
}

export const get = <T>(path: string, signal?: AbortSignal) => request<T>("GET", path, undefined, signal);
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body);
export const patch = <T>(path: string, body: unknown) => request<T>("PATCH", path, body);
export const del = (path: string) => request<void>("DELETE", path);

/** Reads a run's finished event stream (GET /api/runs/{id}/events closes
 * after run.done) as a list of envelopes. Used only for terminal runs, to
 * recover per-turn usage the transcript snapshot does not carry. */
export async function readFinishedRun<E>(runId: string, signal: AbortSignal): Promise<E[]> {
  try {
    const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/events`, { headers: { Accept: "text/event-stream" }, signal, cache: "no-store" });
    if (!res.ok) return [];
    const text = await res.text();
    const out: E[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      try {
        out.push(JSON.parse(line.slice(5)) as E);
      } catch {
        // a malformed line is skipped; usage is a nicety
      }
    }
    return out;
  } catch {
    return [];
  }
}

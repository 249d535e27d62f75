// A thin fetch wrapper for the Caduceus JSON API (docs/API.md). Every call
// resolves to a Result instead of throwing, so the store can turn failures
// into toasts without try/catch at each call site.
//
// The client is created by the store with its access-token hooks: when the
// server runs with CADUCEUS_TOKEN, every /api call carries
// `Authorization: Bearer <token>`, and a 401 is reported to onUnauthorized
// (the store then asks the person for the token). Nothing here logs or
// stores the token.

import type { ActionError } from "./contract";

/** A failure carries the HTTP status when the server answered (0: it did
 * not: network error or aborted). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ActionError; status: number };

export interface ApiAuth {
  /** The token to send ("" = none). */
  token(): string;
  /** The server answered 401; `sent` is the token the request carried. */
  onUnauthorized(sent: string): void;
}

export interface Api {
  request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Result<T>>;
  get<T>(path: string, signal?: AbortSignal): Promise<Result<T>>;
  post<T>(path: string, body?: unknown): Promise<Result<T>>;
  patch<T>(path: string, body: unknown): Promise<Result<T>>;
  del(path: string): Promise<Result<void>>;
}

/** The error every 401 resolves to; the token dialog explains it. */
export const UNAUTHORIZED: ActionError = { code: "unauthorized", message: "This Caduceus server needs its access token." };

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

export function createApi(auth: ApiAuth): Api {
  /** Request headers, with the token when there is one. */
  const headers = (accept: string, json: boolean): { sent: string; h: Record<string, string> } => {
    const sent = auth.token();
    const h: Record<string, string> = { Accept: accept };
    if (json) h["Content-Type"] = "application/json";
    if (sent) h.Authorization = `Bearer ${sent}`;
    return { sent, h };
  };

  const request = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Result<T>> => {
    const { sent, h } = headers("application/json", body !== undefined);
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: h,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: "no-store",
      });
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") return { ok: false, error: { code: "aborted", message: "cancelled" }, status: 0 };
      return { ok: false, error: { code: "network", message: "Cannot reach the Caduceus server" }, status: 0 };
    }
    if (res.status === 401) {
      auth.onUnauthorized(sent);
      return { ok: false, error: UNAUTHORIZED, status: 401 };
    }
    if (!res.ok) return { ok: false, error: await errorOf(res), status: res.status };
    if (res.status === 204) return { ok: true, value: undefined as T };
    try {
      return { ok: true, value: (await res.json()) as T };
    } catch {
      return { ok: false, error: { code: "bad_response", message: "The server sent an unreadable answer" }, status: res.status };
    }
  };

  return {
    request,
    get: <T,>(path: string, signal?: AbortSignal) => request<T>("GET", path, undefined, signal),
    post: <T,>(path: string, body?: unknown) => request<T>("POST", path, body),
    patch: <T,>(path: string, body: unknown) => request<T>("PATCH", path, body),
    del: (path) => request<void>("DELETE", path),
  };
}

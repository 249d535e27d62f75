// A thin fetch wrapper for the Caduceus JSON API (docs/API.md). Every call
// resolves to a Result instead of throwing, so the store can turn failures
// into toasts without try/catch at each call site.
//
// The client is created by the store with its access-token hooks: when the
// server runs with CADUCEUS_TOKEN, every /api call carries
// `Authorization: Bearer <token>`, and a 401 is reported to onUnauthorized
// (the store then asks the person for the token, or shows the sign-in
// page). A signed-in browser is authenticated by its HttpOnly session cookie,
// which fetch sends by itself; every state-changing request then carries the
// session's CSRF token in X-CSRF-Token. Nothing here logs or stores a token.

import type { ActionError } from "./contract";

/** A failure carries the HTTP status when the server answered (0: it did
 * not: network error or aborted). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ActionError; status: number };

/** A body sent as is rather than as JSON, with headers of its own: a
 * file's new content for PUT .../files/content with its If-Match. */
export class RawBody {
  constructor(readonly data: BodyInit, readonly headers: Record<string, string>) {}
}

export interface ApiAuth {
  /** The token to send ("" = none). */
  token(): string;
  /** The CSRF token of the cookie session ("" = none). */
  csrf(): string;
  /** The server answered 401; `sent` is the token the request carried. */
  onUnauthorized(sent: string): void;
  /** The server refused an action for the caller's role (403 forbidden):
   * the role may have changed since the page asked. */
  onForbidden(): void;
  /** The session's CSRF token, asked of the server again (after a 403
   * csrf_failed: another tab signed in anew, so the cookie is a newer
   * session's). */
  freshCsrf(): Promise<string>;
}

export interface Api {
  request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Result<T>>;
  get<T>(path: string, signal?: AbortSignal): Promise<Result<T>>;
  post<T>(path: string, body?: unknown): Promise<Result<T>>;
  patch<T>(path: string, body: unknown): Promise<Result<T>>;
  /** keepalive: sent as the page goes away (pagehide); the request
   * outlives the page and its answer is not read. */
  del(path: string, keepalive?: boolean): Promise<Result<void>>;
  /** Posts form (multipart) and reports the bytes sent so far; fetch has
   * no upload progress, so this one request goes through XMLHttpRequest. */
  upload<T>(path: string, form: FormData, onProgress?: (sent: number, total: number) => void): Promise<Result<T>>;
  /** GETs bytes (a workspace file for a preview or a download) with the
   * same credentials, where an <img src> or a link would carry only the
   * cookie. */
  blob(path: string, signal?: AbortSignal): Promise<Result<Blob>>;
  /** GETs an event stream with the same credentials (an EventSource
   * cannot send the token header): the open response, its body unread. */
  stream(path: string, signal: AbortSignal): Promise<Result<Response>>;
}

/** The body argument of a request whose answer is read as a Blob. */
const AS_BLOB = Symbol("blob");
/** The body argument of a request whose answer is returned unread. */
const AS_STREAM = Symbol("stream");

/** The error every 401 resolves to; the token dialog explains it. */
export const UNAUTHORIZED: ActionError = { code: "unauthorized", message: "This Caduceus server needs its access token." };

/** Turns an error body ({error:{code,message}}) or a failed fetch into an
 * ActionError. */
async function errorOf(res: Response): Promise<ActionError> {
  let e: ActionError = { code: `http_${res.status}`, message: `${res.status} ${res.statusText || "request failed"}` };
  try {
    const body = (await res.json()) as { error?: Partial<ActionError> };
    if (body && body.error && typeof body.error.code === "string") {
      e = { code: body.error.code, message: body.error.message || body.error.code };
      const d = body.error.details;
      if (d && typeof d === "object") e.details = d;
    }
  } catch {
    // not JSON: the status line says it
  }
  // A rate limit says when to try again in its header even without details.
  const retry = Number(res.headers.get("Retry-After"));
  if (res.status === 429 && retry > 0 && typeof e.details?.retry_after_seconds !== "number") {
    e.details = { ...e.details, retry_after_seconds: retry };
  }
  return e;
}

/** Methods that change state: with the session cookie they need the CSRF
 * token (GET, HEAD and OPTIONS do not). */
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function createApi(auth: ApiAuth): Api {
  /** Request headers, with the token when there is one. */
  const headers = (method: string, json: boolean): { sent: string; csrf: string; h: Record<string, string> } => {
    const sent = auth.token();
    const h: Record<string, string> = { Accept: "application/json" };
    if (json) h["Content-Type"] = "application/json";
    if (sent) h.Authorization = `Bearer ${sent}`;
    const csrf = SAFE.has(method) ? "" : auth.csrf();
    if (csrf) h["X-CSRF-Token"] = csrf;
    return { sent, csrf, h };
  };

  const request = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal, retried = false): Promise<Result<T>> => {
    const asBlob = body === AS_BLOB;
    const asStream = body === AS_STREAM;
    if (asBlob || asStream) body = undefined;
    const raw = body instanceof RawBody ? body : null;
    const { sent, csrf, h } = headers(method, body !== undefined && !raw);
    if (raw) Object.assign(h, raw.headers);
    if (asStream) h.Accept = "text/event-stream";
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: h,
        body: raw ? raw.data : body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: "no-store",
      });
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") return { ok: false, error: { code: "aborted", message: "cancelled" }, status: 0 };
      return { ok: false, error: { code: "network", message: "Cannot reach the Caduceus server" }, status: 0 };
    }
    if (res.status === 401) {
      // A wrong password (sign-in, password change) is the form's to
      // report; any other 401 means our credential no longer counts.
      const e = await errorOf(res);
      if (e.code === "bad_credentials") return { ok: false, error: e, status: 401 };
      auth.onUnauthorized(sent);
      return { ok: false, error: UNAUTHORIZED, status: 401 };
    }
    if (!res.ok) {
      const e = await errorOf(res);
      if (res.status === 403 && e.code === "forbidden") auth.onForbidden();
      // Refused before any handler ran, so sending it again is safe: once,
      // and only with a token that differs from the refused one.
      if (res.status === 403 && e.code === "csrf_failed" && !retried) {
        const fresh = await auth.freshCsrf();
        if (fresh && fresh !== csrf) return request<T>(method, path, body, signal, true);
      }
      return { ok: false, error: e, status: res.status };
    }
    if (res.status === 204) return { ok: true, value: undefined as T };
    if (asBlob) return { ok: true, value: (await res.blob()) as T };
    if (asStream) return { ok: true, value: res as T };
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
    del: (path, keepalive) => {
      if (!keepalive) return request<void>("DELETE", path);
      void fetch(path, { method: "DELETE", headers: headers("DELETE", false).h, keepalive: true, cache: "no-store" }).catch(() => {});
      return Promise.resolve({ ok: true, value: undefined });
    },
    blob: (path, signal) => request<Blob>("GET", path, AS_BLOB, signal),
    stream: (path, signal) => request<Response>("GET", path, AS_STREAM, signal),
    upload: <T,>(path: string, form: FormData, onProgress?: (sent: number, total: number) => void) =>
      new Promise<Result<T>>((resolve) => {
        const { sent, h } = headers("POST", false);
        const x = new XMLHttpRequest();
        x.open("POST", path);
        for (const [k, v] of Object.entries(h)) x.setRequestHeader(k, v);
        x.upload.onprogress = (e) => onProgress?.(e.loaded, e.total);
        x.onerror = () => resolve({ ok: false, error: { code: "network", message: "The upload did not reach the server (is the file larger than it accepts?)" }, status: 0 });
        x.onload = async () => {
          if (x.status === 401) {
            auth.onUnauthorized(sent);
            resolve({ ok: false, error: UNAUTHORIZED, status: 401 });
            return;
          }
          if (x.status < 200 || x.status >= 300) {
            const res = new Response(x.responseText, { status: x.status, headers: { "Content-Type": x.getResponseHeader("Content-Type") ?? "" } });
            resolve({ ok: false, error: await errorOf(res), status: x.status });
            return;
          }
          try {
            resolve({ ok: true, value: JSON.parse(x.responseText) as T });
          } catch {
            resolve({ ok: false, error: { code: "bad_response", message: "The server sent an unreadable answer" }, status: x.status });
          }
        };
        x.send(form);
      }),
  };
}

// Small formatting helpers of the shell.

import type { Run } from "../state/types";

/** "now", "5m", "3h", "2d", then a short date. */
export function relTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (!isFinite(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return "now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h}h`;
  const d = Math.round(h / 24);
  if (d < 7) return `${d}d`;
  const date = new Date(t);
  return date.toLocaleDateString(undefined, date.getFullYear() === new Date(now).getFullYear() ? { month: "short", day: "numeric" } : { year: "numeric", month: "short", day: "numeric" });
}

/** relTime as a phrase: "just now", "5m ago", "Mar 3". */
export function ago(iso: string, now: number): string {
  const r = relTime(iso, now);
  return r === "now" ? "just now" : /^\d+[mhd]$/.test(r) ? `${r} ago` : r;
}

/** 950 → "950", 12345 → "12.3k", 2_500_000 → "2.5M". */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : n < 100_000 ? 1 : 0).replace(/\.0$/, "")}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** Readable run/session status for badges. */
export const STATUS_TEXT: Record<string, string> = {
  idle: "Idle",
  queued: "Queued",
  running: "Running",
  awaiting_approval: "Needs approval",
  awaiting_clarify: "Has a question",
  answered: "Answered",
  paused: "Paused",
  cancelling: "Stopping",
  interrupted: "Interrupted",
  recovering: "Recovering",
  cancelled: "Cancelled",
  failed: "Failed",
  completed: "Done",
  expired: "Expired",
};

export const statusText = (s: string) => STATUS_TEXT[s] ?? s;

/** A wall-clock time with seconds, e.g. "12:01:05". */
export function clock(iso: string): string {
  const t = Date.parse(iso);
  return isFinite(t) ? new Date(t).toLocaleTimeString([], { hour: "numeric", minute: "2-digit", second: "2-digit" }) : "";
}

/** "Recovering — retry 1 of 2 at 12:01:05" for a recovering run (parts
 * the server did not give are left out). */
export function recoveringText(r: Run): string {
  // A recovering run's retries already count the retry it waits for.
  const n = r.retry ?? (r.status === "recovering" ? r.retries ?? 0 : 0);
  const max = r.max_retries ?? 0;
  const which = n > 0 && max > 0 ? `retry ${n} of ${max}` : "retry";
  // A retry time already past reads "due now", never a time gone by.
  const due = r.retry_at ? Date.parse(r.retry_at) : NaN;
  if (isFinite(due) && due <= Date.now()) return `Recovering — ${which} due now`;
  const at = r.retry_at ? clock(r.retry_at) : "";
  return at ? `Recovering — ${which} at ${at}` : n > 0 && max > 0 ? `Recovering — ${which}` : "Recovering";
}

/** Statuses where a person is the one holding things up. */
export const waitsForPerson = (s: string) => s === "awaiting_approval" || s === "awaiting_clarify" || s === "paused";

/** Apple keyboards say ⌘ where others say Ctrl. */
export function isMac(): boolean {
  return typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

// Scheduled jobs' shapes as GET /api/jobs returns them, and the few words
// the list and the editor both say about a job.

export interface Schedule { kind: string; expr: string; tz: string; words?: string }
export interface Delivery { notify: boolean; webhook_ids: string[] }
export interface Job {
  id: string; name: string; prompt: string; profile_id: string; workspace: string;
  schedule: Schedule; enabled: boolean; repeat_limit: number; fire_count: number;
  overlap: string; missed: string; session: string; session_id: string; run_expiry_seconds: number;
  /** Absent on a server from before delivery (h17-deliver): no delivery. */
  delivery?: Delivery;
  next_fire_at: string | null; last_run_id: string; last_run_status: string;
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** A schedule in words where it is a common shape; the expression
 * otherwise. The server's words (schedule.words) win where it sends them:
 * this is the fallback for a server that does not. */
export function scheduleWords(s: Schedule): string {
  if (s.words) return s.words;
  if (s.kind === "interval") return s.expr.startsWith("every") ? s.expr : `every ${s.expr}`;
  if (s.kind === "once") return `once, at ${new Date(s.expr).toLocaleString()}`;
  const zone = s.tz || "UTC";
  const f = s.expr.trim().split(/\s+/);
  if (f.length === 5 && /^\d+$/.test(f[0]) && /^\d+$/.test(f[1]) && f[2] === "*" && f[3] === "*") {
    const at = `${f[1].padStart(2, "0")}:${f[0].padStart(2, "0")}`;
    const days = f[4] === "*" ? "every day" : f[4] === "1-5" ? "every weekday" : /^\d$/.test(f[4]) ? `every ${DAYS[Number(f[4]) % 7]}` : `on days ${f[4]}`;
    return `${days} at ${at}, ${zone}`;
  }
  return `${s.expr} (${zone})`;
}

/** The delivery in short, for the list: "notify · 2 webhooks". */
export function deliveryWords(d: Delivery | undefined): string {
  const parts: string[] = [];
  if (d?.notify) parts.push("notify");
  const n = d?.webhook_ids?.length ?? 0;
  if (n > 0) parts.push(n === 1 ? "1 webhook" : `${n} webhooks`);
  return parts.length ? parts.join(" · ") : "no delivery";
}

/** The run expiries the editor offers, in seconds (0: none). */
export const EXPIRIES: ReadonlyArray<[number, string]> = [
  [0, "none"], [300, "5 min"], [1800, "30 min"], [3600, "1 h"], [21600, "6 h"], [86400, "24 h"],
];

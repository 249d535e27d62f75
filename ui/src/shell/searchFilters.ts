// Search filters (issue 15): the project, model, date range and archived
// choice that narrow the message hits. They ride in the address's query
// (with the search text), so a reload or a shared link shows the same
// results; the server reads the same names (GET /api/search).

/** A date range: a fixed window ending now, or the person's own days. */
export type SearchRange = "any" | "today" | "7d" | "30d" | "custom";

export interface SearchFilters {
  project: string; // project id; "": any
  model: string; // model ref; "": any
  range: SearchRange;
  from: string; // custom range: first day, YYYY-MM-DD (local); "": open
  to: string; // custom range: last day, inclusive; "": open
  archived: boolean; // include hits in archived sessions
}

export const noFilters: SearchFilters = { project: "", model: "", range: "any", from: "", to: "", archived: false };

export const rangeLabels: Record<SearchRange, string> = {
  any: "Any time",
  today: "Today",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  custom: "Custom…",
};

const isRange = (s: string | null): s is SearchRange => s !== null && s in rangeLabels;
const isDay = (s: string | null): s is string => s !== null && /^\d{4}-\d{2}-\d{2}$/.test(s);

/** The search text and filters an address carries. */
export function readSearchAddress(search: string): { q: string; filters: SearchFilters } {
  const p = new URLSearchParams(search);
  const when = p.get("when");
  const from = p.get("from");
  const to = p.get("to");
  return {
    q: p.get("q") ?? "",
    filters: {
      project: p.get("project") ?? "",
      model: p.get("model") ?? "",
      range: isRange(when) ? when : "any",
      from: isDay(from) ? from : "",
      to: isDay(to) ? to : "",
      archived: p.get("archived") === "all",
    },
  };
}

const searchKeys = ["q", "project", "model", "when", "from", "to", "archived"];

/** The address's query for a search, on top of current (an address's
 * query): its other parameters stay; with no search text, none of the
 * search's, so an address without a search stays clean. */
export function searchAddress(current: string, q: string, f: SearchFilters): string {
  const p = new URLSearchParams(current);
  for (const k of searchKeys) p.delete(k);
  if (q.trim()) {
    p.set("q", q);
    if (f.project) p.set("project", f.project);
    if (f.model) p.set("model", f.model);
    if (f.range !== "any") p.set("when", f.range);
    if (f.range === "custom" && f.from) p.set("from", f.from);
    if (f.range === "custom" && f.to) p.set("to", f.to);
    if (f.archived) p.set("archived", "all");
  }
  const out = p.toString();
  return out ? "?" + out : "";
}

export const hasFilters = (f: SearchFilters): boolean =>
  f.project !== "" || f.model !== "" || f.range !== "any" || f.archived;

/** Local midnight of a YYYY-MM-DD day, plus days. */
function localDay(day: string, plus = 0): Date {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d + plus);
}

/** Why a custom range cannot be searched; "" when it can. */
export function rangeError(f: SearchFilters): string {
  if (f.range === "custom" && f.from && f.to && localDay(f.from) > localDay(f.to)) return "The first day is after the last.";
  return "";
}

/** GET /api/search's filter parameters for f at time now. Days are the
 * person's local days, sent as instants; hits in archived sessions are
 * left out unless asked for, as the session list leaves them out. */
export function searchParams(f: SearchFilters, now: number): URLSearchParams {
  const p = new URLSearchParams();
  if (f.project) p.set("project", f.project);
  if (f.model) p.set("model", f.model);
  p.set("archived", f.archived ? "all" : "false");
  const today = new Date(now);
  const midnight = new Date(today.getFullYear(), today.getMonth(), today.getDate());
  const days = (n: number) => new Date(now - n * 86_400_000).toISOString();
  switch (f.range) {
    case "today":
      p.set("from", midnight.toISOString());
      break;
    case "7d":
      p.set("from", days(7));
      break;
    case "30d":
      p.set("from", days(30));
      break;
    case "custom":
      if (f.from) p.set("from", localDay(f.from).toISOString());
      if (f.to) p.set("to", localDay(f.to, 1).toISOString());
      break;
  }
  return p;
}

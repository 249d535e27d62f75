// The Usage section (issue 16, usage and cost): what the agents used over a
// period — totals, a bar chart by day and a breakdown by model, provider,
// profile or session — from GET /api/usage, with the breakdown as CSV.
// Days are the browser's own (tz = its IANA zone), so a bar is a local day.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import { sessionPath } from "../state/store";
import { tokens } from "../shell/format";
import { openPage, useView } from "../shell/view";

/** One group's sums, as GET /api/usage answers them. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
  runs: number;
  calls: number;
}

export interface UsageRow extends UsageTotals {
  key: string;
  label?: string;
}

export interface UsageReport {
  group_by: string;
  from: string;
  to: string;
  tz: string;
  rows: UsageRow[];
  total: UsageTotals;
}

type Period = "7d" | "30d" | "month" | "custom";
type Group = "model" | "provider" | "profile" | "session";
type Metric = "tokens" | "cost";

const PERIODS: { id: Period; label: string }[] = [
  { id: "7d", label: "7 days" },
  { id: "30d", label: "30 days" },
  { id: "month", label: "This month" },
  { id: "custom", label: "Custom" },
];

const GROUPS: { id: Group; label: string }[] = [
  { id: "model", label: "Model" },
  { id: "provider", label: "Provider" },
  { id: "profile", label: "Profile" },
  { id: "session", label: "Session" },
];

/** Rows the breakdown table shows, costliest first: a period of thousands
 * of sessions is a download, not a page. */
const MAX_ROWS = 100;

/** The browser's zone, the one its days are counted in. */
const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** A local date as YYYY-MM-DD. */
function ymd(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** The first and last day (inclusive) of a preset period ending today. */
export function periodDays(p: Exclude<Period, "custom">, today: Date): { from: string; to: string } {
  const to = ymd(today);
  if (p === "month") return { from: ymd(new Date(today.getFullYear(), today.getMonth(), 1)), to };
  const n = p === "7d" ? 7 : 30;
  return { from: ymd(new Date(today.getFullYear(), today.getMonth(), today.getDate() - (n - 1))), to };
}

/** $0.0123 with enough digits to show a small cost at all. */
export function usd(v: number): string {
  if (v === 0) return "$0";
  if (v < 0.01) return `$${v.toFixed(4)}`;
  if (v < 100) return `$${v.toFixed(2)}`;
  return `$${Math.round(v).toLocaleString("en-US")}`;
}

function query(group: string, from: string, to: string, tz: string, csv = false): string {
  const q = new URLSearchParams({ group_by: group, from, to, tz });
  if (csv) q.set("format", "csv");
  return `/api/usage?${q}`;
}

export function UsagePage() {
  const store = useStore();
  const period = useSignal<Period>("30d");
  const custom = useSignal(periodDays("30d", new Date()));
  const group = useSignal<Group>("model");
  const metric = useSignal<Metric>("tokens");
  const days = useSignal<UsageReport | null>(null);
  const breakdown = useSignal<UsageReport | null>(null);
  const error = useSignal<string | null>(null);
  const tz = zone();

  const range = period.value === "custom" ? custom.value : periodDays(period.value, new Date());
  const { from, to } = range;

  useEffect(() => {
    if (!from || !to) return;
    const ac = new AbortController();
    void (async () => {
      const [d, b] = await Promise.all([
        store.api.get<UsageReport>(query("day", from, to, tz), ac.signal),
        store.api.get<UsageReport>(query(group.value, from, to, tz), ac.signal),
      ]);
      if (ac.signal.aborted) return;
      const failed = !d.ok ? d : !b.ok ? b : null;
      if (failed && !failed.ok) {
        error.value = failed.error.message;
        return;
      }
      error.value = null;
      if (d.ok) days.value = d.value;
      if (b.ok) breakdown.value = b.value;
    })();
    return () => ac.abort();
  }, [from, to, group.value]);

  const total = days.value?.total;
  return (
    <div class="settings-section usage-page" data-testid="usage-page">
      <p class="page-lead">
        Tokens and cost of every model call the agents made, by day ({tz}) and broken down by model, provider, profile or session.
      </p>
      <div class="usage-controls">
        <div class="usage-seg" role="group" aria-label="Period" data-testid="usage-periods">
          {PERIODS.map((p) => (
            <button
              key={p.id}
              type="button"
              class={"usage-seg-btn" + (period.value === p.id ? " on" : "")}
              aria-pressed={period.value === p.id}
              data-testid={`usage-period-${p.id}`}
              onClick={() => {
                if (p.id === "custom" && period.value !== "custom") custom.value = range;
                period.value = p.id;
              }}
            >
              {p.label}
            </button>
          ))}
        </div>
        {period.value === "custom" && (
          <div class="usage-custom">
            <label class="field">
              <span class="field-label">From</span>
              <input
                type="date"
                class="input input-sm"
                data-testid="usage-from"
                value={custom.value.from}
                max={custom.value.to}
                onChange={(e) => (custom.value = { ...custom.value, from: e.currentTarget.value })}
              />
            </label>
            <label class="field">
              <span class="field-label">To</span>
              <input
                type="date"
                class="input input-sm"
                data-testid="usage-to"
                value={custom.value.to}
                min={custom.value.from}
                onChange={(e) => (custom.value = { ...custom.value, to: e.currentTarget.value })}
              />
            </label>
          </div>
        )}
      </div>
      {error.value && <p class="form-error" role="alert" data-testid="usage-error">{error.value}</p>}
      <dl class="usage-totals" data-testid="usage-totals">
        <Total label="Cost" value={total ? usd(total.cost_usd) : "…"} testid="usage-total-cost" />
        <Total label="Input tokens" value={total ? tokens(total.input_tokens) : "…"} exact={total?.input_tokens} testid="usage-total-input" />
        <Total label="Output tokens" value={total ? tokens(total.output_tokens) : "…"} exact={total?.output_tokens} testid="usage-total-output" />
        <Total label="Cached" value={total ? tokens(total.cached_tokens) : "…"} exact={total?.cached_tokens} testid="usage-total-cached" />
        <Total label="Runs" value={total ? String(total.runs) : "…"} testid="usage-total-runs" />
      </dl>
      <section class="card usage-chart-card" aria-label="By day">
        <div class="list-head">
          <h3 class="section-title">By day</h3>
          <div class="usage-seg usage-seg-sm" role="group" aria-label="Chart shows">
            {(["tokens", "cost"] as Metric[]).map((m) => (
              <button
                key={m}
                type="button"
                class={"usage-seg-btn" + (metric.value === m ? " on" : "")}
                aria-pressed={metric.value === m}
                data-testid={`usage-metric-${m}`}
                onClick={() => (metric.value = m)}
              >
                {m === "tokens" ? "Tokens" : "Cost"}
              </button>
            ))}
          </div>
        </div>
        {days.value ? <DayChart rows={days.value.rows} metric={metric.value} /> : <p class="page-note">Loading…</p>}
      </section>
      <section class="usage-breakdown" aria-label="Breakdown">
        <div class="list-head usage-breakdown-head">
          <div class="usage-seg" role="tablist" aria-label="Break down by" data-testid="usage-groups">
            {GROUPS.map((g) => (
              <button
                key={g.id}
                type="button"
                role="tab"
                class={"usage-seg-btn" + (group.value === g.id ? " on" : "")}
                aria-selected={group.value === g.id}
                data-testid={`usage-group-${g.id}`}
                onClick={() => (group.value = g.id)}
              >
                {g.label}
              </button>
            ))}
          </div>
          <button type="button" class="btn btn-sm" data-testid="usage-csv" onClick={() => void download(store, group.value, from, to, tz)}>
            Download CSV
          </button>
        </div>
        <Breakdown report={breakdown.value?.group_by === group.value ? breakdown.value : null} group={group.value} />
      </section>
    </div>
  );
}

function Total({ label, value, exact, testid }: { label: string; value: string; exact?: number; testid: string }) {
  return (
    <div class="usage-total">
      <dt>{label}</dt>
      <dd data-testid={testid} data-value={exact} title={exact !== undefined ? exact.toLocaleString("en-US") : undefined}>{value}</dd>
    </div>
  );
}

/** The day rows as plain SVG bars: one per day, scaled to the busiest. */
export function DayChart({ rows, metric }: { rows: UsageRow[]; metric: Metric }) {
  const value = (r: UsageRow) => (metric === "cost" ? r.cost_usd : r.input_tokens + r.output_tokens);
  const max = Math.max(0, ...rows.map(value));
  const fmt = (v: number) => (metric === "cost" ? usd(v) : tokens(v));
  const w = 10;
  const h = 100;
  if (rows.length === 0) return <p class="page-note">No days in this period.</p>;
  return (
    <figure class="usage-chart" data-testid="usage-chart">
      <div class="usage-chart-plot">
        <span class="usage-chart-max" aria-hidden="true">{max > 0 ? fmt(max) : ""}</span>
        <svg
          viewBox={`0 0 ${rows.length * w} ${h}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`${metric === "cost" ? "Cost" : "Tokens"} per day from ${rows[0].key} to ${rows[rows.length - 1].key}`}
        >
          <line x1="0" y1={h - 0.5} x2={rows.length * w} y2={h - 0.5} class="usage-axis" />
          {rows.map((r, i) => {
            const v = value(r);
            const bh = max > 0 ? Math.max(v > 0 ? 1.5 : 0, (v / max) * (h - 4)) : 0;
            return (
              <g key={r.key} data-testid="usage-bar" data-day={r.key} data-value={v}>
                <title>{`${r.key}: ${fmt(v)}${metric === "tokens" ? " tokens" : ""}, ${r.runs} run${r.runs === 1 ? "" : "s"}`}</title>
                <rect x={i * w} y="0" width={w} height={h} class="usage-bar-hit" />
                <rect x={i * w + 1.5} y={h - bh} width={w - 3} height={bh} class="usage-bar" />
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption class="usage-chart-axis">
        <span>{rows[0].key}</span>
        <span>{rows[rows.length - 1].key}</span>
      </figcaption>
    </figure>
  );
}

function Breakdown({ report, group }: { report: UsageReport | null; group: Group }) {
  const store = useStore();
  const view = useView();
  if (!report) return <p class="page-note">Loading…</p>;
  if (report.rows.length === 0) return <p class="page-note" data-testid="usage-empty">No model calls in this period.</p>;
  const rows = [...report.rows].sort(
    (a, b) => b.cost_usd - a.cost_usd || b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens) || a.key.localeCompare(b.key),
  );
  const name = GROUPS.find((g) => g.id === group)?.label ?? group;
  const shown = rows.slice(0, MAX_ROWS);
  return (
    <>
      <div class="usage-table-wrap">
        <table class="usage-table" data-testid="usage-table" data-group={group}>
          <thead>
            <tr>
              <th scope="col">{name}</th>
              <th scope="col" class="num">Runs</th>
              <th scope="col" class="num">Input</th>
              <th scope="col" class="num">Output</th>
              <th scope="col" class="num opt">Cached</th>
              <th scope="col" class="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.key} data-testid="usage-row" data-key={r.key}>
                <th scope="row" class="usage-name">
                  {group === "session" ? (
                    <a
                      href={sessionPath(r.key)}
                      data-testid="usage-session-link"
                      onClick={(e) => {
                        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                        e.preventDefault();
                        openSession(store, view, r.key);
                      }}
                    >
                      {r.label || "Untitled or deleted session"}
                    </a>
                  ) : r.key === "none" ? (
                    <span class="usage-none">none</span>
                  ) : (
                    r.key
                  )}
                </th>
                <td class="num">{r.runs}</td>
                <td class="num" title={r.input_tokens.toLocaleString("en-US")}>{tokens(r.input_tokens)}</td>
                <td class="num" title={r.output_tokens.toLocaleString("en-US")}>{tokens(r.output_tokens)}</td>
                <td class="num opt">{tokens(r.cached_tokens)}</td>
                <td class="num">{usd(r.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length > shown.length && (
        <p class="page-note" data-testid="usage-more">
          The {MAX_ROWS} costliest of {rows.length}; the CSV has every row.
        </p>
      )}
    </>
  );
}

function openSession(store: Store, view: ReturnType<typeof useView>, id: string) {
  store.selectSession(id);
  openPage(view, "chat");
}

/** Downloads the breakdown as CSV (a blob: a link would carry only the
 * cookie, not a bearer token). */
async function download(store: Store, group: Group, from: string, to: string, tz: string) {
  const r = await store.api.blob(query(group, from, to, tz, true));
  if (!r.ok) {
    store.toast.value = r.error;
    return;
  }
  const url = URL.createObjectURL(r.value);
  const a = document.createElement("a");
  a.href = url;
  a.download = `usage-${group}-${from}-${to}.csv`;
  a.dataset.testid = "usage-csv-link";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

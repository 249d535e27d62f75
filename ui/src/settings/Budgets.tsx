// Budgets (issue 16, h16-budgets): the server's limits per day and each
// profile's limits per run. A run that reaches one pauses with the reason;
// a person resumes it with a higher limit. Everyone who reads sees them;
// admins change them.

import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Profile } from "../state/types";
import { LIMIT_TEXT } from "../transcript/PausedBar";
import { loadProfiles } from "./Profiles";

type Limits = Partial<Record<keyof typeof LIMIT_TEXT, number>>;

interface BudgetRow { scope: string; target: string; limits: Limits }
interface Today { day: string; tokens: number; cost_usd: number; tool_calls: number }

const FIELDS = Object.keys(LIMIT_TEXT);
// The day's wall time and consecutive errors mean nothing server-wide.
const DAY_FIELDS = ["max_tokens", "max_cost_usd", "max_tool_calls"];

export function BudgetsPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const budgets = useSignal<BudgetRow[] | null>(null);
  const today = useSignal<Today | null>(null);
  const profiles = useSignal<Profile[]>([]);
  const error = useSignal<string | null>(null);

  const load = async () => {
    const r = await store.api.get<{ budgets: BudgetRow[]; today: Today }>("/api/budgets");
    if (!r.ok) {
      error.value = "The budgets could not be loaded.";
      return;
    }
    budgets.value = r.value.budgets;
    today.value = r.value.today;
    error.value = null;
  };
  useEffect(() => {
    void load();
    void loadProfiles(store).then((ps) => ps && (profiles.value = ps));
  }, []);

  const of = (scope: string, target: string): Limits => budgets.value?.find((b) => b.scope === scope && b.target === target)?.limits ?? {};
  const t = today.value;

  return (
    <div class="settings-section budgets-page" data-testid="budgets-page">
      <p class="page-lead">
        A run that reaches a limit pauses at its next step with the reason; whoever resumes it may raise the limit.
        A run also pauses when it makes the same tool call with the same arguments several times in a row.
      </p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      <h2 class="section-title">Today, server-wide</h2>
      {t && (
        <p class="page-note" data-testid="budget-today">
          Spent today ({t.day}, UTC): {t.tokens.toLocaleString()} tokens, ${t.cost_usd.toFixed(4)}, {t.tool_calls.toLocaleString()} tool calls.
        </p>
      )}
      {budgets.value && <LimitsForm key={"day:" + JSON.stringify(of("day", ""))} scope="day" target="" fields={DAY_FIELDS} limits={of("day", "")} admin={admin} onSaved={load} />}
      <h2 class="section-title">Per profile (each run)</h2>
      {profiles.value.length === 0 ? (
        <p class="page-note">No profile yet: create one under Profiles to give its runs limits.</p>
      ) : (
        <ul class="rows budget-profiles">
          {budgets.value && profiles.value.map((p) => (
            <li key={p.id} class="row budget-row" data-testid="budget-profile" data-name={p.name}>
              <div class="row-main">
                <span class="row-title">{p.name}</span>
                <LimitsForm key={p.id + JSON.stringify(of("profile", p.id))} scope="profile" target={p.id} fields={FIELDS} limits={of("profile", p.id)} admin={admin} onSaved={load} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function LimitsForm(props: { scope: string; target: string; fields: string[]; limits: Limits; admin: boolean; onSaved: () => Promise<void> }) {
  const store = useStore();
  const init = Object.fromEntries(props.fields.map((f) => [f, props.limits[f as keyof Limits] ? String(props.limits[f as keyof Limits]) : ""]));
  const [vals, setVals] = useState<Record<string, string>>(init);
  const [msg, setMsg] = useState<{ error: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    // What the fields hold now, not what the last render saw.
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const limits: Record<string, number> = {};
    for (const f of props.fields) {
      const v = String(form.get(f) ?? "").trim();
      if (v === "") continue;
      const n = Number(v);
      if (!isFinite(n) || n < 0) {
        setMsg({ error: true, text: `${LIMIT_TEXT[f].label}: enter a number, or leave it empty for no limit.` });
        return;
      }
      if (n > 0) limits[f] = n;
    }
    setBusy(true);
    const r = await store.api.request("PUT", "/api/budgets", { scope: props.scope, target: props.target, limits });
    setBusy(false);
    if (!r.ok) {
      setMsg({ error: true, text: r.error.message });
      return;
    }
    setMsg({ error: false, text: "Saved." });
    await props.onSaved();
  };
  return (
    <form class="form-row budget-form" data-testid={`budget-form-${props.scope}`} onSubmit={(e) => void save(e)}>
      {props.fields.map((f) => (
        <label key={f} class="field">
          <span class="field-label">{LIMIT_TEXT[f].label}</span>
          <input class="input input-sm" type="number" min={0} step={LIMIT_TEXT[f].step} placeholder="No limit" data-testid={`budget-${f}`}
            name={f} value={vals[f]} disabled={!props.admin} onInput={(e) => {
              const v = e.currentTarget.value;
              setVals((prev) => ({ ...prev, [f]: v }));
            }} />
        </label>
      ))}
      {props.admin && <button type="submit" class="btn btn-sm" data-testid="budget-save" disabled={busy}>{busy ? "Saving…" : "Save"}</button>}
      {msg && <span class={msg.error ? "form-error" : "page-note"} role={msg.error ? "alert" : "status"}>{msg.text}</span>}
    </form>
  );
}

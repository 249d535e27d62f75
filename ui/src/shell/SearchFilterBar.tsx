// The search filters' controls (issue 15): project, model, date range and
// archived sessions above the message hits; one click clears them.

import { useStore } from "../state/context";
import { defaultModelLabel } from "../state/store";
import { hasFilters, noFilters, rangeLabels, type SearchFilters, type SearchRange } from "./searchFilters";
import { useView } from "./view";

export function SearchFilterBar() {
  const store = useStore();
  const view = useView();
  const f = view.searchFilters.value;
  const set = (patch: Partial<SearchFilters>) => (view.searchFilters.value = { ...view.searchFilters.peek(), ...patch });
  const projects = view.organise.projects.value;
  const models = store.models.value;
  // A filter the lists do not know (a deleted project, a model gone from
  // the configuration) still shows, so the person sees why hits are few.
  const unknownProject = f.project && !projects.some((p) => p.id === f.project);
  // Sessions that name no model ran the server's default, which may be a
  // provider rather than one listed model: offer it by its own name.
  const def = store.meta.value?.default_model ?? "";
  const defaultOption = def !== "" && !models.some((m) => m.ref === def);
  const unknownModel = f.model && f.model !== def && !models.some((m) => m.ref === f.model);
  return (
    <div class="sf-bar" role="group" aria-label="Search filters" data-testid="search-filters">
      <select class="sf-select" aria-label="Project" data-testid="search-filter-project" value={f.project} onChange={(e) => set({ project: e.currentTarget.value })}>
        <option value="">Any project</option>
        {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
        {unknownProject && <option value={f.project}>Unknown project</option>}
      </select>
      <select class="sf-select" aria-label="Model" data-testid="search-filter-model" value={f.model} onChange={(e) => set({ model: e.currentTarget.value })}>
        <option value="">Any model</option>
        {defaultOption && <option value={def}>{defaultModelLabel(store.meta.value)}</option>}
        {models.map((m) => <option key={m.ref} value={m.ref}>{m.label || m.ref}</option>)}
        {unknownModel && <option value={f.model}>{f.model}</option>}
      </select>
      <select class="sf-select" aria-label="Date" data-testid="search-filter-range" value={f.range} onChange={(e) => set({ range: e.currentTarget.value as SearchRange })}>
        {(Object.keys(rangeLabels) as SearchRange[]).map((r) => <option key={r} value={r}>{rangeLabels[r]}</option>)}
      </select>
      {f.range === "custom" && (
        <span class="sf-dates">
          <input type="date" class="sf-date" aria-label="From day" data-testid="search-filter-from" value={f.from} max={f.to || undefined} onChange={(e) => set({ from: e.currentTarget.value })} />
          <span aria-hidden="true">–</span>
          <input type="date" class="sf-date" aria-label="To day" data-testid="search-filter-to" value={f.to} min={f.from || undefined} onChange={(e) => set({ to: e.currentTarget.value })} />
        </span>
      )}
      <label class="sf-check">
        <input type="checkbox" data-testid="search-filter-archived" checked={f.archived} onChange={(e) => set({ archived: e.currentTarget.checked })} />
        Include archived
      </label>
      {hasFilters(f) && (
        <button type="button" class="sf-clear" data-testid="search-filter-clear" onClick={() => (view.searchFilters.value = noFilters)}>
          Clear filters
        </button>
      )}
    </div>
  );
}

/** A short description of the filters that narrow the hits, for the
 * palette; "" when none does. */
export function filterSummary(f: SearchFilters, projectName: (id: string) => string, modelLabel: (ref: string) => string): string {
  const parts: string[] = [];
  if (f.project) parts.push(projectName(f.project));
  if (f.model) parts.push(modelLabel(f.model));
  if (f.range === "custom") parts.push(`${f.from || "…"} – ${f.to || "…"}`);
  else if (f.range !== "any") parts.push(rangeLabels[f.range]);
  if (f.archived) parts.push("archived included");
  return parts.join(" · ");
}

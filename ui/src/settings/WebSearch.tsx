// The Web search section (issue 18, h18-web): the back-end the web_search
// tool uses (SearXNG, Brave Search or Tavily), its address and its API key.
// The key is write-only: the page only shows the masked hint the server
// sends. Without a back-end the agent is not offered web_search at all.
// "Test" runs a query and shows the results as the transcript would.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { WebResults, webResults, type WebResult } from "../transcript/WebResults";

interface WebSearchView {
  configured: boolean;
  kind?: string;
  url?: string;
  has_key: boolean;
  api_key: string;
  kinds: string[];
  error?: string;
}

const KIND_TEXT: Record<string, string> = { searxng: "SearXNG (self-hosted)", brave: "Brave Search", tavily: "Tavily" };
const URL_HINT: Record<string, string> = {
  searxng: "e.g. http://127.0.0.1:8888 (its json format must be enabled)",
  brave: "empty: https://api.search.brave.com/res/v1/web/search",
  tavily: "empty: https://api.tavily.com/search",
};

export function WebSearchPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const view = useSignal<WebSearchView | null>(null);
  const error = useSignal<string | null>(null);
  const saved = useSignal(false);
  const busy = useSignal(false);
  const kind = useSignal("searxng");
  const form = useRef<HTMLFormElement>(null);

  const load = async () => {
    const r = await store.api.get<WebSearchView>("/api/settings/web-search");
    if (r.ok) {
      view.value = r.value;
      kind.value = r.value.kind ?? "searxng";
      error.value = null;
    } else error.value = r.error.message;
  };
  useEffect(() => void load(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(form.current!);
    const body: Record<string, string> = { kind: kind.peek(), url: String(f.get("url") ?? "").trim() };
    const key = String(f.get("api_key") ?? "");
    // An empty key field keeps the stored key.
    if (key !== "") body.api_key = key;
    busy.value = true;
    saved.value = false;
    const r = await store.api.request<WebSearchView>("PUT", "/api/settings/web-search", body);
    busy.value = false;
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    error.value = null;
    saved.value = true;
    view.value = r.value;
    form.current!.reset();
  };

  const remove = async () => {
    const r = await store.api.del("/api/settings/web-search");
    if (!r.ok) error.value = r.error.message;
    saved.value = false;
    await load();
  };

  const v = view.value;
  return (
    <div class="settings-section" data-testid="websearch-page">
      <p class="page-lead">
        The search engine the agent's <code>web_search</code> tool asks. Without one, the agent is not offered web search.
        API keys are stored encrypted and never shown again.
      </p>
      {error.value && <p class="form-error" role="alert" data-testid="websearch-error">{error.value}</p>}
      {v === null ? (
        <p class="page-note">Loading…</p>
      ) : (
        <>
          <p class="page-note" data-testid="websearch-state" data-configured={String(v.configured)}>
            {v.configured ? (
              <>In use: {KIND_TEXT[v.kind!] ?? v.kind}{v.url && <> at <code class="provider-url">{v.url}</code></>}
                {" · "}key: {v.has_key ? <code class="token-prefix" data-testid="websearch-key">{v.api_key || "set"}</code> : "none"}</>
            ) : "No back-end: web_search is not offered."}
          </p>
          {v.error && <p class="form-error" data-testid="websearch-key-error">{v.error}</p>}
          {admin && (
            <form ref={form} class="settings-form" onSubmit={submit} noValidate autocomplete="off" data-testid="websearch-form">
              <label class="field">
                <span class="field-label">Kind</span>
                <select class="input" name="kind" data-testid="websearch-kind" value={kind.value} onChange={(e) => (kind.value = e.currentTarget.value)}>
                  {v.kinds.map((k) => <option key={k} value={k}>{KIND_TEXT[k] ?? k}</option>)}
                </select>
              </label>
              <label class="field">
                <span class="field-label">Address</span>
                <input class="input mono" name="url" data-testid="websearch-url" inputMode="url" key={v.url ?? ""} defaultValue={v.url ?? ""} placeholder={URL_HINT[kind.value]} />
              </label>
              <label class="field">
                <span class="field-label">API key {v.has_key && <span class="setting-fixed">(stored: {v.api_key || "set"}; leave empty to keep it)</span>}</span>
                <input class="input mono" name="api_key" type="password" data-testid="websearch-api-key" autocomplete="new-password" spellcheck={false}
                  placeholder={v.has_key ? "unchanged" : kind.value === "searxng" ? "optional (a token your proxy wants)" : "required"} />
              </label>
              <div class="modal-actions">
                {v.configured && <button type="button" class="btn btn-danger-quiet" data-testid="websearch-remove" onClick={() => void remove()}>Remove</button>}
                <button type="submit" class="btn btn-primary" data-testid="websearch-save" disabled={busy.value}>{busy.value ? "Saving…" : "Save"}</button>
              </div>
              {saved.value && <span class="settings-saved" role="status" data-testid="websearch-saved">Saved.</span>}
            </form>
          )}
          {admin && v.configured && <TestSearch />}
        </>
      )}
    </div>
  );
}

function TestSearch() {
  const store = useStore();
  const query = useSignal("");
  const busy = useSignal(false);
  const result = useSignal<{ ok: true; results: WebResult[] } | { ok: false; text: string } | null>(null);
  const run = async (e: Event) => {
    e.preventDefault();
    busy.value = true;
    result.value = null;
    const r = await store.api.post<{ results: unknown[] }>("/api/settings/web-search/test", { query: query.peek(), count: 5 });
    busy.value = false;
    result.value = r.ok ? { ok: true, results: webResults(r.value) } : { ok: false, text: r.error.message };
  };
  const res = result.value;
  return (
    <section class="settings-form" aria-label="Test the back-end">
      <form class="websearch-test" onSubmit={run} data-testid="websearch-test-form">
        <label class="field">
          <span class="field-label">Test with a query</span>
          <input class="input" data-testid="websearch-test-query" value={query.value} onInput={(e) => (query.value = e.currentTarget.value)} placeholder="e.g. caduceus" />
        </label>
        <button type="submit" class="btn" data-testid="websearch-test" disabled={busy.value || query.value.trim() === ""}>{busy.value ? "Searching…" : "Test"}</button>
      </form>
      {res && !res.ok && <p class="provider-test bad" role="status" data-testid="websearch-test-result" data-ok="false">Failed: {res.text}</p>}
      {res && res.ok && (
        <div class="websearch-results" role="status" data-testid="websearch-test-result" data-ok="true">
          <WebResults results={res.results} testId="websearch-test-results" />
        </div>
      )}
    </section>
  );
}

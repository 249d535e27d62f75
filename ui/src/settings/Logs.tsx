// Settings → Logs: the server's structured log as it keeps it in memory
// (admin only): a level filter, a search, a live tail that can be paused.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { follow, type LogLine } from "./ops";

/** The most lines kept on screen. */
const MAX_LINES = 2000;
const LEVELS = ["debug", "info", "warn", "error"] as const;

export function LogsPage() {
  const store = useStore();
  const level = useSignal<string>("info");
  const query = useSignal("");
  const paused = useSignal(false);
  const lines = useSignal<LogLine[]>([]);
  const error = useSignal<string | null>(null);
  const live = useSignal(false);
  const last = useRef(0);
  const box = useRef<HTMLDivElement>(null);

  // A new filter starts over; resuming continues after the last line seen.
  useEffect(() => {
    lines.value = [];
    last.current = 0;
  }, [level.value, query.value]);

  useEffect(() => {
    if (paused.value) return;
    const ac = new AbortController();
    const q = new URLSearchParams({ follow: "1", level: level.value, limit: "500" });
    if (query.value) q.set("q", query.value);
    if (last.current > 0) q.set("after", String(last.current));
    live.value = true;
    void follow(store.api, `/api/logs?${q}`, ac.signal, (name, data) => {
      if (name !== "line") return;
      const l = data as LogLine;
      last.current = Math.max(last.current, l.id);
      const next = lines.peek().concat(l);
      lines.value = next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
    }).then((err) => {
      live.value = false;
      if (err) error.value = err;
    });
    return () => ac.abort();
  }, [level.value, query.value, paused.value]);

  useEffect(() => {
    const el = box.current;
    if (el && !paused.peek()) el.scrollTop = el.scrollHeight;
  }, [lines.value]);

  let typing: ReturnType<typeof setTimeout> | undefined;
  return (
    <div class="settings-section" data-testid="logs-page">
      <p class="page-lead">The server’s latest log lines, kept in memory (secrets are masked before a line is kept).</p>
      <div class="card logs-bar">
        <label class="field">
          <span class="field-label">Level</span>
          <select class="input" data-testid="logs-level" value={level.value} onChange={(e) => (level.value = e.currentTarget.value)}>
            {LEVELS.map((l) => <option key={l} value={l}>{l} and above</option>)}
          </select>
        </label>
        <label class="field grow">
          <span class="field-label">Search</span>
          <input class="input" type="search" data-testid="logs-search" placeholder="text in a message or a field" maxLength={500}
            onInput={(e) => {
              const v = e.currentTarget.value;
              clearTimeout(typing);
              typing = setTimeout(() => (query.value = v.trim()), 300);
            }} />
        </label>
        <button type="button" class="btn" data-testid="logs-pause" aria-pressed={paused.value} onClick={() => (paused.value = !paused.value)}>
          {paused.value ? "Resume" : "Pause"}
        </button>
        <span class={"logs-state" + (live.value ? " on" : "")} data-testid="logs-state">{paused.value ? "paused" : live.value ? "live" : "not connected"}</span>
      </div>
      {error.value && <p class="form-error" role="alert" data-testid="logs-error">{error.value}</p>}
      <div class="logs" ref={box} data-testid="logs-list" role="log" aria-live="off" tabIndex={0}>
        {lines.value.length === 0 ? (
          <p class="page-note">No lines{query.value ? " match" : " yet"}.</p>
        ) : (
          lines.value.map((l) => (
            <div key={l.id} class={"log-line log-" + l.level.toLowerCase()} data-testid="log-line" data-level={l.level}>
              <span class="log-time" title={l.time}>{l.time.slice(11, 23)}</span>
              <span class="log-level">{l.level}</span>
              <span class="log-msg">{l.msg}</span>
              {l.attrs && Object.entries(l.attrs).map(([k, v]) => (
                <span key={k} class="log-attr"><span class="log-key">{k}=</span>{v}</span>
              ))}
            </div>
          ))
        )}
      </div>
    </div>
  );
}

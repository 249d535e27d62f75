// The journal viewer: a run's raw events with their payloads (seed 004's
// debug tier), each copyable, the whole run copyable as JSON Lines. Opened
// from the run's end line in the transcript.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { trapFocus } from "../shell/Dialog";
import { useView } from "../shell/view";
import { copyText, type JournalEvent, type JournalPage } from "../settings/ops";
import { IconLayers } from "./icons";

/** A message's or a run end's "View journal" button. The dialog it opens
 * is drawn by the shell (ViewState.journalRun), outside the transcript:
 * a transcript item contains its content (CSS containment), which would
 * clip a fixed dialog. */
export function JournalButton({ runId, variant }: { runId: string; variant: "icon" | "text" }) {
  const view = useView();
  const open = () => (view.journalRun.value = runId);
  return variant === "icon" ? (
    <button type="button" class="msg-copy" data-testid="view-journal" aria-label="View the run's journal" title="View the run's journal" onClick={open}>
      <IconLayers size={14} />
    </button>
  ) : (
    <button type="button" class="btn btn-sm run-end-journal" data-testid="view-journal" onClick={open}>View journal</button>
  );
}

/** The most events the viewer loads (pages of 500). */
const MAX_EVENTS = 20_000;

export function JournalDialog({ runId, onClose }: { runId: string; onClose: () => void }) {
  const store = useStore();
  const events = useSignal<JournalEvent[] | null>(null);
  const more = useSignal(false);
  const error = useSignal<string | null>(null);
  const copied = useSignal<string | null>(null);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const release = trapFocus(box.current!, onClose);
    return () => {
      release();
      if (before && document.contains(before)) before.focus();
    };
  }, []);

  useEffect(() => {
    const ac = new AbortController();
    void (async () => {
      let after = 0;
      const all: JournalEvent[] = [];
      for (;;) {
        const r = await store.api.get<JournalPage>(`/api/runs/${encodeURIComponent(runId)}/journal?limit=500&after=${after}`, ac.signal);
        if (!r.ok) {
          if (r.error.code !== "aborted") error.value = r.error.message;
          break;
        }
        all.push(...r.value.events);
        after = r.value.next;
        events.value = all.slice();
        if (!r.value.more) break;
        if (all.length >= MAX_EVENTS) {
          more.value = true;
          break;
        }
      }
    })();
    return () => ac.abort();
  }, [runId]);

  const copy = async (what: string, text: string) => {
    copied.value = (await copyText(text)) ? what : "failed";
    setTimeout(() => (copied.value = null), 1500);
  };
  const jsonl = () => (events.value ?? []).map((e) => JSON.stringify(e)).join("\n") + "\n";

  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div class="modal journal-modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="journal-title" data-testid="journal-dialog">
        <div class="journal-head">
          <h2 id="journal-title" class="modal-title">Journal of <code>{runId}</code></h2>
          <span class="proc-sub" data-testid="journal-count">
            {events.value === null ? "loading…" : `${events.value.length} event${events.value.length === 1 ? "" : "s"}${more.value ? " (the first ones)" : ""}`}
          </span>
        </div>
        <div class="journal-actions">
          <button type="button" class="btn btn-sm" data-testid="journal-copy-all" disabled={!events.value?.length} onClick={() => void copy("all", jsonl())}>
            {copied.value === "all" ? "Copied" : "Copy all (JSON Lines)"}
          </button>
          <button type="button" class="btn btn-sm" data-testid="journal-close" onClick={onClose}>Close</button>
        </div>
        {copied.value === "failed" && <p class="form-error" role="alert">The browser refused the clipboard; select the text instead.</p>}
        {error.value && <p class="form-error" role="alert" data-testid="journal-error">{error.value}</p>}
        <ol class="journal-list" data-testid="journal-list">
          {(events.value ?? []).map((e) => (
            <li key={e.id} class="journal-event" data-testid="journal-event" data-type={e.type} data-id={e.id}>
              <details>
                <summary>
                  <span class="journal-seq">#{e.id}</span>
                  <span class="journal-type">{e.type}</span>
                  <span class="journal-ts">{e.ts?.slice(11, 23)}</span>
                </summary>
                <pre class="mono journal-payload" data-testid="journal-payload">{JSON.stringify(e.payload, null, 2)}</pre>
              </details>
              <button type="button" class="btn btn-sm journal-copy" data-testid="journal-copy" aria-label={`Copy event ${e.id}`}
                onClick={() => void copy(String(e.id), JSON.stringify(e))}>
                {copied.value === String(e.id) ? "Copied" : "Copy"}
              </button>
            </li>
          ))}
        </ol>
      </div>
    </div>
  );
}

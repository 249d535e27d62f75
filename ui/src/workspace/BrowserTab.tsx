// The session's browser (seed 001's browser namespace, h18-browser): the
// page the agent's browser is on and the screenshots it took, newest
// first. Everything comes from the transcript's browser tool calls, so the
// tab works whichever process runs the browser and after it closed.

import type { Attachment, SessionState } from "../state/types";
import { MessageAttachments } from "../transcript/Attachments";
import { asRecord, str } from "../transcript/util";
import type { TabProps } from "./tab";

interface BrowserView {
  page: { url: string; title: string } | null;
  closed: boolean;
  shots: { id: string; url?: string; title?: string; shot: Attachment }[];
}

/** What the session's browser tool calls left, oldest call first. */
export function browserView(session: SessionState): BrowserView {
  const v: BrowserView = { page: null, closed: false, shots: [] };
  for (const m of session.items.value) {
    const t = m.sig.value.tool;
    if (!t || !t.name.startsWith("browser_") || t.status !== "ok") continue;
    if (t.name === "browser_close") {
      v.closed = true;
      continue;
    }
    const r = asRecord(t.result);
    const url = str(r?.url);
    if (url) v.page = { url, title: str(r?.title) ?? "" };
    v.closed = false;
    const shot = asRecord(r?.screenshot) as Attachment | null;
    if (shot && typeof shot.path === "string") v.shots.unshift({ id: t.tool_call_id, url, title: str(r?.title), shot });
  }
  return v;
}

/** Whether the session ever used the browser: the tab shows then only. */
export const usedBrowser = (session: SessionState | null): boolean =>
  !!session && session.items.value.some((m) => m.sig.value.tool?.name.startsWith("browser_"));

export function BrowserTab({ session }: TabProps) {
  const v = browserView(session);
  return (
    <div class="browser-tab" data-testid="browser-tab">
      <section class="browser-page" aria-label="Latest page">
        <h3 class="browser-h">{v.closed ? "Latest page (browser closed)" : "Latest page"}</h3>
        {v.page ? (
          <p class="browser-url" data-testid="browser-page">
            <span class="browser-title">{v.page.title || "(untitled)"}</span>
            <span class="browser-link">{v.page.url}</span>
          </p>
        ) : (
          <p class="pane-empty">No page opened yet.</p>
        )}
      </section>
      <section aria-label="Screenshots">
        <h3 class="browser-h">Screenshots ({v.shots.length})</h3>
        {v.shots.length === 0 && <p class="pane-empty">The agent took no screenshot yet.</p>}
        <ol class="browser-shots">
          {v.shots.map((s) => (
            <li key={s.id} data-testid="browser-shot">
              <MessageAttachments items={[s.shot]} />
              <span class="browser-shot-cap">{s.title || s.url || s.shot.name}</span>
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}

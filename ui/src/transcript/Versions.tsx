// Versions of a conversation (issue 15): the "2 / 3" switch on a message
// with other versions, Retry and Edit on a person's message, Continue on a
// cut answer. Each asks the server; the branch it makes comes back as an
// event, and the store reloads the transcript the server folds along it,
// so what shows live is what a reload shows.

import { useState } from "preact/hooks";
import type { Item, SessionState } from "../state/types";
import { useStore } from "../state/context";
import { IArrowLeft, IArrowRight, IPencil } from "../shell/icons";

/** "‹ 2 / 3 ›" under a message whose run has other versions. */
export function VersionNav({ item }: { item: Item }) {
  const store = useStore();
  const v = item.versions;
  const [busy, setBusy] = useState(false);
  if (!v || v.count < 2) return null;
  const go = async (n: number) => {
    setBusy(true);
    await store.selectVersion(item.id, n);
    setBusy(false);
  };
  const operate = store.account.permissions.value.operate;
  return (
    <div class="versions-nav" data-testid="versions-nav">
      <button type="button" class="msg-copy" aria-label="Previous version" data-testid="version-prev"
        disabled={!operate || busy || v.index <= 1} onClick={() => void go(v.index - 1)}>
        <IArrowLeft size={13} />
      </button>
      <span data-testid="version-label" aria-label={`Version ${v.index} of ${v.count}`}>{v.index} / {v.count}</span>
      <button type="button" class="msg-copy" aria-label="Next version" data-testid="version-next"
        disabled={!operate || busy || v.index >= v.count} onClick={() => void go(v.index + 1)}>
        <IArrowRight size={13} />
      </button>
    </div>
  );
}

/** Retry and Edit beside a person's message (operators only). */
export function UserVersionActions({ item, onEdit }: { item: Item; onEdit: () => void }) {
  const store = useStore();
  if (!store.account.permissions.value.operate || item.queued) return null;
  return (
    <>
      <button type="button" class="msg-copy" data-testid="retry-message" aria-label="Retry: answer this message again" title="Retry"
        onClick={() => void store.retry(item.run_id)}>
        <IRetry />
      </button>
      <button type="button" class="msg-copy" data-testid="edit-message" aria-label="Edit this message" title="Edit" onClick={onEdit}>
        <IPencil size={13} />
      </button>
    </>
  );
}

/** The message opened in place: Save & regenerate makes a new version. */
export function EditMessage({ item, onDone }: { item: Item; onDone: () => void }) {
  const store = useStore();
  const [text, setText] = useState(item.text ?? "");
  const [saving, setSaving] = useState(false);
  const save = async () => {
    if (!text.trim()) return;
    setSaving(true);
    const err = await store.editMessage(item.id, text);
    setSaving(false);
    if (!err) onDone();
  };
  return (
    <div class="msg-edit" data-testid="message-edit">
      <textarea aria-label="Edit message" value={text} rows={Math.min(10, Math.max(2, text.split("\n").length))}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") onDone();
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void save();
        }} />
      <div class="msg-edit-actions">
        <button type="button" class="btn btn-sm" onClick={onDone}>Cancel</button>
        <button type="button" class="btn btn-primary btn-sm" data-testid="edit-save" disabled={saving || !text.trim()} onClick={() => void save()}>
          Save &amp; regenerate
        </button>
      </div>
    </div>
  );
}

/** Continue, under an answer cut short. */
export function ContinueButton({ runId }: { runId: string }) {
  const store = useStore();
  if (!store.account.permissions.value.operate) return null;
  return (
    <button type="button" class="btn btn-sm continue-btn" data-testid="continue-answer" onClick={() => void store.continueRun(runId)}>
      Continue
    </button>
  );
}

const IRetry = () => (
  <svg class="icon" width="13" height="13" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    <path d="M4.5 12a7.5 7.5 0 1 0 2.2-5.3M4.5 4.5v4h4" />
  </svg>
);

/** At the end of the transcript after an undo: the turns can come back. */
export function UndoneNote({ session }: { session: SessionState }) {
  const store = useStore();
  const n = session.undone.value;
  if (!n) return null;
  return (
    <div class="undone-note" data-testid="undone-note" role="status">
      <span>{n === 1 ? "1 turn undone" : `${n} turns undone`}</span>
      {store.account.permissions.value.operate && (
        <button type="button" class="btn btn-sm" data-testid="undo-restore" onClick={() => void store.undo(0, true)}>Restore</button>
      )}
    </div>
  );
}

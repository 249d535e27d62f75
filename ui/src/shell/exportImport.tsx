// Export and import of sessions (issue 15): a download of
// GET /api/sessions/{id}/export, and POST /api/sessions/import of a file a
// person picks.

import { useRef } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import type { ActionError } from "../state/contract";
import type { Session } from "../state/types";

/** Downloads the session as Markdown or JSON. */
export async function exportSession(store: Store, id: string, format: "md" | "json"): Promise<ActionError | null> {
  const r = await store.api.blob(`/api/sessions/${id}/export?format=${format}`);
  if (!r.ok) {
    store.toast.value = r.error;
    return r.error;
  }
  const title = store.sessions.peek().find((s) => s.id === id)?.title || id;
  const name = title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || id;
  const url = URL.createObjectURL(r.value);
  const a = document.createElement("a");
  a.href = url;
  a.download = `${name}.${format}`;
  a.dataset.testid = "export-link";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return null;
}

/** Imports a JSON export and opens the new session. */
export async function importSession(store: Store, file: File): Promise<ActionError | null> {
  let doc: unknown;
  try {
    doc = JSON.parse(await file.text());
  } catch {
    const e = { code: "invalid_input", message: `${file.name} is not a JSON export of a Caduceus session.` };
    store.toast.value = e;
    return e;
  }
  const r = await store.api.post<Session>("/api/sessions/import", doc);
  if (!r.ok) {
    store.toast.value = r.error;
    return r.error;
  }
  store.selectSession(r.value.id);
  return null;
}

/** "Import…": a file picker for a JSON export. */
export function ImportButton() {
  const store = useStore();
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" class="sb-new-ws" data-testid="import-session" onClick={() => input.current?.click()}>
        Import a session…
      </button>
      <input
        ref={input}
        type="file"
        accept="application/json,.json"
        hidden
        data-testid="import-file"
        onChange={(e) => {
          const el = e.currentTarget;
          const f = el.files?.[0];
          el.value = "";
          if (f) void importSession(store, f);
        }}
      />
    </>
  );
}

// "New session in another workspace": the directory the session's agent
// works in, offered from the server's workspace roots (GET /api/meta
// workspaces). The server decides: a directory outside every root is
// refused (workspace_not_allowed) and the dialog says so.

import { useEffect, useRef, useState } from "preact/hooks";
import type { Store } from "../../state/contract";
import { trapFocus } from "../../shell/Dialog";

export function WorkspaceDialog({ store, onDone }: { store: Store; onDone: () => void }) {
  const ws = store.meta.value?.workspaces;
  const [path, setPath] = useState(ws?.default ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    return trapFocus(box.current!, onDone);
  }, []);
  const options = [...new Set([ws?.default ?? "", ...(ws?.roots ?? [])].filter(Boolean))];

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const err = await store.createSession(path.trim());
    setBusy(false);
    if (err) {
      store.toast.value = null; // said here, next to the field
      setError(err.message);
      return;
    }
    onDone();
  };

  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onDone()}>
      <div class="modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="ws-dlg-title" data-testid="workspace-dialog">
      <form onSubmit={submit}>
        <h2 id="ws-dlg-title" class="modal-title">New session in a workspace</h2>
        <p class="modal-body">
          The directory the agent works in. It must lie under one of the server's workspace roots:
        </p>
        <ul class="ws-roots">
          {options.map((o) => (
            <li key={o}>
              <button type="button" class="ws-root" onClick={() => setPath(o)} title={`Use ${o}`}>{o}</button>
            </li>
          ))}
        </ul>
        <input
          ref={input}
          class="token-input ws-dlg-input"
          data-testid="workspace-input"
          aria-label="Workspace directory"
          aria-invalid={error ? "true" : undefined}
          spellcheck={false}
          value={path}
          onInput={(e) => {
            setPath((e.target as HTMLInputElement).value);
            setError(null);
          }}
        />
        {error && <p class="fv-error" role="alert" data-testid="workspace-error">{error}</p>}
        <div class="modal-actions">
          <button type="button" class="btn" onClick={onDone}>Cancel</button>
          <button type="submit" class="btn btn-primary" data-testid="workspace-create" disabled={busy || !path.trim()}>Create</button>
        </div>
      </form>
      </div>
    </div>
  );
}

/** Whether the server lets sessions choose among more than its default
 * workspace. */
export function hasOtherWorkspaces(store: Store): boolean {
  const ws = store.meta.value?.workspaces;
  return !!ws && ws.roots.some((r) => r !== ws.default);
}

// The toast: the last failed action, in words, for a few seconds. One at a
// time; a newer error replaces the older one.

import { useSignalEffect } from "@preact/signals";
import { useStore } from "../state/context";
import { IClose } from "./icons";

const SHOW_MS = 7000;

export function Toast() {
  const store = useStore();
  const t = store.toast.value;
  useSignalEffect(() => {
    const cur = store.toast.value;
    if (!cur) return;
    const timer = setTimeout(() => store.toast.value === cur && (store.toast.value = null), SHOW_MS);
    return () => clearTimeout(timer);
  });
  return (
    <div class="toast-region" aria-live="assertive">
      {t && (
        <div class="toast" data-testid="toast" data-code={t.code} role="alert">
          <span class="toast-text">{t.message}</span>
          <button type="button" class="icon-btn sm" aria-label="Dismiss" onClick={() => (store.toast.value = null)}>
            <IClose size={15} />
          </button>
        </div>
      )}
    </div>
  );
}

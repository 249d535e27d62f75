// A modal confirmation: role=dialog, aria-modal, focus kept inside while
// open (Tab wraps), Esc cancels, focus returns to where it was on close.
// The safe button (Cancel) has focus first, so Enter never destroys by
// accident.

import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Keeps Tab inside `root`; returns the cleanup. */
export function trapFocus(root: HTMLElement, onEscape: () => void): () => void {
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onEscape();
      return;
    }
    if (e.key !== "Tab") return;
    const f = [...root.querySelectorAll<HTMLElement>("button, [href], input, select, textarea, [tabindex]:not([tabindex='-1'])")]
      .filter((el) => !el.hasAttribute("disabled") && el.offsetParent !== null);
    if (!f.length) return;
    const first = f[0];
    const last = f[f.length - 1];
    if (e.shiftKey && (document.activeElement === first || !root.contains(document.activeElement))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (document.activeElement === last || !root.contains(document.activeElement))) {
      e.preventDefault();
      first.focus();
    }
  };
  document.addEventListener("keydown", onKey, true);
  return () => document.removeEventListener("keydown", onKey, true);
}

export function ConfirmDialog(props: {
  title: string;
  body: ComponentChildren;
  confirmLabel: string;
  confirmTestId?: string;
  cancelTestId?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    cancel.current?.focus();
    const release = trapFocus(box.current!, props.onCancel);
    return () => {
      release();
      // Back to the button that opened us, if it is still there.
      if (before && document.contains(before)) before.focus();
    };
  }, []);
  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onCancel()}>
      <div class="modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="dlg-title" aria-describedby="dlg-body">
        <h2 id="dlg-title" class="modal-title">{props.title}</h2>
        <p id="dlg-body" class="modal-body">{props.body}</p>
        <div class="modal-actions">
          <button type="button" ref={cancel} class="btn" data-testid={props.cancelTestId} onClick={props.onCancel}>Cancel</button>
          <button type="button" class="btn btn-danger" data-testid={props.confirmTestId} onClick={props.onConfirm}>{props.confirmLabel}</button>
        </div>
      </div>
    </div>
  );
}

// A small menu behind a button (the theme switch, a session row's "⋯" on
// touch screens): opens below the button, arrow keys move between items,
// Esc closes it and gives focus back to the button, a press outside or Tab
// closes it. Items are buttons with menu roles, so they work without a
// pointer.

import type { ComponentChildren, Ref } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";

export interface MenuItem {
  key: string;
  label: string;
  icon?: ComponentChildren;
  /** Set for a choice among several (menuitemradio). */
  checked?: boolean;
  danger?: boolean;
  testid?: string;
  onSelect(): void;
}

export function MenuButton({ label, title, icon, items, testid, menuTestid, class: cls, btnRef, head }: {
  label: string;
  /** Shown above the items, not focusable (e.g. who is signed in). */
  head?: ComponentChildren;
  title?: string;
  icon: ComponentChildren;
  items: MenuItem[];
  testid?: string;
  menuTestid?: string;
  class?: string;
  btnRef?: Ref<HTMLButtonElement>;
}) {
  const [open, setOpen] = useState(false);
  const wrap = useRef<HTMLDivElement>(null);
  const own = useRef<HTMLButtonElement | null>(null);

  const entries = () => Array.from(wrap.current?.querySelectorAll<HTMLElement>("[data-menu-item]") ?? []);

  // Layout effect: focus is in the menu before it is painted, so a key
  // pressed right away already reaches it.
  useLayoutEffect(() => {
    if (!open) return;
    const first = entries().find((e) => e.getAttribute("aria-checked") === "true") ?? entries()[0];
    first?.focus();
    first?.scrollIntoView?.({ block: "nearest" });
    const onDown = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", onDown, true);
    return () => document.removeEventListener("pointerdown", onDown, true);
  }, [open]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) own.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (!open) return;
    const list = entries();
    const i = list.indexOf(document.activeElement as HTMLElement);
    const go = (n: number) => list[(n + list.length) % list.length]?.focus();
    switch (e.key) {
      case "Escape":
        e.preventDefault();
        e.stopPropagation(); // the drawer's own Esc must not close it too
        close(true);
        break;
      case "ArrowDown": e.preventDefault(); go(i + 1); break;
      case "ArrowUp": e.preventDefault(); go(i - 1); break;
      case "Home": e.preventDefault(); go(0); break;
      case "End": e.preventDefault(); go(list.length - 1); break;
      case "Tab": close(false); break;
    }
  };

  return (
    <div class={"menu-wrap" + (cls ? " " + cls : "")} ref={wrap} onKeyDown={onKeyDown}>
      <button
        type="button"
        class={"icon-btn" + (open ? " on" : "")}
        ref={(el) => {
          own.current = el;
          if (typeof btnRef === "function") btnRef(el);
          else if (btnRef) btnRef.current = el;
        }}
        data-testid={testid}
        aria-label={label}
        title={title ?? label}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {icon}
      </button>
      {open && (
        <div class="menu" role="menu" aria-label={label} data-testid={menuTestid}>
          {head && <div class="menu-head" role="presentation">{head}</div>}
          {items.map((it) => (
            <button
              key={it.key}
              type="button"
              class={"menu-item" + (it.danger ? " danger" : "")}
              role={it.checked === undefined ? "menuitem" : "menuitemradio"}
              aria-checked={it.checked === undefined ? undefined : it.checked}
              tabIndex={-1}
              data-menu-item=""
              data-testid={it.testid}
              onClick={() => {
                close(true);
                it.onSelect();
              }}
            >
              {it.icon && <span class="menu-icon">{it.icon}</span>}
              <span class="menu-label">{it.label}</span>
              {it.checked && <span class="menu-check" aria-hidden="true">✓</span>}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

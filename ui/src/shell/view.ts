// View state of the shell: which panels are open, drafts per session. It
// is not the store's business (nothing here touches the server), and it is
// created per App, so nothing lives at module level.

import { signal, type Signal } from "@preact/signals";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Session } from "../state/types";
import { loadTheme, type ThemeChoice } from "./theme";

export interface ViewState {
  /** Phone: the sessions drawer is open. */
  sidebarOpen: Signal<boolean>;
  /** The activity panel is shown (a column on wide screens, an overlay below). */
  activityOpen: Signal<boolean>;
  needsYouOpen: Signal<boolean>;
  helpOpen: Signal<boolean>;
  /** The session whose delete confirmation is open. */
  deleting: Signal<Session | null>;
  /** Unsent composer text per session id ("" key: no session). */
  drafts: Map<string, string>;
  /** Minute ticker for relative times. */
  now: Signal<number>;
  /** Light, dark or the system's (saved in localStorage by the shell). */
  theme: Signal<ThemeChoice>;
}

export const WIDE_QUERY = "(min-width: 1100px)";

export function createViewState(): ViewState {
  const wide = typeof matchMedia === "function" && matchMedia(WIDE_QUERY).matches;
  const now = signal(Date.now());
  setInterval(() => (now.value = Date.now()), 30_000);
  return {
    sidebarOpen: signal(false),
    activityOpen: signal(wide),
    needsYouOpen: signal(false),
    helpOpen: signal(false),
    deleting: signal<Session | null>(null),
    drafts: new Map(),
    now,
    theme: signal(loadTheme()),
  };
}

export const ViewContext = createContext<ViewState | null>(null);

export function useView(): ViewState {
  const v = useContext(ViewContext);
  if (!v) throw new Error("useView outside ViewContext");
  return v;
}

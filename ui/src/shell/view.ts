// View state of the shell: which panels are open, drafts per session. It
// is not the store's business (nothing here touches the server), and it is
// created per App, so nothing lives at module level.

import { signal, type Signal } from "@preact/signals";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { isPaneTab, type PaneTab } from "../workspace/tab";
import { loadTheme, type ThemeChoice } from "./theme";
import { createOrganiseState, type OrganiseState } from "./organise";
import { readSearchAddress, type SearchFilters } from "./searchFilters";

/** What the main column shows: the conversation, or the Settings area
 * (its section in ViewState.section). Both ride in the address's hash
 * (#settings/tokens), so a reload or Back keeps them without the server
 * knowing more paths; the older #tokens and #users still lead there. */
export type Page = "chat" | "settings";

/** The page and Settings section an address's hash names ("" section: the
 * first one the caller may see). */
export function routeOf(hash: string): { page: Page; section: string } {
  if (hash === "#tokens" || hash === "#users") return { page: "settings", section: hash.slice(1) };
  const m = /^#settings(?:\/([a-z0-9-]+))?$/.exec(hash);
  return m ? { page: "settings", section: m[1] ?? "" } : { page: "chat", section: "" };
}

export interface ViewState {
  /** Phone: the sessions drawer is open. */
  sidebarOpen: Signal<boolean>;
  /** The right-hand pane is shown (a column on wide screens, an overlay below). */
  activityOpen: Signal<boolean>;
  /** The pane's tab: the activity feed or a workspace view. */
  paneTab: Signal<PaneTab>;
  needsYouOpen: Signal<boolean>;
  helpOpen: Signal<boolean>;
  /** Unsent composer text per session id ("" key: no session). */
  drafts: Map<string, string>;
  /** Minute ticker for relative times. */
  now: Signal<number>;
  /** Light, dark or the system's (saved in localStorage by the shell). */
  theme: Signal<ThemeChoice>;
  page: Signal<Page>;
  /** The Settings section shown when page is "settings" ("" the first). */
  section: Signal<string>;
  /** The change-password dialog is open. */
  passwordOpen: Signal<boolean>;
  /** The run the Changes tab shows (set by the line under a run in the
   * transcript); null: the whole session. */
  changesRun: Signal<string | null>;
  /** The tool call of that run the Changes tab shows; null: all of it. */
  changesCall: Signal<string | null>;
  /** Organising sessions: projects, archive, selection, undo. */
  organise: OrganiseState;
  // Search (issue 15).
  /** A transcript item to scroll to once its session shows (a search hit). */
  focusItem: Signal<{ session: string; item: string } | null>;
  /** Text for the composer to take (a command picked in the palette). */
  composerInsert: Signal<string | null>;
  /** The command palette (Ctrl/Cmd-K) is open. */
  paletteOpen: Signal<boolean>;
  /** The run whose journal viewer is open (null: none). */
  journalRun: Signal<string | null>;
  /** What narrows the message hits (kept in the address with the text). */
  searchFilters: Signal<SearchFilters>;
}

/** Shows `p` in the main column (for Settings, its `section`, or the
 * first), as a new history entry. */
export function openPage(view: ViewState, p: Page, section = ""): void {
  const hash = p === "chat" ? "" : section ? `#settings/${section}` : "#settings";
  if (location.hash !== hash) history.pushState(null, "", location.pathname + location.search + hash);
  view.page.value = p;
  view.section.value = section;
  view.sidebarOpen.value = false;
}

export const WIDE_QUERY = "(min-width: 1100px)";

export function createViewState(): ViewState {
  const wide = typeof matchMedia === "function" && matchMedia(WIDE_QUERY).matches;
  const now = signal(Date.now());
  setInterval(() => (now.value = Date.now()), 30_000);
  const first = routeOf(location.hash);
  const page = signal<Page>(first.page);
  const section = signal(first.section);
  // Back and Forward move between pages (pushState fires no hashchange).
  const follow = () => {
    const r = routeOf(location.hash);
    page.value = r.page;
    section.value = r.section;
  };
  window.addEventListener("popstate", follow);
  window.addEventListener("hashchange", follow);
  return {
    sidebarOpen: signal(false),
    activityOpen: signal(wide),
    paneTab: signal<PaneTab>(loadPaneTab()),
    needsYouOpen: signal(false),
    helpOpen: signal(false),
    drafts: new Map(),
    now,
    theme: signal(loadTheme()),
    page,
    section,
    passwordOpen: signal(false),
    changesRun: signal<string | null>(null),
    changesCall: signal<string | null>(null),
    organise: createOrganiseState(),
    focusItem: signal<{ session: string; item: string } | null>(null),
    composerInsert: signal<string | null>(null),
    paletteOpen: signal(false),
    journalRun: signal<string | null>(null),
    searchFilters: signal(readSearchAddress(location.search).filters),
  };
}

export const ViewContext = createContext<ViewState | null>(null);

export function useView(): ViewState {
  const v = useContext(ViewContext);
  if (!v) throw new Error("useView outside ViewContext");
  return v;
}

function loadPaneTab(): PaneTab {
  try {
    const t = localStorage.getItem("caduceus.paneTab");
    return isPaneTab(t) ? t : "activity";
  } catch {
    return "activity";
  }
}

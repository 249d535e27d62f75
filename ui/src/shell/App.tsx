// The workbench layout: sessions sidebar | main column (header, transcript,
// queued tray, composer; or an account page) | activity panel. On narrow
// screens the sidebar is a drawer and the activity panel an overlay. Global
// shortcuts live here. Before any of it, the sign-in page when the server
// wants a person to sign in (store.account.gate).

import { useSignalEffect } from "@preact/signals";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { Transcript } from "../transcript/Transcript";
import { PasswordDialog } from "./Account";
import { Palette } from "./Palette";
import { JournalDialog } from "../transcript/Journal";
import { Composer } from "./Composer";
import { GoalBar } from "./GoalBar";
import { Header } from "./Header";
import { RunnerBanner } from "./RunnerBanner";
import { isMac } from "./format";
import { IPlus, Logo } from "./icons";
import { newSession } from "./newSession";
import { Sidebar } from "./Sidebar";
import { SignIn } from "./SignIn";
import { applyTheme } from "./theme";
import { Toast } from "./Toast";
import { JobToast } from "./JobToast"; // h17-jobsui
import { TokenDialog } from "./TokenDialog";
import { LazySettings } from "./LazySettings";
import { createViewState, useView, ViewContext, WIDE_QUERY } from "./view";
import { WorkspacePane } from "../workspace/Pane";

export function App() {
  const view = useMemo(createViewState, []);
  return (
    <ViewContext.Provider value={view}>
      <Gate />
    </ViewContext.Provider>
  );
}

/** The sign-in page, or the workbench once the server lets us in. */
function Gate() {
  const store = useStore();
  const view = useView();
  // The chosen theme on <html> (theme.js already set it before the first
  // paint); "system" keeps following the system setting.
  useSignalEffect(() => applyTheme(view.theme.value));
  const gate = store.account.gate.value;
  if (gate === "loading") return <div class="app-loading" aria-busy="true" />;
  if (gate === "signin") return <SignIn />;
  return <Shell />;
}

function Shell() {
  const store = useStore();
  const view = useView();
  const s = store.active.value;
  const page = view.page.value;

  useShortcuts();

  // Opening a session (from the sidebar, a notification, Back) shows the
  // conversation again.
  const shownId = useRef(store.activeId.value);
  useSignalEffect(() => {
    const id = store.activeId.value;
    if (id === shownId.current) return;
    shownId.current = id;
    view.page.value = "chat";
  });

  // The tab title names the session and counts what waits for a person.
  useSignalEffect(() => {
    const id = store.activeId.value;
    const title = id ? store.sessions.value.find((x) => x.id === id)?.title || "New session" : "";
    const n = store.pending.value.length;
    document.title = `${n ? `(${n}) ` : ""}${title ? `${title} · ` : ""}Caduceus`;
  });

  // Crossing the wide breakpoint resets the activity panel to its default
  // there (column when wide, closed overlay when narrow).
  useEffect(() => {
    const mq = matchMedia(WIDE_QUERY);
    const on = () => (view.activityOpen.value = mq.matches);
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, []);

  // The activity of a session has no place beside an account page.
  const activity = view.activityOpen.value && page === "chat";
  const drawer = view.sidebarOpen.value;

  return (
    <div class={"app" + (activity ? " with-activity" : "") + (activity && view.paneTab.value !== "activity" ? " with-wide-pane" : "")}>
      <a class="skip-link" href="#composer-anchor" onClick={(e) => {
        e.preventDefault();
        (document.querySelector("[data-testid=composer]") as HTMLElement | null)?.focus();
      }}>Skip to message box</a>
      <Sidebar />
      {drawer && <div class="scrim scrim-sidebar" onClick={() => (view.sidebarOpen.value = false)} aria-hidden="true" />}
      <main class="main" aria-label={page === "chat" ? "Conversation" : "Settings"}>
        {page === "settings" ? <LazySettings /> : (
          <>
            <Header />
            <GoalBar session={s} />
            <RunnerBanner />
            <div class="main-body">
              {s ? <Transcript session={s} /> : <EmptyState />}
            </div>
            <span id="composer-anchor" />
            <Composer session={s} />
          </>
        )}
      </main>
      {activity && (
        <>
          <div class="scrim scrim-activity" onClick={() => (view.activityOpen.value = false)} aria-hidden="true" />
          <WorkspacePane session={s} />
        </>
      )}
      {view.paletteOpen.value && <Palette />}
      {view.journalRun.value && <JournalDialog runId={view.journalRun.value} onClose={() => (view.journalRun.value = null)} />}
      {view.passwordOpen.value && <PasswordDialog />}
      <Toast />
      <JobToast />
      {store.auth.value && <TokenDialog />}
    </div>
  );
}

function EmptyState() {
  const store = useStore();
  const demo = store.meta.value?.demo_model;
  const operate = store.account.permissions.value.operate;
  return (
    <div class="empty">
      <div class="empty-inner">
        <Logo size={44} />
        <h2>{operate ? "Start a session" : "Pick a session to follow"}</h2>
        <p class="empty-lead">A session is one conversation with an agent working in your workspace. Everything it does is recorded, and commands wait for {operate ? "your" : "an operator's"} approval.</p>
        {operate && (
          <button type="button" class="btn btn-primary btn-lg" data-testid="empty-new-session" onClick={() => void newSession(store)}>
            <IPlus size={18} /> New session
          </button>
        )}
        <ul class="empty-hints">
          {demo && <li><strong>Offline demo model.</strong> Try “list the files”, “run a command” or “ask me a question”.</li>}
          <li>Press <kbd>/</kbd> to type a message, <kbd>{isMac() ? "⌘" : "Ctrl"}</kbd>+<kbd>K</kbd> to search sessions, messages and commands; <code>/help</code> lists the commands.</li>
        </ul>
      </div>
    </div>
  );
}

/** Ctrl/Cmd+K: the command palette. "/" (when nothing has focus): the composer. */
function useShortcuts() {
  const view = useView();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        view.paletteOpen.value = !view.paletteOpen.value; // the command palette (Palette.tsx)
        return;
      }
      const el = document.activeElement;
      const idle = !el || el === document.body || el === document.documentElement;
      if (e.key === "/" && idle && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        (document.querySelector("[data-testid=composer]") as HTMLTextAreaElement | null)?.focus();
        return;
      }
      if (e.key === "Escape" && view.sidebarOpen.value) view.sidebarOpen.value = false;
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}

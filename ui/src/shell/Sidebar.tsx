// The sessions sidebar: brand, New session, search, and the list (newest
// first) with status badges, inline rename and delete with undo.
// A row's title has the row's full width: rename and delete appear over its
// end on hover or keyboard focus, and on touch screens (no hover) behind a
// "⋯" menu. On phones it is an off-canvas drawer opened from the header.
// The list is paged: scrolling to its end (or "Load more") fetches the next
// page. Organising sessions (issue 15): the list is grouped (Pinned, Today,
// Yesterday, Previous 7 days, Older), filtered by project or showing the
// archived sessions (Projects.tsx, organise.ts), and rows can be selected
// several at a time.

import { useSignal } from "@preact/signals";
import { useEffect, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import { sessionPath } from "../state/store";
import { sortSessions } from "../state/sessionList";
import type { Session } from "../state/types";
import { isMac, relTime, statusText, waitsForPerson } from "./format";
import { IClose, IDownload, IMore, IPencil, IPlus, ISearch, ISettings, ITrash, Logo } from "./icons";
import { MenuButton, type MenuItem } from "./Menu";
import { deleteWithUndo, groupSessions, hiddenIds, organise, projectList, toggleSelected } from "./organise";
import { BulkBar, ProjectBar, ProjectDialog, UndoToast } from "./Projects";
import { newSession } from "./newSession";
import { exportSession, ImportButton } from "./exportImport";
import { SearchHits } from "./SearchHits";
import { toneClass } from "./status";
import { ThemeSwitch } from "./ThemeSwitch";
import { openPage, useView } from "./view";
import { hasOtherWorkspaces, WorkspaceDialog } from "../workspace/files/WorkspaceDialog";

export function Sidebar() {
  const store = useStore();
  const view = useView();
  const list = store.visibleSessions.value;
  const filter = store.sessionFilter.value;
  const version = store.meta.value?.version;
  const [chooseWS, setChooseWS] = useState(false);

  const o = view.organise;
  const create = async () => {
    view.sidebarOpen.value = false;
    // In a project's list, a new session is made in that project.
    const project = o.projects.peek().find((p) => p.id === o.filter.peek());
    if (project) {
      await store.createSession(undefined, project.id);
      return;
    }
    await newSession(store);
  };
  const archivedView = o.filter.value === "archived";
  const hidden = hiddenIds(o);
  const q = filter.trim().toLowerCase();
  const matches = (s: Session) => !q || (s.title || "new session").toLowerCase().includes(q);
  const shown = (archivedView
    ? archivedList(o.archived.value, list).filter(matches)
    : (o.filter.value === "" ? list : projectList(list, o.inProject.value.filter(matches), o.filter.value)).filter((s) => !s.archived_at)
  ).filter((s) => !hidden.has(s.id));
  const groups = archivedView ? [{ key: "archived", label: "Archived", sessions: shown }] : groupSessions(shown, view.now.value);

  // The undo toast is the page's, not the drawer's: inside the phone's
  // drawer it was cut off at the drawer's edge.
  return (
    <>
    <UndoToast o={o} />
    <aside class={"sidebar" + (view.sidebarOpen.value ? " open" : "")} aria-label="Sessions" id="sidebar">
      <div class="sb-top">
        <div class="brand">
          <Logo />
          <span class="brand-name">Caduceus</span>
          {version && <span class="brand-version" title="Server version">{version}</span>}
          <ThemeSwitch where="sidebar" />
          <button type="button" class="icon-btn sb-close" aria-label="Close sessions" onClick={() => (view.sidebarOpen.value = false)}>
            <IClose />
          </button>
        </div>
        {store.account.permissions.value.operate && (
          <button type="button" class="btn btn-primary sb-new" data-testid="new-session" onClick={create}>
            <IPlus size={16} /> New session
          </button>
        )}
        {store.account.permissions.value.operate && hasOtherWorkspaces(store) && (
          <button type="button" class="sb-new-ws" data-testid="new-session-workspace" onClick={() => { view.sidebarOpen.value = false; setChooseWS(true); }}>
            …in another workspace
          </button>
        )}
        {store.account.permissions.value.operate && <ImportButton />}
        {chooseWS && <WorkspaceDialog store={store} onDone={() => setChooseWS(false)} />}
        <label class="sb-search">
          <ISearch size={15} />
          <input
            type="search"
            data-testid="session-search"
            id="session-search"
            placeholder="Search sessions and messages"
            aria-label="Search session titles and messages"
            value={filter}
            onInput={(e) => (store.sessionFilter.value = e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape" && filter) {
                e.stopPropagation();
                store.sessionFilter.value = "";
              }
            }}
          />
          <kbd class="sb-kbd" aria-hidden="true">{isMac() ? "⌘K" : "Ctrl K"}</kbd>
        </label>
        <ProjectBar />
        <BulkBar />
      </div>
      {o.editing.value && <ProjectDialog key={typeof o.editing.value === "string" ? "new" : o.editing.value.id} />}
      <nav class="sb-list-wrap" aria-label="Session list">
        <ul class="sb-list" data-testid="session-list">
          {groups.flatMap((g) => [
            shown.length > 0 && (
              <li key={"group-" + g.key} class="sb-group" data-testid="session-group" data-group={g.key} role="presentation">{g.label}</li>
            ),
            ...g.sessions.map((s) => (
              <SessionRow key={s.id} s={s} active={s.id === store.activeId.value} />
            )),
          ])}
        </ul>
        {shown.length === 0 && (archivedView || !store.sessionsMore.value) && (
          <p class="sb-empty">{filter ? `No session title contains “${filter}”.` : archivedView ? "No archived sessions." : o.filter.value ? "No sessions in this project yet." : "No sessions yet."}</p>
        )}
        {!archivedView && store.sessionsMore.value && <MoreSessions />}
        <SearchHits q={filter} />
      </nav>
      <SettingsLink />
    </aside>
    </>
  );
}

/** The Archived view: the archived sessions fetched when it opened, kept
 * live by the sessions the store holds (the stream's session.updated):
 * one archived since (here or in another tab) joins, one unarchived
 * leaves. */
function archivedList(fetched: Session[], held: Session[]): Session[] {
  const live = new Map(held.map((s) => [s.id, s]));
  const ids = new Set(fetched.map((s) => s.id));
  return sortSessions([
    ...fetched.filter((s) => {
      const h = live.get(s.id);
      return !h || !!h.archived_at;
    }),
    ...held.filter((s) => s.archived_at && !ids.has(s.id)),
  ]);
}

/** The end of a list with more pages: loads the next one when it scrolls
 * into view (and again while it stays in view, e.g. a search that matches
 * little), or on click. After a failure only a click tries again. */
function MoreSessions() {
  const store = useStore();
  const loading = useSignal(false);
  const failed = useSignal(false);
  const ref = useRef<HTMLButtonElement>(null);
  const more = (auto: boolean) => {
    if (loading.peek() || (auto && failed.peek())) return;
    loading.value = true;
    void store.loadMoreSessions().then((err) => {
      failed.value = err !== null;
      loading.value = false;
    });
  };
  // A fresh observer after every load: its first report says whether the
  // button is still in view once the page came in.
  const idle = !loading.value;
  useEffect(() => {
    const el = ref.current;
    if (!idle || !el || typeof IntersectionObserver !== "function") return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && more(true), {
      root: el.closest(".sb-list-wrap"),
      rootMargin: "0px 0px 200px 0px",
    });
    io.observe(el);
    return () => io.disconnect();
  }, [idle]);
  return (
    <div class="sb-more">
      <button type="button" ref={ref} class="btn btn-sm sb-more-btn" data-testid="sessions-more" onClick={() => more(false)} disabled={loading.value} aria-busy={loading.value}>
        {loading.value ? "Loading…" : "Load more sessions"}
      </button>
    </div>
  );
}

function SessionRow({ s, active }: { s: Session; active: boolean }) {
  const store = useStore();
  const view = useView();
  const renaming = useSignal(false);
  const renameBtn = useRef<HTMLButtonElement>(null);
  const menuBtn = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  // Leaving the rename box by keyboard puts focus back on the control that
  // opened it: the rename button, or the "⋯" menu on touch screens.
  useEffect(() => {
    if (!renaming.value && refocus.current) {
      refocus.current = false;
      const btn = [renameBtn.current, menuBtn.current].find((b) => b && b.getClientRects().length > 0);
      btn?.focus();
    }
  });
  const name = s.title || "New session";
  // Renaming and deleting change the session: an operator's (a viewer
  // gets the plain link).
  const edit = store.account.permissions.value.operate;
  const busy = s.status !== "idle" && s.status !== "interrupted";
  const needsYou = waitsForPerson(s.status);

  const o = view.organise;
  const selecting = o.selecting.value;
  const organiseItems: MenuItem[] = [
    { key: "pin", label: s.pinned ? "Unpin" : "Pin", testid: "session-pin", onSelect: () => void organise(store, o, s.id, { pinned: !s.pinned }) },
    { key: "archive", label: s.archived_at ? "Unarchive" : "Archive", testid: "session-archive", onSelect: () => void organise(store, o, s.id, { archived: !s.archived_at }) },
    ...o.projects.value.filter((p) => p.id !== s.project_id).map((p) => ({
      key: "move-" + p.id, label: `Move to ${p.name}`, testid: "session-move", onSelect: () => void organise(store, o, s.id, { project_id: p.id }),
    })),
    ...(s.project_id ? [{ key: "unproject", label: "Remove from project", testid: "session-unproject", onSelect: () => void organise(store, o, s.id, { project_id: null }) }] : []),
    { key: "select", label: "Select", testid: "session-select", onSelect: () => { o.selecting.value = true; toggleSelected(o, s.id); } },
  ];
  const deleteNow = () => deleteWithUndo(store, o, [s.id], "Deleted “" + name + "”");

  const open = (e: MouseEvent) => {
    // Shift-click selects (and starts selecting); in selection mode a
    // click toggles the row.
    if (edit && e.button === 0 && (e.shiftKey || selecting)) {
      e.preventDefault();
      o.selecting.value = true;
      toggleSelected(o, s.id);
      return;
    }
    // Keep ctrl/middle-click "open in new tab" working: it is a real link.
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    store.selectSession(s.id);
    view.sidebarOpen.value = false;
  };

  return (
    <li
      class={"sb-item" + (active ? " active" : "") + (needsYou ? " needs-you" : "") + (s.pinned ? " pinned" : "")}
      data-testid="session-item"
      data-session-id={s.id}
      data-pinned={s.pinned ? "true" : undefined}
      aria-current={active ? "page" : undefined}
    >
      {selecting && edit && (
        <input type="checkbox" class="sb-check" data-testid="session-check" aria-label={`Select “${name}”`}
          checked={o.selected.value.has(s.id)} onChange={() => toggleSelected(o, s.id)} />
      )}
      {renaming.value ? (
        <RenameInput s={s} done={(keyboard) => {
          refocus.current = keyboard;
          renaming.value = false;
        }} />
      ) : (
        <a class="sb-link" href={sessionPath(s.id)} onClick={open}>
          <span class={"sb-title" + (s.title ? "" : " placeholder")} title={s.title || undefined}>{name}</span>
          <span class="sb-meta">
            {s.delegated_by && <span class="sb-sub" data-testid="session-subagent" title="A subagent's session: a delegate call made it">subagent</span>}
            {needsYou && <span class="sb-needs" data-testid="session-needs-you" title="Waits for you" role="img" aria-label="Waits for you">●</span>}
            {busy && (
              <span class={"badge badge-" + s.status + " " + toneClass(s.status)} data-testid="session-badge" data-status={s.status}>
                <span class="dot" aria-hidden="true" />
                {statusText(s.status)}
              </span>
            )}
            <time class="sb-time" dateTime={s.updated_at} title={new Date(s.updated_at).toLocaleString()}>
              {relTime(s.updated_at, view.now.value)}
            </time>
          </span>
        </a>
      )}
      {!renaming.value && edit && !selecting && (
        <span class="sb-actions">
          <button type="button" ref={renameBtn} class="icon-btn sm" data-testid="session-rename" aria-label={`Rename “${name}”`} title="Rename" onClick={() => (renaming.value = true)}>
            <IPencil size={15} />
          </button>
          <button type="button" class="icon-btn sm danger" data-testid="session-delete" aria-label={`Delete “${name}”`} title="Delete (undo for a few seconds)" onClick={() => deleteNow()}>
            <ITrash size={15} />
          </button>
          {/* After delete: Tab from rename reaches delete first, as before. */}
          <MenuButton
            class="sb-org-menu"
            testid="session-organise"
            menuTestid="session-organise-list"
            label={`Organise “${name}”`}
            title="Pin, archive, move to a project, export"
            icon={<IMore size={16} />}
            items={[
              ...organiseItems,
              // Export sits in this menu, not beside it: four icons on a
              // hovered row covered half of it, and a click on the row's
              // middle landed on one instead of opening the session.
              { key: "export-md", label: "Export as Markdown", icon: <IDownload size={15} />, testid: "session-export-md", onSelect: () => void exportSession(store, s.id, "md") },
              { key: "export-json", label: "Export as JSON", icon: <IDownload size={15} />, testid: "session-export-json", onSelect: () => void exportSession(store, s.id, "json") },
              { key: "delete", label: "Delete", icon: <ITrash size={15} />, danger: true, testid: "session-delete-undo", onSelect: deleteNow },
            ]}
          />
        </span>
      )}
      {!renaming.value && edit && !selecting && (
        <MenuButton
          class="sb-menu"
          btnRef={menuBtn}
          testid="session-menu"
          menuTestid="session-menu-list"
          label={`Actions for “${name}”`}
          title="Rename, export or delete"
          icon={<IMore size={16} />}
          items={[
            { key: "rename", label: "Rename", icon: <IPencil size={15} />, testid: "session-menu-rename", onSelect: () => (renaming.value = true) },
            { key: "export-md", label: "Export as Markdown", icon: <IDownload size={15} />, testid: "session-menu-export-md", onSelect: () => void exportSession(store, s.id, "md") },
            { key: "export-json", label: "Export as JSON", icon: <IDownload size={15} />, testid: "session-menu-export-json", onSelect: () => void exportSession(store, s.id, "json") },
            ...organiseItems,
            { key: "delete", label: "Delete", icon: <ITrash size={15} />, danger: true, testid: "session-menu-delete", onSelect: deleteNow },
          ]}
        />
      )}
    </li>
  );
}

function RenameInput({ s, done }: { s: Session; done: (keyboard: boolean) => void }) {
  const store = useStore();
  const ref = useRef<HTMLInputElement>(null);
  const saving = useRef(false);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const save = async (keyboard: boolean) => {
    if (saving.current) return;
    saving.current = true;
    const title = ref.current?.value.trim() ?? "";
    if (title !== s.title) await store.renameSession(s.id, title);
    done(keyboard);
  };
  return (
    <input
      ref={ref}
      class="sb-rename"
      data-testid="session-rename-input"
      aria-label="Session title"
      defaultValue={s.title}
      maxLength={200}
      onKeyDown={(e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          void save(true);
        } else if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          saving.current = true; // a blur follows; it must not save
          done(true);
        }
      }}
      onBlur={() => void save(false)}
    />
  );
}

/** The way to the Settings area, at the foot of the sidebar. Everyone
 * who reads may see some of it (the agents' profiles at least); what a
 * role may not use is left out there. */
function SettingsLink() {
  const view = useView();
  const here = view.page.value === "settings";
  return (
    <div class="sb-foot">
      <a href="#settings" class={"sb-settings" + (here ? " current" : "")} data-testid="open-settings" aria-current={here ? "page" : undefined}
        onClick={(e) => {
          e.preventDefault();
          openPage(view, "settings");
        }}>
        <ISettings size={16} /> Settings
      </a>
    </div>
  );
}

// The "needs you" panel: every pending approval and question of every
// session, answerable in place, each with a link to its session; plus the
// browser-notification switch (seed 003).

import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import type { HumanRequest, Session } from "../state/types";
import { sessionPath } from "../state/store";
import { RequestCard } from "../transcript/RequestCard";
import { IArrowRight, IBell, IBellOff, IClose } from "./icons";
import { useView } from "./view";

/** Sessions whose run is paused (a budget, a loop, a person): they wait
 * for someone to resume or stop them (h16-budgets). */
export function pausedSessions(store: Store): Session[] {
  return store.sessions.value.filter((s) => s.status === "paused");
}

export function NeedsYouPanel() {
  const store = useStore();
  const view = useView();
  const box = useRef<HTMLDivElement>(null);
  const reqs = store.pending.value;
  const paused = pausedSessions(store);
  const titles = new Map(store.sessions.value.map((s) => [s.id, s.title || "New session"]));
  // A subagent's request names its parent: from the API, or, for one that
  // arrived live, from the child session's delegated_by.
  const parentOf = (r: HumanRequest) => {
    if (r.parent) return r.parent;
    const by = store.sessions.value.find((s) => s.id === r.session_id)?.delegated_by;
    return by ? { session_id: by.session_id, title: titles.get(by.session_id) ?? "" } : undefined;
  };
  const close = () => (view.needsYouOpen.value = false);

  useEffect(() => {
    box.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        close();
        (document.querySelector("[data-testid=needs-you]") as HTMLElement | null)?.focus();
      }
    };
    // Outside clicks close; the bell toggles by itself.
    const onDown = (e: MouseEvent) => {
      const t = e.target as Node;
      if (box.current && !box.current.contains(t) && !(t instanceof Element && t.closest("[data-testid=needs-you]"))) close();
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("mousedown", onDown);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("mousedown", onDown);
    };
  }, []);

  const go = (e: MouseEvent, sid: string) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    store.selectSession(sid);
    close();
  };

  return (
    <div class="popover needs-you-panel" data-testid="needs-you-panel" role="dialog" aria-label="Waiting for you" tabIndex={-1} ref={box}>
      <div class="pop-head">
        <h2 class="pop-title">Needs you{reqs.length + paused.length > 0 && <span class="pop-count">{reqs.length + paused.length}</span>}</h2>
        <NotifySwitch />
        <button type="button" class="icon-btn sm" aria-label="Close" onClick={close}><IClose size={16} /></button>
      </div>
      <div class="pop-body">
        {paused.length > 0 && (
          <ul class="ny-list" data-testid="needs-you-paused">
            {paused.map((s) => (
              <li key={s.id} class="ny-item">
                <div class="ny-session">
                  <span class="ny-title">{s.title || "New session"}</span>
                  {s.id !== store.activeId.value ? (
                    <a class="ny-go" href={sessionPath(s.id)} onClick={(e) => go(e, s.id)}>
                      Go to session <IArrowRight size={14} />
                    </a>
                  ) : (
                    <span class="ny-here">This session</span>
                  )}
                </div>
                <p class="pop-empty">Paused: resume it, raising its limit, or stop it.</p>
              </li>
            ))}
          </ul>
        )}
        {reqs.length === 0 ? (
          <p class="pop-empty">Nothing is waiting for you. Approvals and questions from every session show up here.</p>
        ) : (
          <ul class="ny-list">
            {reqs.map((r) => (
              <li key={r.id} class="ny-item">
                <div class="ny-session">
                  <span class="ny-title">
                    {titles.get(r.session_id) ?? "Session"}
                    {parentOf(r) && (
                      <span class="ny-parent" data-testid="needs-you-parent">
                        {" "}· subagent of <a href={sessionPath(parentOf(r)!.session_id)} onClick={(e) => go(e, parentOf(r)!.session_id)}>{parentOf(r)!.title || "a session"}</a>
                      </span>
                    )}
                  </span>
                  {r.session_id !== store.activeId.value ? (
                    <a class="ny-go" href={sessionPath(r.session_id)} onClick={(e) => go(e, r.session_id)}>
                      Go to session <IArrowRight size={14} />
                    </a>
                  ) : (
                    <span class="ny-here">This session</span>
                  )}
                </div>
                <RequestCard req={r} />
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

function NotifySwitch() {
  const store = useStore();
  const n = store.notify.value;
  if (n === "unsupported") return null;
  if (n === "denied") return <span class="ny-notify muted-text" title="Notifications are blocked in this browser's site settings">Notifications blocked</span>;
  if (n === "default") {
    return (
      <button type="button" class="btn btn-sm" onClick={() => void store.enableNotifications()} title="Get a browser notification when an agent needs you">
        <IBell size={14} /> Notify me
      </button>
    );
  }
  const muted = n === "muted";
  return (
    <button type="button" class="btn btn-sm" aria-pressed={muted} onClick={() => store.toggleMute()} title={muted ? "Notifications are muted" : "Notifications are on"}>
      {muted ? <><IBellOff size={14} /> Unmute</> : <><IBell size={14} /> Mute</>}
    </button>
  );
}

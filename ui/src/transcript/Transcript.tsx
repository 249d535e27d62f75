// The scrolling transcript of one session.
//
// Long sessions: only the newest PAGE items are mounted at first; earlier
// ones are prepended a page at a time when the person scrolls near the top
// (keeping what they look at in place), and every entry uses
// `content-visibility: auto` so off-screen entries cost no layout or paint.
//
// Scrolling (seed 003): while the view is at the bottom it follows new
// content; once the person scrolls up it stays put and a "↓ N new" pill
// counts what arrived below (a streaming message counts once). Sending a
// message jumps back to the bottom and pins again (see pin.ts).

import { computed } from "@preact/signals";
import { Fragment } from "preact";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { resumableRun, stalledRuns } from "../state/reducer";
import type { ItemModel, SessionState } from "../state/types";
import { useStore } from "../state/context";
import { useView } from "../shell/view";
import { RunChangesLine } from "../workspace/RunChanges";
import { useCheckpoints } from "../workspace/changes";
import { ItemView, ResumeBar, TranscriptCtx, type TranscriptEnv } from "./Items";
import { LineageBanner } from "./Branch";
import { UndoneNote } from "./Versions";
import { onTranscriptPin } from "./pin";

const PAGE = 80;
const BOTTOM_SLACK = 40; // px from the bottom that still counts as "at the bottom"

export function Transcript({ session }: { session: SessionState }) {
  // A fresh view (scroll state, paging) per session.
  return <TranscriptView key={session.id} session={session} />;
}

/** How much content an item has; an item whose size changed while the
 * person is scrolled up (streaming text, live tool output) counts as new. */
function contentSize(m: ItemModel): number {
  const it = m.sig.peek();
  return (it.text?.length ?? 0) + (it.tool?.live_output?.length ?? 0) + (it.tool?.output?.length ?? 0);
}
const TAIL = 6; // items at the end checked for growth

/** The transcript's views of one session's state. Each returns its previous
 * value while nothing it shows changed, so entries reading it do not
 * re-render on every update (tool output, deltas, usage). */
function sessionViews(session: SessionState): Pick<TranscriptEnv, "resume" | "stalled"> {
  let lastStalled = new Set<string>();
  const stalled = computed(() => {
    const next = stalledRuns(session.runs.value);
    const prev = lastStalled;
    if (next.size === prev.size && [...next].every((id) => prev.has(id))) return prev;
    return (lastStalled = next);
  });
  // The Resume button goes on the run's last notice (the diagnostic saying
  // why it stopped). Kind and run of an item never change: peek is enough.
  const resume = computed(() => {
    const run = resumableRun(session.runs.value);
    if (!run) return null;
    const list = session.items.value;
    for (let i = list.length - 1; i >= 0; i--) {
      const it = list[i].sig.peek();
      if (it.run_id === run.id && it.kind === "notice") return { run, anchor: it.id };
    }
    return { run, anchor: null };
  });
  return { stalled, resume };
}

function TranscriptView({ session }: { session: SessionState }) {
  const items = session.items.value;
  const loaded = session.loaded.value;

  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);

  // Paging: the id of the first mounted item. Anchored by id, not index, so
  // new items at the end do not slide the window.
  const anchor = useRef<string | null>(null);
  const [, setPageTick] = useState(0);
  // Where the first visible item sat before a prepend, to restore it.
  const restore = useRef<{ id: string; offset: number } | null>(null);

  const atBottom = useRef(true);
  const lastTop = useRef(0); // scrollTop at the last scroll event
  const initialScrollDone = useRef(false);
  // When the person scrolled away: the ids present, and the content size of
  // the last few (the ones that may still be streaming).
  const seen = useRef<Set<string> | null>(null);
  const seenSize = useRef(new Map<string, number>());
  const counted = useRef(new Set<string>());
  const [newCount, setNewCount] = useState(0);
  const [announcement, setAnnouncement] = useState("");

  let start = anchor.current ? items.findIndex((m) => m.id === anchor.current) : -1;
  if (start < 0) {
    start = Math.max(0, items.length - PAGE);
    // Pin the window once the snapshot is in; before that it slides.
    anchor.current = loaded && items.length ? items[start].id : null;
  }
  const shown = start > 0 ? items.slice(start) : items;

  // Derived per session object, not per id: the store swaps in a fresh
  // model for the same id when the first snapshot arrives, and a computed
  // bound to the placeholder would never update.
  const env = useMemo<TranscriptEnv>(
    () => ({
      ...sessionViews(session),
      announce: (text: string) => setAnnouncement(text.length > 400 ? text.slice(0, 400) + "…" : text),
    }),
    [session],
  );
  const resume = env.resume;
  // Finished runs that took checkpoints get "N files changed" under them.
  const store = useStore();
  const checkpoints = useCheckpoints(store.api, session);
  const runs = session.runs.value;
  const changedRuns = useMemo(() => {
    const ended = new Set(runs.filter((r) => r.terminal).map((r) => r.id));
    return new Set(checkpoints.filter((c) => c.run_id && !c.tool_call_id && ended.has(c.run_id)).map((c) => c.run_id!));
  }, [checkpoints, runs]);
  const unanchored = resume.value && !resume.value.anchor ? resume.value.run : null;

  const scrollToBottom = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    el.scrollTop = el.scrollHeight;
    lastTop.current = el.scrollTop;
    atBottom.current = true;
    seen.current = null;
    counted.current.clear();
    setNewCount(0);
  }, []);

  // The person sent a message: show it (and what follows) whatever they
  // were reading.
  useEffect(() => onTranscriptPin(session.id, scrollToBottom), [session.id, scrollToBottom]);

  const measureAtBottom = () => {
    const el = scroller.current!;
    return el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK;
  };

  // Pinned → unpinned only when the person moves up: scrollTop went down
  // and the view is now clearly above the bottom. Content growing below
  // (streaming, entries rendering at their real size after a jump) never
  // unpins, and neither do the browser's own anchoring adjustments, which
  // keep the distance to the bottom unchanged.
  const onScroll = () => {
    const el = scroller.current!;
    const top = el.scrollTop;
    const movedUp = top < lastTop.current - 1;
    lastTop.current = top;
    const at = measureAtBottom();
    if (at && !atBottom.current) {
      atBottom.current = true;
      seen.current = null;
      counted.current.clear();
      setNewCount(0);
    } else if (!at && atBottom.current && movedUp) {
      atBottom.current = false;
      const list = session.items.peek();
      seen.current = new Set(list.map((m) => m.id));
      seenSize.current.clear();
      for (let i = Math.max(0, list.length - TAIL); i < list.length; i++) seenSize.current.set(list[i].id, contentSize(list[i]));
    }
  };

  // Count items that arrived while scrolled up.
  useEffect(() => {
    if (atBottom.current || !seen.current) return;
    for (const m of items) if (!seen.current.has(m.id)) counted.current.add(m.id);
    setNewCount(counted.current.size);
  }, [items]);

  // Follow content growth (streaming, new items, cards expanding, images):
  // pinned to the bottom → stay pinned; scrolled up → count, do not move.
  useLayoutEffect(() => {
    const el = content.current;
    if (!el) return;
    let lastHeight = el.offsetHeight;
    const ro = new ResizeObserver(() => {
      const h = el.offsetHeight;
      const grew = h > lastHeight;
      lastHeight = h;
      if (!initialScrollDone.current) return;
      if (atBottom.current) {
        const s = scroller.current!;
        s.scrollTop = s.scrollHeight;
        lastTop.current = s.scrollTop;
      } else if (grew && seen.current) {
        const list = session.items.peek();
        for (let i = Math.max(0, list.length - TAIL); i < list.length; i++) {
          const m = list[i];
          const before = seenSize.current.get(m.id);
          if (before != null && contentSize(m) !== before) counted.current.add(m.id);
        }
        setNewCount(counted.current.size);
      }
    });
    ro.observe(el);
    ro.observe(scroller.current!); // the viewport resizing (window, composer) re-pins too
    return () => ro.disconnect();
  }, []);

  // First open: start at the bottom, before the first paint.
  useLayoutEffect(() => {
    if (initialScrollDone.current || !loaded || !items.length) return;
    const s = scroller.current!;
    s.scrollTop = s.scrollHeight;
    lastTop.current = s.scrollTop;
    initialScrollDone.current = true;
    atBottom.current = true;
  }, [loaded, items.length]);

  // After prepending a page: put the previously first item back where it
  // was. (Browsers with scroll anchoring may already have; then the delta
  // is 0.)
  useLayoutEffect(() => {
    const r = restore.current;
    if (!r) return;
    restore.current = null;
    const s = scroller.current!;
    const el = s.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(r.id)}"]`);
    if (el) s.scrollTop += el.getBoundingClientRect().top - s.getBoundingClientRect().top - r.offset;
  });

  // A search hit to show (issue 15): mount the page that holds it, then
  // scroll it into view and flash it. Runs after the first open's scroll to
  // the bottom, and leaves the view unpinned so new output does not pull it
  // away.
  const view = useView();
  const focus = view.focusItem.value;
  useLayoutEffect(() => {
    if (!focus || focus.session !== session.id || !loaded || !initialScrollDone.current) return;
    const i = items.findIndex((m) => m.id === focus.item);
    if (i < 0) {
      view.focusItem.value = null; // not in the transcript (a hidden or folded item)
      return;
    }
    if (i < start) {
      anchor.current = items[Math.max(0, i - 5)].id;
      setPageTick((n) => n + 1);
      return;
    }
    const s = scroller.current!;
    const el = s.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(focus.item)}"]`);
    if (!el) return;
    view.focusItem.value = null;
    s.scrollTop += el.getBoundingClientRect().top - s.getBoundingClientRect().top - s.clientHeight / 4;
    lastTop.current = s.scrollTop;
    atBottom.current = measureAtBottom();
    if (!atBottom.current) seen.current = new Set(items.map((m) => m.id));
    el.classList.add("ti-found");
    setTimeout(() => el.classList.remove("ti-found"), 2400);
  });

  const loadEarlier = useCallback(() => {
    const list = session.items.peek();
    const i = anchor.current ? list.findIndex((m) => m.id === anchor.current) : -1;
    if (i <= 0) return;
    const s = scroller.current;
    const first = s?.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(list[i].id)}"]`);
    if (s && first) restore.current = { id: list[i].id, offset: first.getBoundingClientRect().top - s.getBoundingClientRect().top };
    anchor.current = list[Math.max(0, i - PAGE)].id;
    setPageTick((n) => n + 1);
  }, [session]);

  // Load the previous page when the sentinel comes near the viewport.
  useEffect(() => {
    const el = sentinel.current;
    const root = scroller.current;
    if (!el || !root) return;
    const io = new IntersectionObserver(
      (entries) => {
        if (!initialScrollDone.current) return;
        if (entries.some((e) => e.isIntersecting)) loadEarlier();
      },
      { root, rootMargin: "600px 0px 0px 0px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [start > 0, loadEarlier]);

  const hidden = start;
  return (
    <TranscriptCtx.Provider value={env}>
      <div class="transcript-wrap">
        <div
          ref={scroller}
          class="transcript"
          data-testid="transcript"
          onScroll={onScroll}
          tabIndex={-1}
          aria-label="Conversation"
          role="region"
        >
          <div ref={content} class="transcript-inner">
            {hidden > 0 && (
              <div ref={sentinel} class="load-earlier">
                <button type="button" class="t-link" data-testid="load-earlier" onClick={loadEarlier}>
                  Load earlier messages ({hidden})
                </button>
              </div>
            )}
            <LineageBanner />
            {!loaded && items.length === 0 && <div class="transcript-empty">Loading…</div>}
            {loaded && items.length === 0 && (
              <div class="transcript-empty">No messages yet. Send one below to start.</div>
            )}
            {shown.map((m, i) => {
              const run = m.sig.value.run_id;
              const last = i === shown.length - 1 || shown[i + 1].sig.value.run_id !== run;
              return (
                <Fragment key={m.id}>
                  <ItemView model={m} />
                  {last && changedRuns.has(run) && <RunChangesLine key={"chg:" + run} runId={run} />}
                </Fragment>
              );
            })}
            {unanchored && <ResumeBar key={unanchored.id + ":" + unanchored.status} run={unanchored} />}
            <UndoneNote session={session} />
          </div>
        </div>
        {newCount > 0 && (
          <button type="button" class="new-pill" data-testid="new-pill" onClick={scrollToBottom}>
            ↓ {newCount} new
          </button>
        )}
        <div class="t-sr-only" aria-live="polite" aria-atomic="true">{announcement}</div>
      </div>
    </TranscriptCtx.Provider>
  );
}

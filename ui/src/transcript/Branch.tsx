// Branching (issue 15): "Branch from here" on a finished message, and the
// line at the top of a branch that says where it came from.

import { useEffect, useState } from "preact/hooks";
import type { Item, Session } from "../state/types";
import { useStore } from "../state/context";
import { tokens } from "../shell/format";
import "./branch.css";

const IBranch = ({ size = 14 }: { size?: number }) => (
  <svg class="icon" width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.9"
    stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
    <circle cx="6" cy="5.5" r="2" /><circle cx="6" cy="18.5" r="2" /><circle cx="18" cy="8" r="2" />
    <path d="M6 7.5v9M18 10c0 4-6 3-11.5 6.8" />
  </svg>
);

/** Opens a new session whose history ends with this message. Only on a
 * finished message: one still streaming or waiting has no end yet. */
export function BranchButton({ item }: { item: Item }) {
  const store = useStore();
  const [busy, setBusy] = useState(false);
  if (item.open || item.queued || (item.kind !== "user" && item.kind !== "assistant")) return null;
  return (
    <button
      type="button"
      class="msg-copy msg-branch"
      data-testid="branch-message"
      aria-label="Branch from here"
      title="Branch from here: a new session with the conversation up to this message"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        void store.branch(item.id).finally(() => setBusy(false));
      }}
    >
      <IBranch />
    </button>
  );
}

/** "Branched from <parent> at <message>", linking to the parent; nothing
 * for a session that is not a branch. */
export function LineageBanner() {
  const store = useStore();
  const id = store.activeId.value;
  const session = id ? store.sessions.value.find((s) => s.id === id) : undefined;
  const [fetched, setFetched] = useState<Session | null>(null);
  const parentId = session?.parent_session_id;
  const listed = parentId ? store.sessions.value.find((s) => s.id === parentId) : undefined;
  useEffect(() => {
    setFetched(null);
    if (!parentId || listed) return;
    let live = true;
    void store.api.get<Session>(`/api/sessions/${parentId}`).then((r) => live && r.ok && setFetched(r.value));
    return () => { live = false; };
  }, [parentId, !!listed]);
  if (!parentId) return null;
  const parent = listed ?? fetched;
  const at = store.active.value?.items.value.map((m) => m.sig.value).find((it) => it.last_event_id === session?.branched_from_event_id);
  const excerpt = at?.text ? (at.text.length > 60 ? at.text.slice(0, 60) + "…" : at.text) : "";
  return (
    <div class="lineage" data-testid="lineage">
      <IBranch size={13} />
      <span>
        Branched from{" "}
        <a
          href={`/s/${parentId}`}
          data-testid="lineage-parent"
          onClick={(e) => {
            e.preventDefault();
            store.selectSession(parentId);
          }}
        >
          {parent ? parent.title || "New session" : "a deleted session"}
        </a>
        {excerpt && <> at “{excerpt}”</>}
      </span>
    </div>
  );
}

/** An answer's tokens and cost, with the hover actions. */
export function MessageUsage({ item }: { item: Item }) {
  const u = item.usage;
  if (!u) return null;
  const total = u.input_tokens + u.output_tokens;
  const detail = [
    `Input ${u.input_tokens.toLocaleString()} · output ${u.output_tokens.toLocaleString()} tokens`,
    u.cached_tokens ? `Cached ${u.cached_tokens.toLocaleString()}` : "",
    u.reasoning_tokens ? `Reasoning ${u.reasoning_tokens.toLocaleString()}` : "",
    u.cost_usd ? `Cost $${u.cost_usd.toFixed(4)}` : "",
  ].filter(Boolean).join("\n");
  return (
    <span class="msg-usage" data-testid="message-usage" title={detail}>
      {tokens(total)} tok{u.cost_usd ? ` · $${u.cost_usd < 0.01 ? u.cost_usd.toFixed(4) : u.cost_usd.toFixed(2)}` : ""}
    </span>
  );
}

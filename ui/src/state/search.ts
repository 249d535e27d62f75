// Search over every message (GET /api/search, issue 15).

import type { Api } from "./api";

export interface SearchHit {
  session_id: string;
  session_title: string;
  event_id: number;
  item_id: string;
  kind: "message.user" | "message.done" | "tool.started" | "title.updated";
  /** The matched words sit between U+0002 and U+0003: text, not markup. */
  snippet: string;
  rank: number;
}

/** Searches, narrowed by filters (GET /api/search's project, model, from,
 * to, archived); null when the request failed or was aborted. */
export async function searchMessages(api: Api, q: string, signal?: AbortSignal, limit = 20, filters?: URLSearchParams): Promise<SearchHit[] | null> {
  const p = new URLSearchParams(filters);
  p.set("q", q);
  p.set("limit", String(limit));
  const r = await api.get<{ hits: SearchHit[] }>(`/api/search?${p}`, signal);
  return r.ok ? r.value.hits : null;
}

/** A snippet's parts, each marked whether it is a matched word. */
export function snippetParts(snippet: string): { text: string; hit: boolean }[] {
  const out: { text: string; hit: boolean }[] = [];
  let hit = false;
  let cur = "";
  for (const ch of snippet) {
    if (ch === "\u0002" || ch === "\u0003") {
      if (cur) out.push({ text: cur, hit });
      cur = "";
      hit = ch === "\u0002";
    } else cur += ch;
  }
  if (cur) out.push({ text: cur, hit });
  return out;
}

export const kindLabel: Record<SearchHit["kind"], string> = {
  "message.user": "Message",
  "message.done": "Answer",
  "tool.started": "Command",
  "title.updated": "Title",
};

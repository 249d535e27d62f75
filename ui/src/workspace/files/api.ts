// The Files routes (docs/API.md, "Files") as the Files tab and the file
// references in the transcript call them.

import type { Api, Result } from "../../state/api";
import { RawBody } from "../../state/api";

export interface Entry {
  name: string; path: string; kind: "file" | "dir" | "symlink" | "other";
  size: number; mtime: string; ignored: boolean;
}
export interface Page { path: string; entries: Entry[]; next?: string }

export interface FileView {
  path: string; size: number; mtime: string; mime: string;
  text?: string; etag?: string; binary: boolean; too_large: boolean;
  raw_url: string; download_url: string;
}

export interface Match { path: string; kind: Entry["kind"]; line?: number; column?: number; preview?: string }
export interface SearchResult { matches: Match[]; truncated: boolean; skipped: number }

/** A file reference the server checked. */
export interface Ref { path: string; kind: Entry["kind"]; line?: number; column?: number }

const base = (sid: string) => `/api/sessions/${encodeURIComponent(sid)}/files`;
const q = (o: Record<string, string | number | undefined>) =>
  Object.entries(o)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");

export const listDir = (api: Api, sid: string, path: string, cursor?: string): Promise<Result<Page>> =>
  api.get<Page>(`${base(sid)}?${q({ path, cursor })}`);

export const readFile = (api: Api, sid: string, path: string): Promise<Result<FileView>> =>
  api.get<FileView>(`${base(sid)}/content?${q({ path })}`);

/** Saves text over the version etag ("" creates a new file). */
export const saveFile = (api: Api, sid: string, path: string, text: string, etag: string): Promise<Result<{ path: string; etag: string; size: number }>> =>
  api.request("PUT", `${base(sid)}/content?${q({ path })}`,
    new RawBody(text, etag ? { "Content-Type": "text/plain; charset=utf-8", "If-Match": etag } : { "Content-Type": "text/plain; charset=utf-8" }));

export const searchFiles = (api: Api, sid: string, query: string, kind: "name" | "content", signal?: AbortSignal): Promise<Result<SearchResult>> =>
  api.get<SearchResult>(`${base(sid)}/search?${q({ q: query, kind })}`, signal);

export const resolveRef = (api: Api, sid: string, mention: string): Promise<Result<Ref & { exists: boolean }>> =>
  api.get<Ref & { exists: boolean }>(`${base(sid)}/resolve?${q({ path: mention })}`);

export const rawURL = (sid: string, path: string) => `${base(sid)}/content?${q({ path, raw: 1 })}`;
export const downloadURL = (sid: string, path: string) => `${base(sid)}/content?${q({ path, download: 1 })}`;

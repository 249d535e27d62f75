// Attachments in the composer: files dropped on it, pasted into it or
// picked with the paperclip are uploaded at once (one request per file, so
// each chip has its own progress and its own refusal), shown as chips —
// a thumbnail for an image, name and size for a file — and removable until
// the message is sent with them.

import { useSignal, type Signal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import type { Store } from "../state/contract";
import type { Attachment } from "../state/types";
import { IClose, IFile, IPaperclip } from "./icons";

export interface PendingFile {
  key: number;
  name: string;
  size: number;
  /** An object URL of a local image, for its thumbnail before and after
   * the upload. */
  preview?: string;
  state: "uploading" | "ready" | "error";
  /** 0..1 while uploading. */
  progress: number;
  error?: string;
  att?: Attachment;
}

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** "12 KB", "3.4 MB". */
export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Plain words for an upload's refusal. */
function uploadError(code: string, message: string, name: string): string {
  switch (code) {
    case "upload_too_large":
    case "body_too_large":
      return `${name} is too large for this server.`;
    case "upload_type_mismatch":
      return `${name} is refused: its content is not the type its name says.`;
    default:
      return message;
  }
}

export interface Attachments {
  list: Signal<PendingFile[]>;
  add(files: File[]): void;
  remove(key: number): void;
  clear(): void;
  uploading: boolean;
  ready: Attachment[];
}

/** The composer's attachments. ensureSession makes sure there is a
 * session to upload into (the first message may start one). */
export function useAttachments(store: Store, ensureSession: () => Promise<string | null>): Attachments {
  const list = useSignal<PendingFile[]>([]);
  const seq = useRef(0);
  const update = (key: number, f: (p: PendingFile) => PendingFile) => {
    list.value = list.value.map((p) => (p.key === key ? f(p) : p));
  };
  // Thumbnails' object URLs are released with the composer.
  useEffect(() => () => list.peek().forEach((p) => p.preview && URL.revokeObjectURL(p.preview)), []);

  const uploadOne = async (key: number, file: File) => {
    const err = await ensureSession();
    if (err) {
      update(key, (p) => ({ ...p, state: "error", error: err }));
      return;
    }
    const r = await store.uploadFiles([file], (sent, total) => update(key, (p) => ({ ...p, progress: total ? sent / total : 0 })));
    if (!list.peek().some((p) => p.key === key)) return; // removed meanwhile
    if (r.error) update(key, (p) => ({ ...p, state: "error", error: uploadError(r.error!.code, r.error!.message, file.name) }));
    else update(key, (p) => ({ ...p, state: "ready", progress: 1, att: r.attachments?.[0], name: r.attachments?.[0]?.name ?? p.name }));
  };

  return {
    list,
    add(files) {
      for (const file of files) {
        const key = ++seq.current;
        const preview = IMAGE_TYPES.has(file.type) ? URL.createObjectURL(file) : undefined;
        list.value = [...list.value, { key, name: file.name || "pasted", size: file.size, preview, state: "uploading", progress: 0 }];
        void uploadOne(key, file);
      }
    },
    remove(key) {
      const p = list.peek().find((x) => x.key === key);
      if (p?.preview) URL.revokeObjectURL(p.preview);
      list.value = list.peek().filter((x) => x.key !== key);
    },
    clear() {
      list.peek().forEach((p) => p.preview && URL.revokeObjectURL(p.preview));
      list.value = [];
    },
    get uploading() {
      return list.value.some((p) => p.state === "uploading");
    },
    get ready() {
      return list.value.flatMap((p) => (p.state === "ready" && p.att ? [p.att] : []));
    },
  };
}

export function AttachmentChips({ a }: { a: Attachments }) {
  const items = a.list.value;
  if (!items.length) return null;
  return (
    <ul class="attach-chips" aria-label="Attachments" data-testid="attach-chips">
      {items.map((p) => (
        <li
          key={p.key}
          class={"attach-chip " + p.state}
          data-testid="attach-chip"
          data-state={p.state}
          data-kind={p.att?.kind ?? (p.preview ? "image" : "file")}
          title={p.error ?? `${p.name} · ${formatSize(p.size)}`}
        >
          {p.preview ? <img class="attach-thumb" src={p.preview} alt="" /> : <span class="attach-icon"><IFile size={16} /></span>}
          <span class="attach-meta">
            <span class="attach-name">{p.name}</span>
            <span class="attach-size">
              {p.state === "uploading" ? `${Math.round(p.progress * 100)}%` : p.state === "error" ? "refused" : formatSize(p.att?.size ?? p.size)}
            </span>
          </span>
          {p.state === "uploading" && (
            <span class="attach-progress" role="progressbar" aria-label={`Uploading ${p.name}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(p.progress * 100)}>
              <span style={{ width: `${Math.round(p.progress * 100)}%` }} />
            </span>
          )}
          <button type="button" class="icon-btn sm attach-remove" data-testid="attach-remove" aria-label={`Remove ${p.name}`} title="Remove" onClick={() => a.remove(p.key)}>
            <IClose size={13} />
          </button>
          {p.error && <span class="t-sr-only" role="alert">{p.error}</span>}
        </li>
      ))}
    </ul>
  );
}

/** The paperclip: picks files with the system dialog. */
export function AttachButton({ onFiles, disabled }: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          const files = Array.from(e.currentTarget.files ?? []);
          e.currentTarget.value = "";
          if (files.length) onFiles(files);
        }}
      />
      <button type="button" class="icon-btn attach-btn" data-testid="attach" aria-label="Attach files" title="Attach files (or drop or paste them)" disabled={disabled} onClick={() => input.current?.click()}>
        <IPaperclip size={17} />
      </button>
    </>
  );
}

/** The first error of the chips, for the composer's error line. */
export function attachError(a: Attachments): string | null {
  return a.list.value.find((p) => p.state === "error")?.error ?? null;
}

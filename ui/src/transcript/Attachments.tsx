// A person's message's attachments in the transcript: images as
// thumbnails that open full size, other files by name and size. The bytes
// come through the API with the page's credentials (an <img src> could not
// carry a token), as object URLs released with the message.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import type { Attachment } from "../state/types";
import { formatSize } from "../shell/Attach";
import { IFile } from "../shell/icons";

export function MessageAttachments({ items }: { items: Attachment[] }) {
  return (
    <ul class="msg-attachments" data-testid="message-attachments" aria-label="Attachments">
      {items.map((a) => (
        <li key={a.path} class={"msg-attachment " + a.kind} data-testid="message-attachment" data-kind={a.kind} data-path={a.path}>
          {a.kind === "image" ? <ImageThumb a={a} /> : <FileChip a={a} />}
        </li>
      ))}
    </ul>
  );
}

function ImageThumb({ a }: { a: Attachment }) {
  const store = useStore();
  const sid = store.activeId.value;
  const url = useSignal<string | null>(null);
  const failed = useSignal(false);
  useEffect(() => {
    if (!sid) return;
    let live = true;
    let made: string | null = null;
    void store.attachmentBlob(sid, a.path).then((b) => {
      if (!live) return;
      if (!b) {
        failed.value = true;
        return;
      }
      made = URL.createObjectURL(b);
      url.value = made;
    });
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [sid, a.path]);
  const label = `${a.name} · ${a.mime} · ${formatSize(a.size)}`;
  if (failed.value) {
    return <span class="msg-file missing" title={a.path}><IFile size={16} /> {a.name} <span class="attach-size">unavailable</span></span>;
  }
  return (
    <a class="msg-thumb" href={url.value ?? undefined} target="_blank" rel="noopener" title={`${label} — open full size`} data-testid="attachment-thumb">
      {url.value ? <img src={url.value} alt={a.name} data-testid="attachment-img" /> : <span class="msg-thumb-wait" aria-label={`Loading ${a.name}`} />}
    </a>
  );
}

function FileChip({ a }: { a: Attachment }) {
  return (
    <span class="msg-file" title={`${a.path} · ${a.mime}`}>
      <IFile size={16} />
      <span class="attach-name">{a.name}</span>
      <span class="attach-size">{formatSize(a.size)}</span>
    </span>
  );
}

// One file: highlighted with line numbers and anchors, an image preview,
// or a note with a download for binary and huge files; and the plain
// editor. Saving sends the ETag the file was read with: when the agent (or
// anyone) changed the file since, the server refuses (412) and the
// person's text stays in the editor, with the choice to reload theirs or
// overwrite it knowingly.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Api } from "../../state/api";
import { readFile, saveFile, type FileView } from "./api";
import { codeLines, formatSize, isImage } from "./code";
import { highlighter, loadHighlighter } from "../../transcript/hlchunk";
import type { Draft } from "./refs";

type Conflict = NonNullable<Draft["conflict"]>;

export function Viewer({ api, sid, path, line, canOperate, drafts, onClose, onSaved }: {
  api: Api; sid: string; path: string; line: number; canOperate: boolean;
  /** Unsaved edits by session and path, kept outside the component. */
  drafts: Map<string, Draft>;
  onClose: () => void; onSaved: (msg: string) => void;
}) {
  const key = sid + "\n" + path;
  const [file, setFile] = useState<FileView | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Editing when not null; base is the version the edit began from.
  const [draft, setDraftState] = useState<Draft | null>(drafts.get(key) ?? null);
  const setDraft = (d: Draft | null) => {
    if (d) drafts.set(key, d);
    else drafts.delete(key);
    setDraftState(d);
  };
  const [saving, setSaving] = useState(false);
  const conflict = draft?.conflict ?? null;
  const setConflict = (c: Conflict | null) => {
    const d = drafts.get(key);
    if (d) setDraft({ ...d, conflict: c ?? undefined });
  };
  const [sel, setSel] = useState(line);
  const codeRef = useRef<HTMLDivElement>(null);

  const load = async (keepDraft = false) => {
    const r = await readFile(api, sid, path);
    if (!r.ok) {
      setError(r.error.message);
      setFile(null);
      return;
    }
    setError(null);
    setFile(r.value);
    if (!keepDraft) setDraft(null);
  };

  useEffect(() => {
    setFile(null);
    setDraftState(drafts.get(key) ?? null);
    void load(true);
  }, [sid, path]);
  useEffect(() => setSel(line), [line, path]);

  // Bytes come through the API client, which carries the credentials
  // (a bearer token too, which an <img src> or a plain link would not).
  const [imageURL, setImageURL] = useState<string | null>(null);
  useEffect(() => {
    if (!file || !isImage(file.mime)) return;
    let url = "";
    const ac = new AbortController();
    void api.blob(file.raw_url, ac.signal).then((r) => {
      if (r.ok) setImageURL((url = URL.createObjectURL(r.value)));
      else if (r.error.code !== "aborted") setError(r.error.message);
    });
    return () => {
      ac.abort();
      if (url) URL.revokeObjectURL(url);
      setImageURL(null);
    };
  }, [file?.raw_url, file?.mime]);

  const download = async () => {
    if (!file) return;
    const r = await api.blob(file.download_url);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    const url = URL.createObjectURL(r.value);
    const a = document.createElement("a");
    a.href = url;
    a.download = file.path.split("/").pop() || "download";
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  // Shown plain until the highlighter's chunk arrives, then again
  // highlighted.
  const [highlighted, setHighlighted] = useState(highlighter() !== null);
  useEffect(() => {
    if (highlighted || file?.text === undefined) return;
    let live = true;
    loadHighlighter().then(() => live && setHighlighted(true), () => {});
    return () => {
      live = false;
    };
  }, [file, highlighted]);
  const lines = useMemo(() => (file?.text !== undefined ? codeLines(file.text, file.path) : []), [file, highlighted]);

  useLayoutEffect(() => {
    if (!sel || draft !== null) return;
    codeRef.current?.querySelector(`#L${sel}`)?.scrollIntoView({ block: "center" });
  }, [lines, sel, draft]);

  const save = async (etag: string) => {
    if (draft === null || !file) return;
    setSaving(true);
    const r = await saveFile(api, sid, file.path, draft.text, etag);
    setSaving(false);
    if (r.ok) {
      setFile({ ...file, text: draft.text, etag: r.value.etag, size: r.value.size });
      setDraft(null);
      onSaved(`Saved ${file.path}`);
      return;
    }
    if (r.status === 412 || r.status === 428) {
      const theirs = typeof r.error.details?.etag === "string" ? (r.error.details.etag as string) : "";
      setConflict({
        etag: theirs,
        message: theirs
          ? "This file was changed since you opened it (by the agent or someone else). Your text is still here."
          : "This file was deleted since you opened it. Your text is still here.",
      });
      return;
    }
    setError(r.error.message);
  };

  const head = (
    <>
    <div class="fv-head">
      <button type="button" class="fv-back" onClick={onClose} aria-label="Back to the file tree" data-testid="file-back">←</button>
      <span class="fv-path" title={path} data-testid="file-path">{path}</span>
      {file && <span class="fv-size">{formatSize(file.size)}</span>}
      <span class="fv-actions">
        {file && file.text !== undefined && draft === null && canOperate && (
          <button type="button" class="btn btn-sm" data-testid="file-edit" onClick={() => setDraft({ text: file.text ?? "", etag: file.etag ?? "" })}>Edit</button>
        )}
        {file && draft === null && (
          <button type="button" class="btn btn-sm" data-testid="file-reload" title="Read the file again" onClick={() => void load()}>Reload</button>
        )}
        {file && (
          <button type="button" class="btn btn-sm" data-testid="file-download" onClick={() => void download()}>Download</button>
        )}
      </span>
    </div>
    {error && file && draft === null && <p class="fv-error" role="alert">{error}</p>}
    </>
  );

  if (error && !file) {
    return <div class="fv">{head}<p class="pane-empty err" role="alert">{error}</p></div>;
  }
  if (!file) return <div class="fv">{head}<p class="pane-empty">Loading…</p></div>;

  if (draft !== null) {
    return (
      <div class="fv">
        {head}
        {conflict && (
          <div class="fv-conflict" role="alert" data-testid="edit-conflict">
            <p>{conflict.message}</p>
            <div class="fv-conflict-actions">
              <button type="button" class="btn btn-sm" data-testid="conflict-reload" onClick={() => void load()}>
                Reload theirs (discard mine)
              </button>
              <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="conflict-overwrite" disabled={saving} onClick={() => void save(conflict.etag)}>
                Overwrite with mine
              </button>
            </div>
          </div>
        )}
        {error && <p class="fv-error" role="alert">{error}</p>}
        <textarea
          class="fv-editor"
          data-testid="file-editor"
          aria-label={`Edit ${file.path}`}
          spellcheck={false}
          value={draft.text}
          onInput={(e) => setDraft({ ...draft, text: (e.target as HTMLTextAreaElement).value })}
        />
        <div class="fv-edit-bar">
          <button type="button" class="btn btn-sm btn-primary" data-testid="file-save" disabled={saving || !!conflict} onClick={() => void save(draft.etag)}>
            {saving ? "Saving…" : "Save"}
          </button>
          <button type="button" class="btn btn-sm" onClick={() => setDraft(null)}>Cancel</button>
        </div>
      </div>
    );
  }

  if (isImage(file.mime)) {
    return (
      <div class="fv">
        {head}
        <div class="fv-image">{imageURL ? <img src={imageURL} alt={file.path} data-testid="file-image" /> : <p class="pane-empty">Loading…</p>}</div>
      </div>
    );
  }
  if (file.text === undefined) {
    return (
      <div class="fv">
        {head}
        <p class="pane-empty" data-testid="file-note">
          {file.binary ? "A binary file: it is not shown." : `Too large to show (${formatSize(file.size)}).`} Download it to open it.
        </p>
      </div>
    );
  }
  return (
    <div class="fv">
      {head}
      <div class="fv-code" ref={codeRef} data-testid="file-code" role="region" aria-label={`Content of ${file.path}`}>
        {lines.map((html, i) => (
          <div class={"fv-line" + (sel === i + 1 ? " sel" : "")} key={i} data-line={i + 1}>
            <a
              class="fv-ln"
              id={`L${i + 1}`}
              href={`#L${i + 1}`}
              aria-label={`Line ${i + 1}`}
              onClick={(e) => {
                e.preventDefault();
                setSel(i + 1);
                history.replaceState(history.state, "", `${location.pathname}${location.search}#L${i + 1}`);
              }}
            >
              {i + 1}
            </a>
            <code class="fv-text hljs" dangerouslySetInnerHTML={{ __html: html || " " }} />
          </div>
        ))}
      </div>
    </div>
  );
}

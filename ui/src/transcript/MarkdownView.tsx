// Rendered markdown that stays cheap while streaming.
//
// A message is split into top-level blocks (paragraphs, lists, code
// fences…), each rendered into its own element. On an update only blocks
// whose source changed are re-rendered (in practice the last one), so a long
// answer costs one small parse + sanitise per frame, the DOM above the
// cursor never changes (no flicker, selection survives) and nothing jumps.
// While streaming, updates are coalesced to one per animation frame.

import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { lexBlocks, renderBlock } from "./markdown";
import { loadHighlighter } from "./hlchunk";
import { useStore } from "../state/context";
import { useView } from "../shell/view";
import { openPaneTab } from "../workspace/Pane";
import { clickFileRef, markFileRefs } from "../workspace/files/refs";

type MathModule = typeof import("./math");
// The math chunk once loaded, so later renders typeset synchronously (no
// flash of raw TeX). A cache of an immutable module, not app state.
let mathModule: MathModule | null = null;
let mathLoading: Promise<MathModule> | null = null;

function typesetMath(el: Element) {
  if (!el.querySelector("span.math[data-tex]")) return;
  if (mathModule) {
    mathModule.typeset(el);
    return;
  }
  mathLoading ??= import("./math").then((m) => (mathModule = m));
  mathLoading.then((m) => m.typeset(el)).catch(() => {
    // Offline build without the chunk: the raw TeX stays readable.
    mathLoading = null;
  });
}

/** Puts a quiet note where an image was removed (the sanitiser blocked
 * its remote source) or failed to load, instead of a broken-image icon. */
function removeImage(img: HTMLImageElement, why: string) {
  const note = document.createElement("span");
  note.className = "img-removed";
  note.setAttribute("data-testid", "image-removed");
  const alt = img.getAttribute("alt")?.trim();
  note.textContent = alt ? `image removed: ${alt}` : "image removed";
  note.title = why;
  img.replaceWith(note);
}

function guardImages(el: HTMLElement) {
  for (const img of el.querySelectorAll("img")) {
    const src = img.getAttribute("src");
    if (!src) {
      removeImage(img, img.getAttribute("title") || "Image not shown");
      continue;
    }
    const failed = () => img.isConnected && removeImage(img, "The image did not load (missing, or blocked by the page's security policy)");
    if (img.complete && img.naturalWidth === 0) failed(); // already settled as broken
    else img.addEventListener("error", failed, { once: true });
  }
}

/** Highlights in place the code blocks rendered plain because the
 * highlighter's chunk was not loaded yet. Its output is only
 * <span class="hljs-…"> around escaped text, so it needs no sanitising. */
function highlightLater(el: HTMLElement) {
  const pending = [...el.querySelectorAll<HTMLElement>("pre[data-lang] > code")].filter(
    (c) => c.parentElement!.getAttribute("data-lang") && ![...c.classList].some((k) => k.startsWith("language-")),
  );
  if (pending.length === 0) return;
  void loadHighlighter().then((m) => {
    for (const code of pending) {
      const lang = code.parentElement?.getAttribute("data-lang") ?? "";
      const html = code.isConnected ? m.highlight(code.textContent ?? "", lang) : null;
      if (html == null) continue;
      code.innerHTML = html;
      code.classList.add(`language-${lang}`);
    }
  }, () => {});
}

/** Adds the header (language + copy button) to each code block. Done on
 * the DOM after sanitising: the sanitiser forbids <button> in content. */
function decorate(el: HTMLElement) {
  guardImages(el);
  highlightLater(el);
  for (const pre of el.querySelectorAll("pre")) {
    if (pre.querySelector(":scope > .code-head")) continue;
    const head = document.createElement("div");
    head.className = "code-head";
    const lang = document.createElement("span");
    lang.className = "code-lang";
    lang.textContent = pre.getAttribute("data-lang") || "text";
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "code-copy";
    btn.textContent = "Copy";
    btn.setAttribute("aria-label", "Copy code");
    head.append(lang, btn);
    pre.prepend(head);
  }
  typesetMath(el);
}

/** Puts text on the clipboard; false when the browser refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API unavailable (insecure context, permissions): fall back
    // to a selection + execCommand.
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}

interface Block { raw: string; el: HTMLElement }

/** Owns the block elements of one markdown container. */
class BlockRenderer {
  private blocks: Block[] = [];
  constructor(private root: HTMLElement) {}

  render(text: string) {
    const toks = lexBlocks(text);
    let i = 0;
    for (const tok of toks) {
      if (tok.type === "space") continue;
      const b = this.blocks[i];
      if (b && b.raw === tok.raw) {
        i++;
        continue;
      }
      const html = renderBlock(tok);
      if (b) {
        b.raw = tok.raw;
        b.el.innerHTML = html;
        decorate(b.el);
      } else {
        const el = document.createElement("div");
        el.className = "mdb";
        el.innerHTML = html;
        decorate(el);
        this.root.appendChild(el);
        this.blocks.push({ raw: tok.raw, el });
      }
      i++;
    }
    for (const b of this.blocks.splice(i)) b.el.remove();
  }
}

export function Markdown({ text, streaming, class: cls }: { text: string; streaming?: boolean; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const r = useRef<{ renderer: BlockRenderer; latest: string; shown: string | null; frame: number } | null>(null);

  useLayoutEffect(() => {
    const root = ref.current!;
    if (!r.current) r.current = { renderer: new BlockRenderer(root), latest: text, shown: null, frame: 0 };
    const st = r.current;
    st.latest = text;
    if (st.shown === text) return;
    if (!streaming || st.shown === null) {
      // First paint and finished messages render at once (no empty frame).
      if (st.frame) {
        cancelAnimationFrame(st.frame);
        st.frame = 0;
      }
      st.renderer.render(text);
      st.shown = text;
      return;
    }
    if (st.frame) return; // already scheduled; it will pick up `latest`
    st.frame = requestAnimationFrame(() => {
      st.frame = 0;
      if (st.shown !== st.latest) {
        st.renderer.render(st.latest);
        st.shown = st.latest;
      }
    });
  }, [text, streaming]);

  useEffect(() => () => {
    if (r.current?.frame) cancelAnimationFrame(r.current.frame);
  }, []);

  // File references become links once the text stops changing.
  const store = useStore();
  const view = useView();
  const sid = store.activeId.value;
  useEffect(() => {
    if (!streaming && sid && ref.current) markFileRefs(store, sid, ref.current);
  }, [text, streaming, sid]);

  const onClick = (e: MouseEvent) => {
    if (sid && clickFileRef(store, sid, e)) {
      openPaneTab(view, "files");
      return;
    }
    const btn = (e.target as Element | null)?.closest?.("button.code-copy");
    if (!btn) return;
    const code = btn.closest("pre")?.querySelector("code");
    if (!code) return;
    copyText(code.textContent ?? "").then((ok) => {
      btn.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(() => (btn.textContent = "Copy"), 1500);
    });
  };

  // The container's children are managed by BlockRenderer, not Preact: it
  // renders no JSX children, so Preact never touches them.
  return <div ref={ref} class={"md" + (cls ? " " + cls : "")} onClick={onClick} />;
}

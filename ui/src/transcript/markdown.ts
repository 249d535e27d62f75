// Markdown for assistant text: marked (GFM, line breaks) → DOMPurify → HTML.
//
// Everything rendered here is untrusted model output. Defence in layers:
//  1. marked turns math into inert placeholders and code into escaped,
//     highlighted HTML;
//  2. DOMPurify (own instance, HTML profile only: no SVG/MathML) removes
//     scripts, event handlers, forms, frames, style attributes, ids and
//     data attributes other than our own, and URLs with a scheme other than
//     http(s)/mailto;
//  3. a hook forces links to open in a new tab without an opener, keeps
//     images only when they are same-origin or data: (the app is offline
//     and a remote image would leak that the page was viewed; the view
//     shows a note in place of a removed one), and turns a table cell's
//     align="left|center|right" (GFM column alignment) into a class of
//     ours, so alignment needs no style attribute.
// The server's CSP (script-src 'self') is the last layer.

import { Marked, type Token, type Tokens, type TokenizerExtension, type RendererExtension } from "marked";
import DOMPurify from "dompurify";
import { highlightNow } from "./hlchunk";

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

// ---- math placeholders ---------------------------------------------------
// Math is typeset later by the lazily loaded KaTeX chunk (math.ts); here it
// only becomes <span class="math" data-tex="…" data-display="1|0">tex</span>
// so the raw TeX stays readable until (or if) KaTeX loads.

interface MathToken { type: "math"; raw: string; text: string; display: boolean }

function mathHtml(tex: string, display: boolean): string {
  const t = escapeHtml(tex.trim());
  return `<span class="math${display ? " math-display" : ""}" data-tex="${t}" data-display="${display ? 1 : 0}">${t}</span>`;
}

const blockMath: TokenizerExtension & RendererExtension = {
  name: "math",
  level: "block",
  start: (src: string) => {
    const i = src.search(/\$\$|\\\[/);
    return i < 0 ? undefined : i;
  },
  tokenizer(src: string) {
    const m = /^ {0,3}(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n+|$)/.exec(src);
    if (!m) return undefined;
    const tok: MathToken = { type: "math", raw: m[0], text: m[1] ?? m[2] ?? "", display: true };
    return tok;
  },
  renderer: (tok) => `<p>${mathHtml((tok as unknown as MathToken).text, true)}</p>\n`,
};

const inlineMath: TokenizerExtension & RendererExtension = {
  name: "inlineMath",
  level: "inline",
  start: (src: string) => {
    const i = src.search(/\$|\\\(/);
    return i < 0 ? undefined : i;
  },
  tokenizer(src: string) {
    // $$…$$ inline (display), \(…\), and $…$ with pandoc's rule: no space
    // just inside the dollars and no digit right after the closing one, so
    // "it costs $5 and $10" stays text.
    let m = /^\$\$([^$]+?)\$\$/.exec(src);
    if (m) return { type: "inlineMath", raw: m[0], text: m[1], display: true };
    m = /^\\\(([\s\S]+?)\\\)/.exec(src);
    if (m) return { type: "inlineMath", raw: m[0], text: m[1], display: false };
    m = /^\$(?=[^\s$])((?:\\.|[^\\$\n])*?[^\s\\$])\$(?!\d)/.exec(src) ?? /^\$([^\s$\\])\$(?!\d)/.exec(src);
    if (m) return { type: "inlineMath", raw: m[0], text: m[1], display: false };
    return undefined;
  },
  renderer: (tok) => mathHtml((tok as unknown as MathToken).text, (tok as unknown as MathToken).display),
};

/** True when `text` may contain math, so the caller knows to load KaTeX. */
export function mayHaveMath(text: string): boolean {
  return text.includes("$$") || /\\\(|\\\[/.test(text) || /\$[^\s$][^$\n]*\$/.test(text);
}

// ---- marked ----------------------------------------------------------------

function createMarked(): Marked {
  const md = new Marked({ gfm: true, breaks: true, async: false });
  md.use({
    extensions: [blockMath, inlineMath],
    renderer: {
      code({ text, lang }: Tokens.Code) {
        const l = (lang ?? "").trim().split(/\s+/)[0].toLowerCase();
        const hl = highlightNow(text, l);
        const body = hl ?? escapeHtml(text);
        const cls = hl != null ? `hljs language-${escapeHtml(l)}` : "hljs";
        // The language name rides on the <pre> for the copy header (added
        // after sanitising, see decorate()).
        return `<pre data-lang="${escapeHtml(l)}"><code class="${cls}">${body}</code></pre>\n`;
      },
      checkbox({ checked }: Tokens.Checkbox) {
        // GFM task boxes as text glyphs: <input> is forbidden below.
        return `<span class="task" aria-label="${checked ? "done" : "not done"}">${checked ? "☑" : "☐"}</span> `;
      },
    },
  });
  return md;
}

// ---- DOMPurify -------------------------------------------------------------

/** Classes our renderer emits; any other class in model output is dropped,
 * so output cannot borrow the app's own UI classes to fake controls. */
const SAFE_CLASS = /^(hljs(-[\w-]+)?|language-[\w+#.-]+|math|math-display|task|[a-z_]+_)$/;

function sameOriginOrData(url: string): boolean {
  if (/^data:image\/(png|gif|jpe?g|webp|avif|bmp);/i.test(url)) return true;
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//") || url.startsWith("\\")) {
    try {
      return new URL(url, location.href).origin === location.origin;
    } catch {
      return false;
    }
  }
  return true; // relative
}

function createPurify() {
  const purify = DOMPurify(window);
  purify.addHook("uponSanitizeAttribute", (_node, data) => {
    if (data.attrName === "class") {
      data.attrValue = data.attrValue.split(/\s+/).filter((c) => SAFE_CLASS.test(c)).join(" ");
    }
  });
  purify.addHook("afterSanitizeAttributes", (node) => {
    const el = node as Element;
    if (el.tagName === "A") {
      const href = el.getAttribute("href");
      if (href != null) {
        el.setAttribute("target", "_blank");
        el.setAttribute("rel", "noopener noreferrer");
      }
    } else if (el.tagName === "TH" || el.tagName === "TD") {
      const align = (el.getAttribute("align") ?? "").toLowerCase();
      el.removeAttribute("align");
      if (align === "left" || align === "center" || align === "right") el.classList.add("md-al-" + align);
    } else if (el.tagName === "IMG") {
      const src = el.getAttribute("src") ?? "";
      if (!sameOriginOrData(src)) {
        // Keep the alt text visible instead of a broken or leaking image.
        el.removeAttribute("src");
        el.setAttribute("data-blocked", "1");
        el.setAttribute("title", "Remote image not loaded: " + src);
      }
      el.setAttribute("loading", "lazy");
      el.setAttribute("referrerpolicy", "no-referrer");
    }
  });
  return purify;
}

const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe", "frame", "frameset",
    "object", "embed", "link", "meta", "base", "template", "dialog", "video", "audio", "source", "track", "picture"],
  FORBID_ATTR: ["style", "id", "name", "srcset", "formaction", "action", "ping", "background", "autofocus", "tabindex"],
  ALLOW_DATA_ATTR: false,
  ADD_ATTR: ["data-tex", "data-display", "data-lang", "target", "data-blocked", "loading", "referrerpolicy"],
  // Only http(s), mailto and relative URLs survive on href/src. data: on
  // <img> is let through by DOMPurify's DATA_URI_TAGS and narrowed above.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
  SANITIZE_NAMED_PROPS: true,
};

// ---- public API ----------------------------------------------------------

interface Engine { md: Marked; purify: ReturnType<typeof createPurify> }
// Configured once on first use; immutable afterwards (not app state).
let engine: Engine | null = null;
function getEngine(): Engine {
  return (engine ??= { md: createMarked(), purify: createPurify() });
}

/** Splits markdown into top-level blocks (`raw` concatenates back to the
 * text). Streaming re-renders only blocks whose raw text changed. */
export function lexBlocks(text: string): Token[] {
  return getEngine().md.lexer(text) as Token[];
}

/** Sanitised HTML of one top-level block from lexBlocks. */
export function renderBlock(tok: Token): string {
  const { md, purify } = getEngine();
  if (tok.type === "space") return "";
  const html = md.parser([tok]);
  return purify.sanitize(html, CONFIG) as unknown as string;
}

/** Sanitised HTML of a whole markdown text (used for short, non-streaming
 * texts such as compaction summaries). */
export function renderMarkdown(text: string): string {
  const { md, purify } = getEngine();
  return purify.sanitize(md.parse(text) as string, CONFIG) as unknown as string;
}

/** Sanitises arbitrary HTML with the markdown policy (exported for tests). */
export function sanitize(html: string): string {
  return getEngine().purify.sanitize(html, CONFIG) as unknown as string;
}

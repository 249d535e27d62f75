// The viewer's code: highlighted with the transcript's highlight.js core,
// then cut into lines so each gets its number and anchor. A highlighted
// span may run across lines (a block comment); each line closes the spans
// still open at its end and reopens them at the next one's start.

import { highlightNow } from "../../transcript/hlchunk";

const LANGS: Record<string, string> = {
  go: "go", sh: "bash", bash: "bash", zsh: "bash", json: "json", js: "javascript", mjs: "javascript", cjs: "javascript",
  jsx: "javascript", ts: "typescript", tsx: "typescript", py: "python", diff: "diff", patch: "diff", yaml: "yaml",
  yml: "yaml", sql: "sql", css: "css", html: "xml", htm: "xml", xml: "xml", svg: "xml", md: "markdown", markdown: "markdown",
};

/** The highlight.js language of a file name ("" when none fits). */
export function langOf(path: string): string {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : LANGS[path.slice(dot + 1).toLowerCase()] ?? "";
}

// Highlighting a huge file would stall the page; those show plain.
const HIGHLIGHT_MAX = 256 << 10;

const escapeHTML = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The file's lines as HTML, highlighted when the language is known. */
export function codeLines(text: string, path: string): string[] {
  const lang = langOf(path);
  const html = (text.length <= HIGHLIGHT_MAX && lang && highlightNow(text, lang)) || escapeHTML(text);
  const out: string[] = [];
  const open: string[] = [];
  for (const line of html.split("\n")) {
    let s = open.join("") + line;
    // highlight.js emits only <span class="…"> and </span>.
    for (const m of line.matchAll(/<span[^>]*>|<\/span>/g)) {
      if (m[0] === "</span>") open.pop();
      else open.push(m[0]);
    }
    s += "</span>".repeat(open.length);
    out.push(s);
  }
  if (out.length > 1 && out[out.length - 1] === "") out.pop(); // the final newline
  return out;
}

export function isImage(mime: string): boolean {
  return /^image\/(png|jpeg|gif|webp|bmp|x-icon|vnd\.microsoft\.icon)\b/.test(mime);
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// The math chunk: KaTeX, loaded with import() only when a message contains
// math placeholders (see markdown.ts), so esbuild puts it in its own chunk
// and the initial bundle stays small.
import katex from "katex";

// KaTeX's stylesheet and fonts are emitted by the build under /assets/.
if (!document.querySelector('link[data-katex]')) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/assets/katex.css";
  link.setAttribute("data-katex", "");
  document.head.appendChild(link);
}

/** Typesets every math placeholder under `root`. KaTeX builds its own DOM
 * from the TeX source with `trust: false`, so \href{javascript:…} and
 * friends are refused; errors show the source in red instead of throwing. */
export function typeset(root: Element): void {
  for (const el of root.querySelectorAll<HTMLElement>("span.math[data-tex]")) {
    if (el.dataset.done === "1") continue;
    try {
      katex.render(el.dataset.tex ?? "", el, {
        displayMode: el.dataset.display === "1",
        throwOnError: false,
        trust: false,
        strict: "ignore",
        maxExpand: 500,
        maxSize: 20,
      });
      el.dataset.done = "1";
    } catch {
      // leave the raw TeX visible
    }
  }
}

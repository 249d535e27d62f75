// highlight.js and its grammars are a chunk of their own (about a seventh
// of the first page load otherwise), fetched the first time a code block
// or a file with a known language is shown. Until it arrives the code is
// shown plain; the views highlight it in place once it has.

type Highlighter = typeof import("./highlight");

// The chunk once loaded: later renders highlight synchronously (no flash
// of plain code). A cache of an immutable module, not app state.
let loaded: Highlighter | null = null;
let loading: Promise<Highlighter> | null = null;

/** The highlighter, or null while its chunk is not loaded. */
export function highlighter(): Highlighter | null {
  return loaded;
}

/** Loads the highlighter's chunk (once; again after a failure). */
export function loadHighlighter(): Promise<Highlighter> {
  loading ??= import("./highlight").then(
    (m) => (loaded = m),
    (err) => {
      loading = null; // offline or a stale bundle: try again next time
      throw err;
    },
  );
  return loading;
}

/** Highlighted HTML for code in lang if the chunk is loaded, else null
 * (and the chunk starts loading when lang names a language). */
export function highlightNow(code: string, lang: string): string | null {
  if (!lang) return null;
  if (loaded) return loaded.highlight(code, lang);
  void loadHighlighter().catch(() => {});
  return null;
}

// Monospace output blocks and JSON views used by tool cards and the
// activity panel.

import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { countLines, prettyJson } from "./util";

/** Output text capped to `maxLines` lines with "Show more". With `follow`
 * (live output) the block keeps its own scroll pinned to the newest line. */
export function OutputBlock({ text, maxLines = 14, follow, label, class: cls }: {
  text: string; maxLines?: number; follow?: boolean; label?: string; class?: string;
}) {
  const [full, setFull] = useState(false);
  const ref = useRef<HTMLPreElement>(null);
  const lines = countLines(text);
  const capped = !full && lines > maxLines;
  useLayoutEffect(() => {
    if (follow && ref.current) ref.current.scrollTop = ref.current.scrollHeight;
  }, [text, follow]);
  return (
    <div class={"out" + (cls ? " " + cls : "")}>
      {label && <div class="out-label">{label}</div>}
      <pre
        ref={ref}
        class={"out-pre" + (capped ? " capped" : "") + (follow ? " follow" : "")}
        style={capped ? `max-height: calc(${maxLines} * 1.45em + 16px)` : undefined}
        tabIndex={0}
        aria-label={label ?? "Output"}
      >{text}</pre>
      {lines > maxLines && !follow && (
        <button type="button" class="t-link out-more" aria-expanded={full} onClick={() => setFull(!full)}>
          {full ? "Show less" : `Show all ${lines} lines`}
        </button>
      )}
    </div>
  );
}

/** Formatted JSON in a scrollable monospace block. */
export function JsonBlock({ value, label, maxLines = 24 }: { value: unknown; label?: string; maxLines?: number }) {
  return <OutputBlock text={prettyJson(value)} label={label} maxLines={maxLines} class="json" />;
}

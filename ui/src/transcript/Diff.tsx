// A unified diff (edit_file's result.diff) as coloured lines with old/new
// line numbers taken from the hunk headers. Long diffs start collapsed to a
// few lines so the card stays small; "Show all" expands in place.

import { useMemo, useState } from "preact/hooks";

interface DiffLine {
  kind: "add" | "del" | "ctx" | "hunk" | "file" | "meta";
  text: string;
  oldNo?: number;
  newNo?: number;
}

export function parseUnifiedDiff(diff: string): DiffLine[] {
  const out: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  const lines = diff.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("@@")) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/.exec(line);
      if (m) {
        oldNo = +m[1];
        newNo = +m[2];
      }
      out.push({ kind: "hunk", text: line });
    } else if (line.startsWith("--- ") || line.startsWith("+++ ")) {
      out.push({ kind: "file", text: line });
    } else if (line.startsWith("+")) {
      out.push({ kind: "add", text: line.slice(1), newNo: newNo++ });
    } else if (line.startsWith("-")) {
      out.push({ kind: "del", text: line.slice(1), oldNo: oldNo++ });
    } else if (line.startsWith("\\")) {
      out.push({ kind: "meta", text: line }); // "\ No newline at end of file"
    } else {
      out.push({ kind: "ctx", text: line.startsWith(" ") ? line.slice(1) : line, oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return out;
}

const SIGN: Record<DiffLine["kind"], string> = { add: "+", del: "-", ctx: " ", hunk: "", file: "", meta: "" };

export function Diff({ diff, truncated, collapsedLines = 12 }: { diff: string; truncated?: boolean; collapsedLines?: number }) {
  // File headers repeat the card's label; hide them.
  const lines = useMemo(() => parseUnifiedDiff(diff).filter((l) => l.kind !== "file"), [diff]);
  const [all, setAll] = useState(false);
  const adds = lines.filter((l) => l.kind === "add").length;
  const dels = lines.filter((l) => l.kind === "del").length;
  const shown = all ? lines : lines.slice(0, collapsedLines);
  const hidden = lines.length - shown.length;
  return (
    <div class="diff" data-testid="diff">
      <div class="diff-stat">
        <span class="diff-add-n">+{adds}</span> <span class="diff-del-n">−{dels}</span>
      </div>
      <div class="diff-body" role="table" aria-label="Changes">
        {shown.map((l, i) =>
          l.kind === "hunk" || l.kind === "meta" ? (
            <div key={i} class={"dl dl-" + l.kind} role="row"><span class="dl-text">{l.text}</span></div>
          ) : (
            <div key={i} class={"dl dl-" + l.kind} role="row">
              <span class="dl-no" aria-hidden="true">{l.oldNo ?? ""}</span>
              <span class="dl-no" aria-hidden="true">{l.newNo ?? ""}</span>
              <span class="dl-sign" aria-hidden="true">{SIGN[l.kind]}</span>
              <span class="dl-text">{l.text || "\u200b"}</span>
            </div>
          ),
        )}
      </div>
      {hidden > 0 && (
        <button type="button" class="diff-more" aria-expanded="false" onClick={() => setAll(true)}>
          Show all {lines.length} lines
        </button>
      )}
      {all && lines.length > collapsedLines && (
        <button type="button" class="diff-more" aria-expanded="true" onClick={() => setAll(false)}>
          Show less
        </button>
      )}
      {truncated && <div class="diff-note">Diff cut at 32 KiB.</div>}
    </div>
  );
}

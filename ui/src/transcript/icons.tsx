// Inline stroke icons (16px, currentColor): no icon font, no other host.
import type { JSX } from "preact";

type P = { size?: number; class?: string };

function svg(children: JSX.Element | JSX.Element[], { size = 16, class: cls }: P) {
  return (
    <svg class={"ic" + (cls ? " " + cls : "")} width={size} height={size} viewBox="0 0 24 24" fill="none"
      stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

export const IconTerminal = (p: P) => svg([<path d="M4 17l6-5-6-5" />, <path d="M12 19h8" />], p);
export const IconFile = (p: P) => svg([<path d="M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9z" />, <path d="M14 3v6h6" />], p);
export const IconPencil = (p: P) => svg([<path d="M17 3l4 4L8 20H4v-4z" />], p);
export const IconFolder = (p: P) => svg([<path d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" />], p);
export const IconSearch = (p: P) => svg([<circle cx="11" cy="11" r="7" />, <path d="M21 21l-4.3-4.3" />], p);
export const IconGlobe = (p: P) => svg([<circle cx="12" cy="12" r="9" />, <path d="M3 12h18" />, <path d="M12 3a14 14 0 0 1 0 18a14 14 0 0 1 0-18z" />], p);
export const IconList = (p: P) => svg([<path d="M9 6h11" />, <path d="M9 12h11" />, <path d="M9 18h11" />, <path d="M4 6l1 1 2-2" />, <path d="M4 12l1 1 2-2" />, <path d="M4 18h2" />], p);
export const IconQuestion = (p: P) => svg([<circle cx="12" cy="12" r="9" />, <path d="M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6v.6" />, <path d="M12 17h.01" />], p);
export const IconWrench = (p: P) => svg([<path d="M14.7 6.3a4 4 0 0 0 5 5L21 13l-8 8-3-3 8-8z" transform="rotate(0)" />, <path d="M3 21l6-6" />], p);
export const IconBrain = (p: P) => svg([<path d="M9 4a3 3 0 0 0-3 3 3 3 0 0 0-2 5 3 3 0 0 0 2 5 3 3 0 0 0 6 1V5a2 2 0 0 0-3-1z" />, <path d="M15 4a3 3 0 0 1 3 3 3 3 0 0 1 2 5 3 3 0 0 1-2 5 3 3 0 0 1-6 1" />], p);
export const IconChevron = (p: P) => svg(<path d="M9 6l6 6-6 6" />, p);
export const IconCopy = (p: P) => svg([<rect x="9" y="9" width="12" height="12" rx="2" />, <path d="M5 15V5a2 2 0 0 1 2-2h10" />], p);
export const IconCheck = (p: P) => svg(<path d="M5 12l5 5L20 7" />, p);
export const IconX = (p: P) => svg([<path d="M6 6l12 12" />, <path d="M18 6L6 18" />], p);
export const IconStop = (p: P) => svg(<rect x="6" y="6" width="12" height="12" rx="1.5" />, p);
export const IconAlert = (p: P) => svg([<path d="M12 3l10 18H2z" />, <path d="M12 10v4" />, <path d="M12 17.5h.01" />], p);
export const IconClock = (p: P) => svg([<circle cx="12" cy="12" r="9" />, <path d="M12 7v5l3 2" />], p);
export const IconInfo = (p: P) => svg([<circle cx="12" cy="12" r="9" />, <path d="M12 11v6" />, <path d="M12 7.5h.01" />], p);
export const IconShield = (p: P) => svg([<path d="M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z" />], p);
export const IconLayers = (p: P) => svg([<path d="M12 3l9 5-9 5-9-5z" />, <path d="M3 13l9 5 9-5" />], p);
export const IconPlay = (p: P) => svg(<path d="M7 5l12 7-12 7z" />, p);
export const IconMemory = (p: P) => svg([<path d="M6 4h12v16l-6-4-6 4z" />], p);
export const IconCpu = (p: P) => svg([<rect x="6" y="6" width="12" height="12" rx="2" />, <path d="M9 2v4M15 2v4M9 18v4M15 18v4M2 9h4M2 15h4M18 9h4M18 15h4" />], p);

/** Icon for a tool by name; unknown tools get a wrench. */
export function ToolIcon({ name, size }: { name: string; size?: number }) {
  const p = { size };
  switch (name) {
    case "run_command": case "process": return <IconTerminal {...p} />;
    case "read_file": return <IconFile {...p} />;
    case "write_file": case "edit_file": return <IconPencil {...p} />;
    case "list_dir": return <IconFolder {...p} />;
    case "grep": case "glob": return <IconSearch {...p} />;
    case "web_fetch": case "web_search": return <IconGlobe {...p} />;
    case "todo": return <IconList {...p} />;
    case "clarify": return <IconQuestion {...p} />;
    case "memory": case "skills": return <IconMemory {...p} />;
    default: return name.startsWith("browser_") ? <IconGlobe {...p} /> : <IconWrench {...p} />;
  }
}

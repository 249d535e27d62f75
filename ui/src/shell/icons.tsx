// Stroke icons of the shell (24-unit grid, currentColor), inline so the app
// loads nothing from other hosts. Always decorative: the button around an
// icon carries the accessible name.

import type { ComponentChildren } from "preact";

function Svg({ size = 18, children }: { size?: number; children: ComponentChildren }) {
  return (
    <svg class="icon" width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.9"
      stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

type P = { size?: number };

export const IPlus = (p: P) => <Svg {...p}><path d="M12 5v14M5 12h14" /></Svg>;
export const ISearch = (p: P) => <Svg {...p}><circle cx="11" cy="11" r="6.5" /><path d="M20 20l-4.2-4.2" /></Svg>;
export const IMenu = (p: P) => <Svg {...p}><path d="M4 7h16M4 12h16M4 17h16" /></Svg>;
export const IClose = (p: P) => <Svg {...p}><path d="M6 6l12 12M18 6L6 18" /></Svg>;
export const IPencil = (p: P) => <Svg {...p}><path d="M15.5 4.5l4 4L8 20H4v-4z" /></Svg>;
export const ITrash = (p: P) => <Svg {...p}><path d="M4 7h16M9 7V4.5h6V7M6.5 7l1 13h9l1-13M10 11v5M14 11v5" /></Svg>;
export const IBell = (p: P) => <Svg {...p}><path d="M6 16V11a6 6 0 0 1 12 0v5l1.5 2h-15z" /><path d="M10 20.5a2 2 0 0 0 4 0" /></Svg>;
export const IBellOff = (p: P) => <Svg {...p}><path d="M8.5 5.3A6 6 0 0 1 18 11v5M6 11v5l-1.5 2H17M10 20.5a2 2 0 0 0 4 0M3 3l18 18" /></Svg>;
export const IActivity = (p: P) => <Svg {...p}><path d="M3 12h4l3-7 4 14 3-7h4" /></Svg>;
export const ISend = (p: P) => <Svg {...p}><path d="M12 19V5M6 11l6-6 6 6" /></Svg>;
export const IStop = (p: P) => <Svg {...p}><rect x="7" y="7" width="10" height="10" rx="1.5" fill="currentColor" stroke="none" /></Svg>;
export const IMore = (p: P) => <Svg {...p}><circle cx="5.5" cy="12" r="1.3" fill="currentColor" /><circle cx="12" cy="12" r="1.3" fill="currentColor" /><circle cx="18.5" cy="12" r="1.3" fill="currentColor" /></Svg>;
export const ICopy = (p: P) => <Svg {...p}><rect x="8.5" y="8.5" width="11" height="11" rx="2" /><path d="M15.5 8.5V6a1.5 1.5 0 0 0-1.5-1.5H6A1.5 1.5 0 0 0 4.5 6v8A1.5 1.5 0 0 0 6 15.5h2.5" /></Svg>;
export const ICheck = (p: P) => <Svg {...p}><path d="M5 12.5l4.5 4.5L19 7.5" /></Svg>;
export const ISun = (p: P) => <Svg {...p}><circle cx="12" cy="12" r="4" /><path d="M12 2.5v2M12 19.5v2M4.6 4.6l1.4 1.4M18 18l1.4 1.4M2.5 12h2M19.5 12h2M4.6 19.4L6 18M18 6l1.4-1.4" /></Svg>;
export const IMoon = (p: P) => <Svg {...p}><path d="M19.5 14.5A8 8 0 0 1 9.5 4.5a8 8 0 1 0 10 10z" /></Svg>;
export const IMonitor = (p: P) => <Svg {...p}><rect x="3" y="4.5" width="18" height="12" rx="2" /><path d="M9 20h6M12 16.5V20" /></Svg>;
export const IArrowRight = (p: P) => <Svg {...p}><path d="M5 12h14M13 6l6 6-6 6" /></Svg>;
export const IArrowLeft = (p: P) => <Svg {...p}><path d="M19 12H5M11 6l-6 6 6 6" /></Svg>;
export const IUser = (p: P) => <Svg {...p}><circle cx="12" cy="8.5" r="3.8" /><path d="M4.5 20c1.2-3.6 4-5.3 7.5-5.3s6.3 1.7 7.5 5.3" /></Svg>;
export const IUsers = (p: P) => <Svg {...p}><circle cx="9" cy="9" r="3.3" /><path d="M3 19.5c.9-3.1 3.2-4.6 6-4.6s5.1 1.5 6 4.6M15.5 5.9a3.3 3.3 0 0 1 0 6.2M17.5 14.9c1.8.5 3 1.9 3.5 4.6" /></Svg>;
export const IKey = (p: P) => <Svg {...p}><circle cx="8" cy="15" r="4" /><path d="M11 12l8.5-8.5M16 7l2.5 2.5M14 9l2 2" /></Svg>;
export const IDownload = (p: P) => <Svg {...p}><path d="M12 4v11M7 10.5l5 5 5-5M5 19.5h14" /></Svg>;
export const ILock = (p: P) => <Svg {...p}><rect x="5" y="10.5" width="14" height="10" rx="2" /><path d="M8 10.5V7.5a4 4 0 0 1 8 0v3" /></Svg>;
export const ISettings = (p: P) => <Svg {...p}><circle cx="12" cy="12" r="3" /><path d="M12 2.8v2.4M12 18.8v2.4M2.8 12h2.4M18.8 12h2.4M5.5 5.5l1.7 1.7M16.8 16.8l1.7 1.7M5.5 18.5l1.7-1.7M16.8 7.2l1.7-1.7" /></Svg>;
export const ILogout = (p: P) => <Svg {...p}><path d="M10 4.5H6A1.5 1.5 0 0 0 4.5 6v12A1.5 1.5 0 0 0 6 19.5h4M15 8l4 4-4 4M19 12H9.5" /></Svg>;

/** The mark: a winged staff with two serpents, drawn in the accent colour. */
export function Logo({ size = 22 }: P) {
  return (
    <svg class="logo" width={size} height={size} viewBox="0 0 32 32" fill="none" stroke="currentColor" stroke-width="2"
      stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d="M16 4v25" />
      <circle cx="16" cy="4.5" r="1.6" fill="currentColor" stroke="none" />
      <path d="M16 8c-3-2.6-7.5-3.2-11-2 2.6 2.3 6.4 3.6 11 3.4M16 8c3-2.6 7.5-3.2 11-2-2.6 2.3-6.4 3.6-11 3.4" />
      <path d="M12 12c0 2.4 8 2.6 8 5s-8 2.6-8 5 8 2.6 8 5" />
      <path d="M20 12c0 2.4-8 2.6-8 5s8 2.6 8 5-8 2.6-8 5" opacity=".55" />
    </svg>
  );
}

export const IPaperclip = (p: P) => <Svg {...p}><path d="M20 11.5l-7.8 7.8a5 5 0 0 1-7.1-7.1l8.5-8.5a3.4 3.4 0 0 1 4.8 4.8l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4l7.8-7.8" /></Svg>;
export const IFile = (p: P) => <Svg {...p}><path d="M14 3.5H7A1.5 1.5 0 0 0 5.5 5v14A1.5 1.5 0 0 0 7 20.5h10a1.5 1.5 0 0 0 1.5-1.5V8z" /><path d="M14 3.5V8h4.5" /></Svg>;

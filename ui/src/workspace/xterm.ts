// The terminal emulator chunk: xterm.js and its fit addon, loaded with
// import() the first time the Terminal tab opens, so the initial bundle
// stays small. Its stylesheet is a build entry of its own (/assets/xterm.css).
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";

if (!document.querySelector("link[data-xterm]")) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/assets/xterm.css";
  link.setAttribute("data-xterm", "");
  document.head.appendChild(link);
}

export { Terminal, FitAddon };

/** The terminal's colours for the page's theme. */
export function themeFor(dark: boolean) {
  return dark
    ? { background: "#101114", foreground: "#e5e7eb", cursor: "#9aa4ff", cursorAccent: "#101114", selectionBackground: "#3a4060" }
    : { background: "#ffffff", foreground: "#1b1d22", cursor: "#4754c9", cursorAccent: "#ffffff", selectionBackground: "#c9cef5",
        // xterm's default white and bright white vanish on a white page.
        white: "#5f6571", brightWhite: "#1b1d22", yellow: "#9a5b00", brightYellow: "#7a4800" };
}

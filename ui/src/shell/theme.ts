// Light, dark, or the system's theme. The choice is kept in localStorage;
// <html data-theme> holds the resolved theme ("light" | "dark"), which the
// tokens in styles/base.css key on. ui/theme.js sets it before the first
// paint (same key, same rule), so a reload never flashes the other theme;
// this module keeps it current and, for "system", follows the setting live.

export type ThemeChoice = "system" | "light" | "dark";

/** localStorage key; ui/theme.js reads the same one. */
const KEY = "caduceus.theme";
const DARK_QUERY = "(prefers-color-scheme: dark)";

export const THEME_CHOICES: readonly ThemeChoice[] = ["system", "light", "dark"];

export function loadTheme(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system"; // storage blocked: follow the system
  }
}

export function saveTheme(c: ThemeChoice): void {
  try {
    localStorage.setItem(KEY, c);
  } catch {
    // storage blocked: the choice lasts for this page only
  }
}

function systemDark(): boolean {
  return typeof matchMedia === "function" && matchMedia(DARK_QUERY).matches;
}

/** Applies a choice to the document now, and while it is "system" keeps
 * following the system setting; the returned function stops that. */
export function applyTheme(c: ThemeChoice): () => void {
  const root = document.documentElement;
  const set = () => root.setAttribute("data-theme", c === "system" ? (systemDark() ? "dark" : "light") : c);
  set();
  if (c !== "system" || typeof matchMedia !== "function") return () => {};
  const mq = matchMedia(DARK_QUERY);
  mq.addEventListener("change", set);
  return () => mq.removeEventListener("change", set);
}

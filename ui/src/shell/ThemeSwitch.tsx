// The theme switch: a menu of System, Light and Dark.

import { IMonitor, IMoon, ISun } from "./icons";
import { MenuButton } from "./Menu";
import { saveTheme, THEME_CHOICES, type ThemeChoice } from "./theme";
import { useView } from "./view";

const THEME_TEXT: Record<ThemeChoice, string> = { system: "System", light: "Light", dark: "Dark" };
const THEME_ICON = { system: IMonitor, light: ISun, dark: IMoon } as const;

/** Light, dark or the system's; remembered in this browser. In the header
 * on wide screens, in the sessions drawer on phones (where the header has
 * no room to spare). */
export function ThemeSwitch({ where }: { where: "header" | "sidebar" | "signin" }) {
  const view = useView();
  const cur = view.theme.value;
  const Icon = THEME_ICON[cur];
  return (
    <MenuButton
      class={"theme-switch theme-in-" + where}
      testid="theme-switch"
      menuTestid="theme-menu"
      label={`Theme: ${THEME_TEXT[cur]}`}
      icon={<Icon size={17} />}
      items={THEME_CHOICES.map((c) => {
        const I = THEME_ICON[c];
        return {
          key: c, label: THEME_TEXT[c], icon: <I size={15} />, checked: c === cur, testid: "theme-" + c,
          onSelect: () => {
            saveTheme(c);
            view.theme.value = c;
          },
        };
      })}
    />
  );
}


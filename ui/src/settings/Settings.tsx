// The Settings area: one page in the main column with a navigation of its
// sections (a column on wide screens, a row of tabs that scrolls on
// phones) and the chosen section beside or below it. The section is in
// the address (#settings/<id>), so a reload, Back and a shared link keep it.

import { useStore } from "../state/context";
import { PageFrame } from "../shell/Page";
import { openPage, useView } from "../shell/view";
import { sections, type SettingsSection } from "./sections";

/** The sections the caller may see. */
export function visibleSections(store: ReturnType<typeof useStore>): SettingsSection[] {
  return sections.filter((s) => s.shown(store));
}

export function SettingsPage() {
  const store = useStore();
  const view = useView();
  const shown = visibleSections(store);
  const current = shown.find((s) => s.id === view.section.value) ?? shown[0];
  if (!current) {
    return (
      <PageFrame title="Settings" testid="settings-page">
        <p class="page-lead">Nothing here can be changed with your access.</p>
      </PageFrame>
    );
  }
  const Body = current.component;
  return (
    <PageFrame title="Settings" testid="settings-page">
      <div class="settings" data-section={current.id}>
        <nav class="settings-nav" aria-label="Settings sections">
          <ul role="list">
            {shown.map((s) => (
              <li key={s.id}>
                <a
                  href={`#settings/${s.id}`}
                  class={"settings-link" + (s.id === current.id ? " current" : "")}
                  data-testid={`settings-nav-${s.id}`}
                  aria-current={s.id === current.id ? "page" : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    openPage(view, "settings", s.id);
                  }}
                >
                  <span class="settings-link-title">{s.title}</span>
                  <span class="settings-link-blurb">{s.blurb}</span>
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="settings-body">
          <h2 class="settings-title" data-testid="settings-title">{current.title}</h2>
          <Body />
        </div>
      </div>
    </PageFrame>
  );
}

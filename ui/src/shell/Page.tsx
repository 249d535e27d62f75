// The frame of an account page (API tokens, users) in the main column: a
// header with the way back to the conversation, the sessions drawer button
// on phones and the account menu; the page scrolls below it.

import type { ComponentChildren } from "preact";
import { AccountMenu } from "./Account";
import { IArrowLeft, IMenu } from "./icons";
import { ThemeSwitch } from "./ThemeSwitch";
import { openPage, useView } from "./view";

export function PageFrame({ title, testid, children }: { title: string; testid: string; children: ComponentChildren }) {
  const view = useView();
  return (
    <section class="page" data-testid={testid} aria-labelledby="page-title">
      <header class="header page-header">
        <button type="button" class="icon-btn hdr-menu" aria-label="Sessions" aria-controls="sidebar"
          aria-expanded={view.sidebarOpen.value} onClick={() => (view.sidebarOpen.value = !view.sidebarOpen.value)}>
          <IMenu />
        </button>
        <button type="button" class="icon-btn" data-testid="page-back" aria-label="Back to the conversation" title="Back to the conversation" onClick={() => openPage(view, "chat")}>
          <IArrowLeft />
        </button>
        <h1 id="page-title" class="page-title">{title}</h1>
        <div class="page-tools">
          <ThemeSwitch where="header" />
          <AccountMenu />
        </div>
      </header>
      <div class="page-body">
        <div class="page-inner">{children}</div>
      </div>
    </section>
  );
}

// The account menu (who am I, API tokens, users for admins, change
// password, sign out) and the change-password dialog. Offered only where
// people sign in (or the caller is a person's token): the open loopback
// server shows no menu, as before accounts existed.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import type { Principal } from "../state/auth";
import { useStore } from "../state/context";
import { trapFocus } from "./Dialog";
import { IKey, ILock, ILogout, IUser, IUsers } from "./icons";
import { MenuButton, type MenuItem } from "./Menu";
import { openPage, useView } from "./view";

/** "operator", "admin · API token (read)", "server token". */
export function roleText(p: Principal): string {
  if (p.kind === "server_token") return "admin · server access token";
  if (p.kind === "token") return `${p.role} · API token${p.scope ? ` (${p.scope})` : ""}`;
  return p.role;
}

export function AccountMenu() {
  const store = useStore();
  const view = useView();
  const acct = store.account;
  const p = acct.me.value?.principal;
  if (!acct.hasMenu.value || !p) return null;
  const person = p.kind === "user";
  const items: MenuItem[] = [
    { key: "tokens", label: "API tokens", icon: <IKey size={15} />, testid: "menu-tokens", onSelect: () => openPage(view, "settings", "tokens") },
  ];
  if (acct.permissions.value.admin) {
    items.push({ key: "users", label: "Users", icon: <IUsers size={15} />, testid: "menu-users", onSelect: () => openPage(view, "settings", "users") });
  }
  if (person) {
    items.push({ key: "password", label: "Change password", icon: <ILock size={15} />, testid: "menu-password", onSelect: () => (view.passwordOpen.value = true) });
  }
  items.push({
    key: "signout", label: person ? "Sign out" : "Forget this token", icon: <ILogout size={15} />, testid: "menu-signout",
    onSelect: () => void acct.signOut().then((e) => e && (store.toast.value = e)),
  });
  return (
    <MenuButton
      class="account-menu"
      testid="account-menu"
      menuTestid="account-items"
      label={`Account: ${p.name} (${roleText(p)})`}
      icon={<IUser size={17} />}
      head={
        <>
          <span class="acct-name" data-testid="account-name">{p.name}</span>
          <span class="acct-role" data-testid="account-role" data-role={p.role}>{roleText(p)}</span>
        </>
      }
      items={items}
    />
  );
}

export function PasswordDialog() {
  const store = useStore();
  const view = useView();
  const box = useRef<HTMLDivElement>(null);
  const current = useRef<HTMLInputElement>(null);
  const next = useRef<HTMLInputElement>(null);
  const again = useRef<HTMLInputElement>(null);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const close = () => (view.passwordOpen.value = false);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    current.current?.focus();
    const release = trapFocus(box.current!, close);
    return () => {
      release();
      if (before && document.contains(before)) before.focus();
    };
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const cur = current.current?.value ?? "";
    const nw = next.current?.value ?? "";
    if (!cur || !nw) {
      error.value = "Enter your current password and a new one.";
      return;
    }
    if (nw !== (again.current?.value ?? "")) {
      error.value = "The new password and its repetition differ.";
      again.current?.focus();
      return;
    }
    busy.value = true;
    const err = await store.account.changePassword(cur, nw);
    busy.value = false;
    if (err) {
      error.value = err.code === "bad_credentials" ? "Your current password is not right." : err.message;
      return;
    }
    close();
    store.toast.value = { code: "password_changed", message: "Password changed. Your other signed-in browsers were signed out." };
  };

  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div class="modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="pw-title" data-testid="password-dialog">
        <h2 id="pw-title" class="modal-title">Change your password</h2>
        <form class="form-stack" onSubmit={submit} noValidate>
          <label class="field">
            <span class="field-label">Current password</span>
            <input ref={current} class="input" type="password" autoComplete="current-password" data-testid="pw-current" onInput={() => (error.value = null)} />
          </label>
          <label class="field">
            <span class="field-label">New password</span>
            <input ref={next} class="input" type="password" autoComplete="new-password" data-testid="pw-new" onInput={() => (error.value = null)} />
          </label>
          <label class="field">
            <span class="field-label">New password again</span>
            <input ref={again} class="input" type="password" autoComplete="new-password" data-testid="pw-again" onInput={() => (error.value = null)} />
          </label>
          {error.value && <p class="form-error" role="alert" data-testid="pw-error">{error.value}</p>}
          <div class="modal-actions">
            <button type="button" class="btn" onClick={close}>Cancel</button>
            <button type="submit" class="btn btn-primary" data-testid="pw-submit" disabled={busy.value}>{busy.value ? "Changing…" : "Change password"}</button>
          </div>
        </form>
      </div>
    </div>
  );
}

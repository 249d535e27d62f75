// The users page (admins only): list the accounts, add one with a role and
// an initial password, change a role, disable or enable, reset a password.
// The server guards the last enabled admin (409 last_admin); its message is
// shown on the row, and the row goes back to what the server holds.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { ROLES, type Role, type UserAccount } from "../state/auth";
import { useStore } from "../state/context";
import { ConfirmDialog, trapFocus } from "./Dialog";
import { ago } from "./format";
import { useView } from "./view";

const ROLE_TEXT: Record<Role, string> = {
  viewer: "viewer — reads",
  operator: "operator — starts, steers, approves",
  admin: "admin — also manages people",
};

export function UsersPage() {
  const store = useStore();
  const users = useSignal<UserAccount[] | null>(null);
  const error = useSignal<string | null>(null);
  /** The row that failed last, and why (the server's words). */
  const rowError = useSignal<{ id: string; message: string } | null>(null);
  const disabling = useSignal<UserAccount | null>(null);
  const resetting = useSignal<UserAccount | null>(null);

  const load = async () => {
    const r = await store.account.listUsers();
    if (r.ok) {
      users.value = r.value.users;
      error.value = null;
    } else if (r.error.code !== "unauthorized") error.value = r.error.message;
  };
  useEffect(() => void load(), []);

  /** Changes u; a refusal is shown on the row (onRow) or returned. */
  const update = async (u: UserAccount, change: { role?: Role; disabled?: boolean; password?: string }, onRow = true): Promise<string | null> => {
    rowError.value = null;
    const r = await store.account.updateUser(u.id, change);
    if (!r.ok) {
      if (r.error.code === "unauthorized") return r.error.message;
      if (onRow) rowError.value = { id: u.id, message: r.error.message };
      await load(); // the row shows what the server holds
      return r.error.message;
    }
    users.value = (users.peek() ?? []).map((x) => (x.id === u.id ? r.value.user : x));
    return null;
  };

  if (!store.account.permissions.value.admin) {
    return (
      <div class="settings-section" data-testid="users-page">
        <p class="page-note">Managing people needs the admin role.</p>
      </div>
    );
  }

  return (
    <div class="settings-section" data-testid="users-page">
      <p class="page-lead">
        People who sign in to this server. A viewer reads; an operator also starts, steers and approves runs; an admin also manages people and everyone's tokens.
      </p>
      <AddUser onAdded={(u) => (users.value = [...(users.peek() ?? []), u])} />
      <h2 class="section-title">Accounts</h2>
      {error.value && <p class="form-error" role="alert" data-testid="users-error">{error.value}</p>}
      {users.value === null ? (
        <p class="page-note">Loading…</p>
      ) : (
        <ul class="rows" data-testid="user-list">
          {users.value.map((u) => (
            <UserRow key={u.id} u={u} error={rowError.value?.id === u.id ? rowError.value.message : null}
              onRole={(role) => void update(u, { role })}
              onDisable={() => (disabling.value = u)}
              onEnable={() => void update(u, { disabled: false })}
              onReset={() => (resetting.value = u)} />
          ))}
        </ul>
      )}
      {disabling.value && (
        <ConfirmDialog
          title={`Disable ${disabling.value.name}?`}
          body={<>They are signed out everywhere at once and their API tokens stop working. You can enable the account again later.</>}
          confirmLabel="Disable"
          confirmTestId="confirm-disable"
          cancelTestId="cancel-disable"
          onCancel={() => (disabling.value = null)}
          onConfirm={() => {
            const u = disabling.value!;
            disabling.value = null;
            void update(u, { disabled: true });
          }}
        />
      )}
      {resetting.value && <ResetPassword u={resetting.value} onClose={() => (resetting.value = null)} save={(pw) => update(resetting.value!, { password: pw }, false)} />}
    </div>
  );
}

function UserRow({ u, error, onRole, onDisable, onEnable, onReset }: {
  u: UserAccount;
  error: string | null;
  onRole: (r: Role) => void;
  onDisable: () => void;
  onEnable: () => void;
  onReset: () => void;
}) {
  const store = useStore();
  const view = useView();
  const me = store.account.me.value?.principal?.user_id === u.id;
  return (
    <li class={"row" + (u.disabled ? " row-off" : "")} data-testid="user-row" data-id={u.id} data-name={u.name} data-role={u.role} data-disabled={u.disabled ? "true" : "false"}>
      <div class="row-main">
        <span class="row-title">{u.name}{me && <span class="row-you"> (you)</span>}</span>
        <span class="row-sub">{u.disabled ? <span class="row-state" data-testid="user-disabled">Disabled</span> : <span>since {ago(u.created_at, view.now.value)}</span>}</span>
      </div>
      <label class="row-role">
        <span class="sr-only">Role of {u.name}</span>
        <select class="input input-sm" data-testid="user-role" value={u.role} onChange={(e) => onRole(e.currentTarget.value as Role)}>
          {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
      </label>
      <div class="row-actions">
        <button type="button" class="btn btn-sm" data-testid="user-reset" onClick={onReset}>Reset password</button>
        {u.disabled ? (
          <button type="button" class="btn btn-sm" data-testid="user-enable" onClick={onEnable}>Enable</button>
        ) : (
          <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="user-disable" onClick={onDisable}>Disable</button>
        )}
      </div>
      {error && <p class="form-error full" role="alert" data-testid="user-error">{error}</p>}
    </li>
  );
}

function AddUser({ onAdded }: { onAdded: (u: UserAccount) => void }) {
  const store = useStore();
  const name = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const role = useSignal<Role>("operator");
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const n = name.current?.value.trim() ?? "";
    const pw = password.current?.value ?? "";
    if (!n || !pw) {
      error.value = !n ? "Enter a name." : "Enter an initial password; they can change it after signing in.";
      (!n ? name : password).current?.focus();
      return;
    }
    busy.value = true;
    const r = await store.account.addUser(n, role.peek(), pw);
    busy.value = false;
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    error.value = null;
    if (name.current) name.current.value = "";
    if (password.current) password.current.value = "";
    onAdded(r.value.user);
  };

  return (
    <form class="card form-row" onSubmit={submit} noValidate data-testid="user-add" aria-label="Add a person">
      <label class="field grow">
        <span class="field-label">Name</span>
        <input ref={name} class="input" data-testid="user-add-name" autoComplete="off" autoCapitalize="off" spellcheck={false} maxLength={64} onInput={() => (error.value = null)} />
      </label>
      <label class="field">
        <span class="field-label">Role</span>
        <select class="input" data-testid="user-add-role" value={role.value} onChange={(e) => (role.value = e.currentTarget.value as Role)}>
          {ROLES.map((r) => <option key={r} value={r}>{ROLE_TEXT[r]}</option>)}
        </select>
      </label>
      <label class="field grow">
        <span class="field-label">Initial password</span>
        <input ref={password} class="input" type="password" data-testid="user-add-password" autoComplete="new-password" onInput={() => (error.value = null)} />
      </label>
      <button type="submit" class="btn btn-primary form-submit" data-testid="user-add-submit" disabled={busy.value}>{busy.value ? "Adding…" : "Add person"}</button>
      {error.value && <p class="form-error full" role="alert" data-testid="user-add-error">{error.value}</p>}
    </form>
  );
}

function ResetPassword({ u, onClose, save }: { u: UserAccount; onClose: () => void; save: (pw: string) => Promise<string | null> }) {
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  useEffect(() => {
    input.current?.focus();
    return trapFocus(box.current!, onClose);
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const pw = input.current?.value ?? "";
    if (!pw) {
      error.value = "Enter the new password.";
      return;
    }
    busy.value = true;
    const err = await save(pw);
    busy.value = false;
    if (err) error.value = err; // too short, …: keep the dialog for a retry
    else onClose();
  };
  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div class="modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="reset-title" data-testid="reset-dialog">
        <h2 id="reset-title" class="modal-title">New password for {u.name}</h2>
        <p class="modal-body">Their other sessions end; tell them the new password another way.</p>
        <form class="form-stack" onSubmit={submit} noValidate>
          <label class="field">
            <span class="field-label">New password</span>
            <input ref={input} class="input" type="password" autoComplete="new-password" data-testid="reset-password" onInput={() => (error.value = null)} />
          </label>
          {error.value && <p class="form-error" role="alert" data-testid="reset-error">{error.value}</p>}
          <div class="modal-actions">
            <button type="button" class="btn" onClick={onClose}>Cancel</button>
            <button type="submit" class="btn btn-primary" data-testid="reset-submit" disabled={busy.value}>Set password</button>
          </div>
        </form>
      </div>
    </div>
  );
}

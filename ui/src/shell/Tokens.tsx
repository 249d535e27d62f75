// The personal API tokens page: create one with a name and a scope (the
// secret is shown once, with a copy button), list them with prefix, scope
// and last use, revoke one after a confirmation. An admin may list
// everyone's. Only a person (signed in, or with their own token) can make
// tokens: the server token and the open local server cannot.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { SCOPES, type ApiToken, type Permissions, type Principal, type Scope } from "../state/auth";
import { useStore } from "../state/context";
import { ConfirmDialog } from "./Dialog";
import { ago } from "./format";
import { ICheck, ICopy } from "./icons";
import { useView } from "./view";

const SCOPE_TEXT: Record<Scope, string> = {
  read: "read — see sessions and transcripts",
  operate: "operate — also start, steer and approve",
  admin: "admin — also manage users and tokens",
};

/** The scopes this caller may give a token: no more than it may do. */
function grantable(perms: Permissions): Scope[] {
  return SCOPES.filter((s) => (s === "read" ? perms.read : s === "operate" ? perms.operate : perms.admin));
}

export function TokensPage() {
  const store = useStore();
  const acct = store.account;
  const p = acct.me.value?.principal ?? null;
  const admin = acct.permissions.value.admin;
  const person = p?.kind === "user" || p?.kind === "token";
  const all = useSignal(!person && admin);
  const tokens = useSignal<ApiToken[] | null>(null);
  const error = useSignal<string | null>(null);
  const created = useSignal<{ token: ApiToken; secret: string } | null>(null);
  const revoking = useSignal<ApiToken | null>(null);

  const load = async () => {
    const r = await acct.listTokens(all.peek());
    if (r.ok) {
      tokens.value = r.value.tokens;
      error.value = null;
    } else if (r.error.code !== "unauthorized") error.value = r.error.message;
  };
  useEffect(() => void load(), [all.value]);

  const revoke = async (t: ApiToken) => {
    revoking.value = null;
    const r = await acct.revokeToken(t.id);
    if (!r.ok && r.error.code !== "not_found") error.value = r.error.message;
    await load();
  };

  return (
    <div class="settings-section" data-testid="tokens-page">
      <p class="page-lead">
        A personal API token lets a script or another program use this server as you, with at most your own role.
        Programs send it in the header <code>Authorization: Bearer cad_…</code>
      </p>
      {person && p ? (
        <CreateToken principal={p} onCreated={(c) => { created.value = c; void load(); }} />
      ) : (
        <p class="page-note" data-testid="tokens-no-user">Sign in as a person to create personal tokens.</p>
      )}
      {created.value && <SecretBox secret={created.value.secret} name={created.value.token.name} onDone={() => (created.value = null)} />}
      <div class="list-head">
        <h2 class="section-title">{all.value ? "Everyone's tokens" : "Your tokens"}</h2>
        {admin && person && (
          <label class="check">
            <input type="checkbox" data-testid="tokens-all" checked={all.value} onChange={(e) => (all.value = e.currentTarget.checked)} />
            Show everyone's
          </label>
        )}
      </div>
      {error.value && <p class="form-error" role="alert" data-testid="tokens-error">{error.value}</p>}
      <TokenList tokens={tokens.value} showUser={all.value} onRevoke={(t) => (revoking.value = t)} />
      {revoking.value && (
        <ConfirmDialog
          title="Revoke this token?"
          body={<>Programs using “{revoking.value.name}” ({revoking.value.prefix}…) lose access at once. This cannot be undone.</>}
          confirmLabel="Revoke token"
          confirmTestId="confirm-revoke"
          cancelTestId="cancel-revoke"
          onCancel={() => (revoking.value = null)}
          onConfirm={() => void revoke(revoking.value!)}
        />
      )}
    </div>
  );
}

function CreateToken({ principal, onCreated }: { principal: Principal; onCreated: (c: { token: ApiToken; secret: string }) => void }) {
  const store = useStore();
  const scopes = grantable(store.account.permissions.value);
  const name = useRef<HTMLInputElement>(null);
  const scope = useSignal<Scope>(scopes.includes("read") ? "read" : scopes[0]);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const n = name.current?.value.trim() ?? "";
    if (!n) {
      error.value = "Give the token a name, e.g. the program that will use it.";
      name.current?.focus();
      return;
    }
    busy.value = true;
    const r = await store.account.createToken(n, scope.peek());
    busy.value = false;
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    error.value = null;
    if (name.current) name.current.value = "";
    onCreated(r.value);
  };

  return (
    <form class="card form-row" onSubmit={submit} noValidate data-testid="token-create" aria-label="Create a token">
      <label class="field grow">
        <span class="field-label">Name</span>
        <input ref={name} class="input" data-testid="token-name" maxLength={64} placeholder="e.g. nightly report" onInput={() => (error.value = null)} />
      </label>
      <label class="field">
        <span class="field-label">Scope</span>
        <select class="input" data-testid="token-scope" value={scope.value} onChange={(e) => (scope.value = e.currentTarget.value as Scope)}
          title={`At most your role (${principal.role})`}>
          {scopes.map((s) => <option key={s} value={s}>{SCOPE_TEXT[s]}</option>)}
        </select>
      </label>
      <button type="submit" class="btn btn-primary form-submit" data-testid="token-create-submit" disabled={busy.value}>
        {busy.value ? "Creating…" : "Create token"}
      </button>
      {error.value && <p class="form-error full" role="alert" data-testid="token-create-error">{error.value}</p>}
    </form>
  );
}

/** The new token's secret, once: copy it now or never. */
function SecretBox({ secret, name, onDone }: { secret: string; name: string; onDone: () => void }) {
  const copied = useSignal(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.select(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copied.value = true;
    } catch {
      // No clipboard access (an insecure origin, a denied permission): the
      // text is selected for the person to copy by hand.
      field.current?.select();
    }
  };
  return (
    <div class="card secret-box" role="status" data-testid="token-secret-box">
      <p class="secret-title">Token “{name}” created</p>
      <div class="secret-row">
        <input ref={field} class="input mono secret-value" readOnly value={secret} data-testid="token-secret" aria-label="The new token" onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="btn" data-testid="token-copy" onClick={() => void copy()}>
          {copied.value ? <><ICheck size={15} /> Copied</> : <><ICopy size={15} /> Copy</>}
        </button>
      </div>
      <p class="secret-warn">Copy it now: you will not see it again. The server keeps only a hash of it.</p>
      <div class="secret-actions">
        <button type="button" class="btn btn-sm" data-testid="token-secret-done" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

function TokenList({ tokens, showUser, onRevoke }: { tokens: ApiToken[] | null; showUser: boolean; onRevoke: (t: ApiToken) => void }) {
  const view = useView();
  const now = view.now.value;
  if (tokens === null) return <p class="page-note">Loading…</p>;
  if (tokens.length === 0) return <p class="page-note" data-testid="tokens-empty">No tokens yet.</p>;
  return (
    <ul class="rows" data-testid="token-list">
      {tokens.map((t) => (
        <li key={t.id} class={"row" + (t.revoked_at ? " row-off" : "")} data-testid="token-row" data-id={t.id} data-name={t.name} data-revoked={t.revoked_at ? "true" : "false"}>
          <div class="row-main">
            <span class="row-title">{t.name}</span>
            <span class="row-sub">
              <code class="token-prefix" data-testid="token-prefix">{t.prefix}…</code>
              <span class={"scope-badge scope-" + t.scope} data-testid="token-scope-badge">{t.scope}</span>
              {showUser && <span class="row-user">{t.user}</span>}
            </span>
          </div>
          <div class="row-facts">
            <span title={t.created_at}>created {ago(t.created_at, now)}</span>
            <span data-testid="token-last-used" title={t.last_used_at ?? undefined}>{t.last_used_at ? `last used ${ago(t.last_used_at, now)}` : "never used"}</span>
          </div>
          <div class="row-actions">
            {t.revoked_at ? (
              <span class="row-state" data-testid="token-revoked">Revoked</span>
            ) : (
              <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="token-revoke" onClick={() => onRevoke(t)}>Revoke</button>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}

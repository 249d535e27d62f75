// Who this browser is to the server, and what it may do (issue 13, the
// contract in docs/API.md "Sign-in and roles"). GET /api/auth/me decides
// what the page shows first: the sign-in page (accounts exist and nobody is
// signed in), the token dialog (a CADUCEUS_TOKEN server without accounts),
// or the workbench, whose controls follow `permissions`.
//
// The session cookie is HttpOnly: this module never sees it. It keeps the
// session's CSRF token in memory only (login and /me hand it out again after
// a reload), and the API client adds it to every state-changing request.
// The token, user and password actions live here too, so the pages never
// touch the network themselves.

import { computed, signal, type ReadonlySignal, type Signal } from "@preact/signals";
import type { Api, Result } from "./api";
import type { ActionError } from "./contract";

export type Role = "admin" | "operator" | "viewer";
export type Scope = "read" | "operate" | "admin";
export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];
export const SCOPES: readonly Scope[] = ["read", "operate", "admin"];

export interface Principal {
  kind: "user" | "token" | "server_token" | "local";
  user_id?: string;
  name: string;
  role: Role;
  scope?: Scope;
}

export interface Permissions { read: boolean; operate: boolean; admin: boolean }

export interface Me {
  signed_in: boolean;
  sign_in_required: boolean;
  accounts: boolean;
  principal: Principal | null;
  permissions: Permissions;
  csrf_token?: string;
}

export interface ApiToken {
  id: string;
  name: string;
  scope: Scope;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  user: string;
}

export interface UserAccount {
  id: string;
  name: string;
  role: Role;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

/** What the page shows: nothing yet (asking /me), the sign-in page, or the
 * workbench (which raises the token dialog itself on a 401). */
export type Gate = "loading" | "signin" | "app";

/** Everything may be done: an older server without /api/auth/me, or the
 * open loopback server (the "local" principal, an admin). */
const ALL: Permissions = { read: true, operate: true, admin: true };

export interface Account {
  me: Signal<Me | null>;
  gate: Signal<Gate>;
  permissions: ReadonlySignal<Permissions>;
  /** Why the sign-in page is shown again ("Your session ended…"), or null. */
  notice: Signal<string | null>;
  /** The account menu is offered: people sign in on this server, or the
   * caller is a person (or a person's token). */
  hasMenu: ReadonlySignal<boolean>;

  signIn(name: string, password: string): Promise<ActionError | null>;
  signOut(): Promise<ActionError | null>;
  changePassword(current: string, next: string): Promise<ActionError | null>;
  listTokens(all: boolean): Promise<Result<{ tokens: ApiToken[] }>>;
  createToken(name: string, scope: Scope): Promise<Result<{ token: ApiToken; secret: string }>>;
  revokeToken(id: string): Promise<Result<void>>;
  listUsers(): Promise<Result<{ users: UserAccount[] }>>;
  addUser(name: string, role: Role, password: string): Promise<Result<{ user: UserAccount }>>;
  updateUser(id: string, change: { role?: Role; disabled?: boolean; password?: string }): Promise<Result<{ user: UserAccount }>>;
}

export interface AccountInternals {
  /** The CSRF token for the API client ("" = none). */
  csrf(): string;
  /** Asks /api/auth/me and sets the gate; resolves to it. */
  check(): Promise<Gate>;
  /** A request was refused with 401 while people sign in here: back to the
   * sign-in page. False when this server has no accounts (the token dialog
   * is the way in then). */
  ended(): boolean;
}

export interface AccountHooks {
  /** Signed in: load the workbench. */
  onSignedIn(): void;
  /** Forget the server token kept in this browser (signing out of it). */
  forgetToken(): void;
  /** Leave the page for a fresh start (after signing out). */
  restart(): void;
}

export function createAccount(api: Api, hooks: AccountHooks): Account & AccountInternals {
  const me = signal<Me | null>(null);
  const gate = signal<Gate>("loading");
  const notice = signal<string | null>(null);
  const permissions = computed<Permissions>(() => {
    const m = me.value;
    return m && m.principal ? m.permissions : ALL;
  });
  const hasMenu = computed(() => {
    const m = me.value;
    const k = m?.principal?.kind;
    return !!m && (m.accounts || k === "user" || k === "token");
  });
  let csrf = "";
  // Tabs of one browser share the sign-in cookie: a tab that signs in
  // tells the others, and one waiting on the sign-in page (its session
  // ended, say while another tab signed out and in again) asks /me again
  // and goes on without the person typing the password twice.
  const tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel("caduceus-auth") : null;
  if (tabs) {
    tabs.onmessage = (e: MessageEvent) => {
      if (e.data !== "signed-in" || gate.peek() !== "signin") return;
      void check().then((g) => {
        if (g === "app") {
          notice.value = null;
          hooks.onSignedIn();
        }
      });
    };
  }

  const check = async (): Promise<Gate> => {
    const r = await api.get<Me>("/api/auth/me");
    if (!r.ok) {
      // Asked again (a 401 or 403 elsewhere) and no answer: keep what we
      // know rather than widen the controls to everything.
      if (gate.peek() !== "loading" && me.peek()) return gate.peek();
      // No such endpoint (an older server) or no answer at load: the
      // workbench as before, which asks for the token on a 401 by itself.
      me.value = null;
      gate.value = "app";
      return "app";
    }
    me.value = r.value;
    csrf = r.value.csrf_token ?? "";
    gate.value = !r.value.principal && r.value.accounts && r.value.sign_in_required ? "signin" : "app";
    // A token kept in this browser that resolves to nobody would be sent
    // beside the new session cookie, and a wrong token wins: forget it.
    if (gate.value === "signin") hooks.forgetToken();
    return gate.value;
  };

  const account: Account & AccountInternals = {
    me, gate, permissions, notice, hasMenu,
    csrf: () => csrf,
    check,

    ended() {
      const m = me.peek();
      if (!m?.accounts) return false;
      const was = m.principal?.kind === "user" || m.principal?.kind === "token";
      csrf = "";
      me.value = { ...m, signed_in: false, principal: null, csrf_token: undefined };
      if (gate.peek() !== "signin") notice.value = was ? "Your session ended; sign in again." : null;
      gate.value = "signin";
      return true;
    },

    async signIn(name, password) {
      const r = await api.post<{ principal: Principal; permissions: Permissions; csrf_token: string }>("/api/auth/login", { name, password });
      if (!r.ok) return r.error;
      csrf = r.value.csrf_token ?? "";
      const m = me.peek();
      me.value = {
        signed_in: true, sign_in_required: m?.sign_in_required ?? true, accounts: true,
        principal: r.value.principal, permissions: r.value.permissions, csrf_token: csrf,
      };
      notice.value = null;
      gate.value = "app";
      hooks.onSignedIn();
      tabs?.postMessage("signed-in");
      return null;
    },

    async signOut() {
      const k = me.peek()?.principal?.kind;
      if (k === "user") {
        const r = await api.post<void>("/api/auth/logout");
        if (!r.ok && r.error.code !== "unauthorized") return r.error;
      } else {
        // A token typed into this browser: forgetting it is signing out.
        hooks.forgetToken();
      }
      csrf = "";
      hooks.restart();
      return null;
    },

    async changePassword(current, next) {
      const r = await api.post<void>("/api/auth/password", { current, new: next });
      return r.ok ? null : r.error;
    },

    listTokens: (all) => api.get(`/api/tokens${all ? "?all=1" : ""}`),
    createToken: (name, scope) => api.post("/api/tokens", { name, scope }),
    revokeToken: (id) => api.del(`/api/tokens/${encodeURIComponent(id)}`),
    listUsers: () => api.get("/api/users"),
    addUser: (name, role, password) => api.post("/api/users", { name, role, password }),
    updateUser: (id, change) => api.patch(`/api/users/${encodeURIComponent(id)}`, change),
  };
  return account;
}

// The sign-in page: shown instead of the workbench while people sign in on
// this server and nobody is (or their session ended). One message for a
// wrong name or password, as the server gives it; after too many failures
// the server's message and a countdown, with the button held until it ends.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { Logo } from "./icons";
import { ThemeSwitch } from "./ThemeSwitch";

export function SignIn() {
  const store = useStore();
  const acct = store.account;
  const name = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const error = useSignal<string | null>(null);
  /** The code of the last refusal, and how many there were (the page's
   * contract for tests: each answer is told apart from the one before). */
  const refused = useSignal({ code: "", n: 0 });
  const busy = useSignal(false);
  /** When the rate limit lets us try again (ms since epoch; 0 = now). */
  const until = useSignal(0);
  const left = useCountdown(until.value);
  const notice = acct.notice.value;
  // The server's "try again in n seconds" is stale once the wait is over.
  const message = refused.value.code === "too_many_attempts" && until.value > 0 && left === 0 ? "You can try again now." : error.value;

  useEffect(() => {
    document.title = "Sign in · Caduceus";
    name.current?.focus();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy.peek() || left > 0) return;
    const n = name.current?.value.trim() ?? "";
    const p = password.current?.value ?? "";
    if (!n || !p) {
      error.value = !n ? "Enter your name." : "Enter your password.";
      (!n ? name : password).current?.focus();
      return;
    }
    busy.value = true;
    error.value = null;
    const err = await acct.signIn(n, p);
    busy.value = false;
    if (!err) return;
    refused.value = { code: err.code, n: refused.peek().n + 1 };
    error.value = err.code === "unauthorized" ? "Sign-in is not possible right now." : err.message;
    const wait = Number(err.details?.retry_after_seconds);
    if (err.code === "too_many_attempts" && wait > 0) until.value = Date.now() + wait * 1000;
    if (password.current) password.current.value = "";
    password.current?.focus();
  };

  return (
    <div class="signin-page" data-testid="signin-page">
      <div class="signin-theme"><ThemeSwitch where="signin" /></div>
      <form class="signin-card" onSubmit={submit} noValidate aria-labelledby="signin-title">
        <div class="signin-brand"><Logo size={34} /><span>Caduceus</span></div>
        <h1 id="signin-title" class="signin-title">Sign in</h1>
        {notice && <p class="signin-notice" role="status" data-testid="signin-notice">{notice}</p>}
        <label class="field">
          <span class="field-label">Name</span>
          <input ref={name} class="input" data-testid="signin-name" name="username" autoComplete="username"
            autoCapitalize="off" spellcheck={false} onInput={() => (error.value = null)} />
        </label>
        <label class="field">
          <span class="field-label">Password</span>
          <input ref={password} class="input" type="password" data-testid="signin-password" name="password"
            autoComplete="current-password" onInput={() => (error.value = null)}
            aria-invalid={error.value ? true : undefined} aria-describedby={error.value ? "signin-error" : undefined} />
        </label>
        {error.value && (
          <p id="signin-error" class="form-error" role="alert" data-testid="signin-error" data-code={refused.value.code} data-n={refused.value.n}>
            {message}
          </p>
        )}
        <button type="submit" class="btn btn-primary btn-lg signin-submit" data-testid="signin-submit" disabled={busy.value || left > 0} aria-busy={busy.value}>
          {busy.value ? "Signing in…" : left > 0 ? <span class="signin-wait" data-testid="signin-countdown">Wait {left} s</span> : "Sign in"}
        </button>
      </form>
    </div>
  );
}

/** Whole seconds until `at` (0 once passed), ticking every second. */
function useCountdown(at: number): number {
  const now = useSignal(Date.now());
  useEffect(() => {
    if (at <= Date.now()) return;
    now.value = Date.now();
    const t = window.setInterval(() => {
      now.value = Date.now();
      if (now.value >= at) window.clearInterval(t);
    }, 250);
    return () => window.clearInterval(t);
  }, [at]);
  return Math.max(0, Math.ceil((at - now.value) / 1000));
}

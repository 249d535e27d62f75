// The access-token prompt: shown while a server run with CADUCEUS_TOKEN
// refuses our requests (store.auth). It cannot be dismissed, since nothing
// works without the token; a refused token brings it back with the reason.
// The token goes to the store only (localStorage and request headers), never
// to the address bar or the console.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { tokenProblem } from "../state/token";
import { trapFocus } from "./Dialog";

export function TokenDialog() {
  const store = useStore();
  const prompt = store.auth.value;
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const problem = useSignal<string | null>(null);

  useEffect(() => {
    input.current?.focus();
    return trapFocus(box.current!, () => {
      // Esc: there is nothing to go back to without the token.
    });
  }, []);

  if (!prompt) return null;
  const error = problem.value ?? prompt.error;

  const submit = (e: Event) => {
    e.preventDefault();
    const t = input.current?.value.trim() ?? "";
    const p = tokenProblem(t);
    problem.value = p;
    if (p) {
      input.current?.focus();
      return;
    }
    store.submitToken(t);
  };

  return (
    <div class="modal-backdrop">
      <div class="modal token-modal" ref={box} role="dialog" aria-modal="true" aria-labelledby="token-title" aria-describedby="token-body" data-testid="token-dialog">
        <h2 id="token-title" class="modal-title">This Caduceus server needs its access token</h2>
        <p id="token-body" class="modal-body">
          It was started with <code>CADUCEUS_TOKEN</code>. Enter that token to continue; it is kept in this browser only.
        </p>
        <form class="token-form" onSubmit={submit} noValidate>
          <label class="token-label" for="token-input">Access token</label>
          <input
            ref={input}
            id="token-input"
            class="token-input"
            type="password"
            data-testid="token-input"
            autoComplete="off"
            autoCapitalize="off"
            spellcheck={false}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "token-error" : undefined}
            onInput={() => problem.value && (problem.value = null)}
          />
          {error && <p id="token-error" class="token-error" role="alert" data-testid="token-error">{error}</p>}
          <div class="modal-actions">
            <button type="submit" class="btn btn-primary" data-testid="token-submit">Continue</button>
          </div>
        </form>
      </div>
    </div>
  );
}

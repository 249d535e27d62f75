// The access token of a server run with CADUCEUS_TOKEN, kept in this
// browser's localStorage so a reload does not ask again. Storage can be
// unavailable (private modes, blocked storage): then the token lives only
// as long as the page.

const KEY = "caduceus.token";

export function loadToken(): string {
  try {
    return localStorage.getItem(KEY) ?? "";
  } catch {
    return "";
  }
}

export function saveToken(token: string): void {
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // not persisted; the in-memory copy still works
  }
}

/** Why `token` cannot be a Caduceus token (printable ASCII, no spaces:
 * the server's rule, and what an HTTP header can carry), or null. */
export function tokenProblem(token: string): string | null {
  if (!token) return "Enter the token.";
  if (!/^[\x21-\x7e]+$/.test(token)) return "A token is printable ASCII without spaces.";
  return null;
}

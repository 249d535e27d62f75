// Browser notifications for new approvals and questions (seed 003). Off
// until the person enables them; a mute switch (kept in localStorage)
// silences them without revoking the browser permission.

import type { Envelope } from "./types";
import type * as P from "./payloads";

export type NotifyState = "unsupported" | "default" | "granted" | "denied" | "muted";

const MUTE_KEY = "caduceus.notifications.muted";

const supported = () => typeof window !== "undefined" && "Notification" in window;

function muted(): boolean {
  try {
    return localStorage.getItem(MUTE_KEY) === "1";
  } catch {
    return false; // storage blocked: never muted
  }
}

export function setMuted(on: boolean): void {
  try {
    if (on) localStorage.setItem(MUTE_KEY, "1");
    else localStorage.removeItem(MUTE_KEY);
  } catch {
    // storage blocked: the flag lasts for this page only
  }
}

export function notifyState(): NotifyState {
  if (!supported()) return "unsupported";
  if (muted()) return "muted";
  return Notification.permission as NotifyState;
}

export async function requestPermission(): Promise<NotifyState> {
  if (!supported()) return "unsupported";
  setMuted(false);
  try {
    await Notification.requestPermission();
  } catch {
    // old callback-only API or a blocked prompt: read the result below
  }
  return notifyState();
}

/** Shows a notification for a live approval.requested / clarify.requested.
 * Clicking it focuses the tab and calls onClick (select the session). */
export function showRequest(ev: Envelope, sessionTitle: string, onClick: () => void): void {
  if (notifyState() !== "granted") return;
  let title: string;
  let body: string;
  if (ev.type === "approval.requested") {
    const p = ev.payload as P.ApprovalRequestedP;
    title = `Approval needed: ${oneLine(p.action)}`;
    body = [p.reason, sessionTitle].filter(Boolean).join(" · ");
  } else {
    const p = ev.payload as P.ClarifyRequestedP;
    title = "Question from the agent";
    body = [oneLine(p.question), sessionTitle].filter(Boolean).join(" · ");
  }
  try {
    const n = new Notification(title, { body, tag: (ev.payload as P.RequestedP).request_id });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
  } catch {
    // Some platforms only allow notifications from a service worker.
  }
}

/** Shows a notification for a scheduled job's run that ended (issue 17,
 * jobResults.ts). Tagged by run, so that two tabs of one browser showing it
 * make one notification, not two. Clicking it focuses the tab and calls
 * onClick (open the run's session). */
export function showJobResult(title: string, runId: string, onClick: () => void): void {
  if (notifyState() !== "granted") return;
  try {
    const n = new Notification(title, { body: "Open its session to read the result.", tag: `job-result-${runId}` });
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
  } catch {
    // Some platforms only allow notifications from a service worker.
  }
}

function oneLine(s: string): string {
  const line = (s || "").split("\n")[0];
  return line.length > 120 ? line.slice(0, 119) + "…" : line;
}

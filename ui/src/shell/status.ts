// The one mapping from a status to its colour ("tone"), shared by run ends,
// status badges, tool pills and request cards, so that a status reads the
// same everywhere: done is green, failed red, stopped grey (never green),
// waiting for a person amber, running the accent, interrupted or
// recovering amber. base.css turns a tone class into the --tone colour.

export type Tone = "ok" | "err" | "neutral" | "warn" | "live";

const TONES: Record<string, Tone> = {
  // finished well
  completed: "ok", ok: "ok", resolved: "ok",
  // failed
  failed: "err", error: "err", timeout: "err", denied: "err", expired: "err",
  // stopped by a person, or nothing happening
  cancelled: "neutral", cancelling: "neutral", idle: "neutral", pending: "neutral", queued: "neutral",
  // a person is holding things up
  awaiting_approval: "warn", awaiting_clarify: "warn", paused: "warn",
  // cut off by a stopped worker: neither done nor failed
  interrupted: "warn", recovering: "warn",
  running: "live",
};

/** The tone of a run, session or tool status; unknown ones are neutral. */
export const toneOf = (status: string | undefined | null): Tone => TONES[status ?? ""] ?? "neutral";

/** The class that gives an element its status colour (--tone). */
export const toneClass = (status: string | undefined | null): string => "tone-" + toneOf(status);

// The store's surface as the views see it. src/state/store.ts implements
// it; views get it from StoreContext (src/state/context.ts) and never touch
// the network or the event stream themselves.

import type { JobResult } from "./jobResults";
import type { ReadonlySignal, Signal } from "@preact/signals";
import type { Api } from "./api";
import type { Account } from "./auth";
import type { Attachment, Command, Connection, Envelope, Health, HumanRequest, Session, SessionState } from "./types";

export interface Meta {
  version: string; demo_model: boolean; default_model: string; schema_version: number;
  /** Where new sessions may work: the default workspace and the roots a
   * chosen one must lie under (--workspace-root). */
  workspaces?: { default: string; roots: string[] };
}
export interface ModelChoice { ref: string; provider: string; label: string; /** Takes image input. */ images?: boolean }

/** Why an action failed, shaped like the API's error body. */
export interface ActionError { code: string; message: string; details?: Record<string, unknown> }

/** The server (run with CADUCEUS_TOKEN) refused us: ask the person for its
 * access token. `error` says why the last token failed (null: none given). */
export interface AuthPrompt { error: string | null }

/** What the runner-health banner says: no runner is alive while runs wait
 * (`waiting`: queued plus recovering runs of every session), or the server
 * cannot read its database. */
export type RunnerAlert =
  | { kind: "no_runner"; waiting: number }
  | { kind: "store_unavailable" }
  /** The store reads but refuses writes (a full disk, a database locked
   * elsewhere): reason is the server's plain words. */
  | { kind: "store_write"; reason: string };

/** PATCH /api/sessions/{id}'s organising fields. */
export interface OrganisePatch { pinned?: boolean; archived?: boolean; project_id?: string | null; /** h16-profiles */ profile_id?: string }

export interface Store {
  // ---- read ----
  meta: Signal<Meta | null>;
  sessions: Signal<Session[]>; // newest first (updated_at), the pages loaded so far
  /** The server has sessions past the pages loaded (GET /api/sessions
   * next_cursor); loadMoreSessions() fetches the next page. */
  sessionsMore: ReadonlySignal<boolean>;
  sessionFilter: Signal<string>; // sidebar search text
  visibleSessions: ReadonlySignal<Session[]>; // sessions filtered by title
  activeId: Signal<string | null>;
  active: ReadonlySignal<SessionState | null>;
  /** Pending approvals and questions of every session, oldest first. */
  pending: Signal<HumanRequest[]>;
  models: Signal<ModelChoice[]>;
  commands: Signal<Command[]>;
  connection: Signal<Connection>;
  /** Last action error, or a notice (e.g. the session on screen was deleted
   * elsewhere: code "session_deleted"), to show as a toast; views clear it. */
  toast: Signal<ActionError | null>;
  /** The last scheduled job's run that ended, of a job whose delivery
   * says notify (jobResults.ts): the shell shows it as a toast with a link
   * to its session; views clear it. */
  jobResult: Signal<JobResult | null>;
  /** Browser notifications for new requests: "default" until asked. */
  notify: Signal<"unsupported" | "default" | "granted" | "denied" | "muted">;
  /** Non-null while the server needs an access token we do not have (or
   * refused the one we sent); the shell shows the token dialog then. */
  auth: Signal<AuthPrompt | null>;
  /** The last GET /api/health answer (null until one arrived). A failed
   * fetch keeps the previous answer, so a blip raises no alarm. */
  health: Signal<Health | null>;
  /** The banner to show above the transcript, or null. */
  runnerAlert: ReadonlySignal<RunnerAlert | null>;
  /** Who is signed in, what they may do, and the sign-in, token and user
   * actions (auth.ts). */
  account: Account;
  /** The API client, for views with data of their own (the workspace
   * tabs): it carries the credentials and the CSRF header. */
  api: Api;

  // ---- act (each resolves to an ActionError on failure, null on success;
  // failures are also put in `toast`) ----
  selectSession(id: string | null): void;
  /** Appends the next page of sessions (no-op when there is none, or one
   * is already loading). */
  loadMoreSessions(): Promise<ActionError | null>;
  /** Uses `token` for every request from now on (kept in localStorage) and
   * loads again; a refused token brings `auth` back with an error. */
  submitToken(token: string): void;
  /** Creates a session, in workspace when given (else the server's
   * default). */
  createSession(workspace?: string, projectId?: string, profileId?: string): Promise<ActionError | null>;
  renameSession(id: string, title: string): Promise<ActionError | null>;
  /** Organising sessions: pins, archives or moves a session to a project
   * (project_id null: out of its project). */
  organise(id: string, patch: OrganisePatch): Promise<ActionError | null>;
  deleteSession(id: string): Promise<ActionError | null>;
  /** Calls fn with every project.* event the tab stream brings (projects
   * are the sidebar's view state), or with null when the stream starts
   * over (resync: load them again); returns the unsubscribe. */
  onProjectEvent(fn: (ev: Envelope | null) => void): () => void;
  /** Sends a message to the active session; queued when busy. Attachments
   * are files uploadFiles saved. */
  /** Sets the active session's goal ({text, max_runs, …}) or its status
   * ({status: "paused" | "active"}). */
  putGoal(body: { text?: string; status?: string; max_runs?: number }): Promise<ActionError | null>;
  /** Clears the active session's goal. */
  clearGoal(): Promise<ActionError | null>;
  /** Sends a message; ifBusy "steer" delivers it into the running run at
   * its next step boundary (queued when the run ends first). */
  send(content: string, attachments?: Attachment[], ifBusy?: "steer"): Promise<ActionError | null>;
  /** Saves files in the active session's workspace for a message to
   * attach; the error is the caller's to show (no toast). */
  /** An attachment's content, for a thumbnail (null: unavailable). */
  attachmentBlob(sessionId: string, path: string): Promise<Blob | null>;
  uploadFiles(files: File[], onProgress?: (sent: number, total: number) => void): Promise<{ attachments?: Attachment[]; error?: ActionError }>;
  /** Cancels the active session's busy run (Stop / Esc / "/stop"). */
  stop(): Promise<ActionError | null>;
  /** Cancels one queued run (remove a queued message). */
  cancelRun(runId: string): Promise<ActionError | null>;
  /** Resumes an interrupted run, retries a recovering one now, or resumes
   * a paused one, with raised limits when budget is given (h16-budgets). */
  resume(runId: string, budget?: Record<string, number>): Promise<ActionError | null>;
  /** Pauses a run at its next step boundary (h16-budgets). */
  pauseRun(runId: string): Promise<ActionError | null>;
  respond(requestId: string, body: { choice?: string; answer?: string; note?: string }): Promise<ActionError | null>;
  setModel(ref: string): Promise<ActionError | null>; // the active session's model ("" = default)
  compact(): Promise<ActionError | null>;
  /** Branches the active session after the item, and opens the branch. */
  branch(itemId: string): Promise<ActionError | null>;
  // Versions of a conversation (issue 15): each reloads the transcript
  // when the server announces the new branch.
  retry(runId: string, model?: string): Promise<ActionError | null>;
  editMessage(itemId: string, content: string): Promise<ActionError | null>;
  continueRun(runId: string): Promise<ActionError | null>;
  selectVersion(itemId: string, version: number): Promise<ActionError | null>;
  /** Undoes the last turns (restore: puts the last undone ones back). */
  undo(turns: number, restore?: boolean): Promise<ActionError | null>;
  enableNotifications(): Promise<void>;
  toggleMute(): void;
}

// The Terminal tab of the workspace pane: a shell in the session's
// workspace over GET /api/sessions/{id}/terminal (docs/API.md, "Terminal").
// Binary frames are terminal bytes both ways; text frames are JSON control
// messages. The terminal's id is kept in sessionStorage per session, so a
// reload reattaches to the shell that still runs and repaints its screen
// from the server's scrollback. Viewers get no terminal.

import { useEffect, useRef, useState } from "preact/hooks";
import type { TabProps } from "./tab";
import "./terminal.css";

type XtermModule = typeof import("./xterm");
type Status =
  | { kind: "connecting" }
  | { kind: "open"; id: string; shell: string }
  | { kind: "closed"; code: number; reason: string }
  | { kind: "detached"; reason: string }
  | { kind: "lost" }
  | { kind: "error"; message: string };

const storageKey = (sessionID: string) => `caduceus.terminal.${sessionID}`;

function savedID(sessionID: string): string | null {
  try {
    return sessionStorage.getItem(storageKey(sessionID));
  } catch {
    return null;
  }
}

function saveID(sessionID: string, id: string | null): void {
  try {
    if (id) sessionStorage.setItem(storageKey(sessionID), id);
    else sessionStorage.removeItem(storageKey(sessionID));
  } catch {
    /* storage blocked: a reload opens a new terminal */
  }
}

const isDark = () => document.documentElement.getAttribute("data-theme") === "dark";

export function TerminalTab({ session, canOperate }: TabProps) {
  if (!canOperate) {
    return (
      <p class="pane-empty" data-testid="terminal-viewer">
        The terminal runs commands in the workspace: it is for people who may operate this server. Your role may only read.
      </p>
    );
  }
  return <TerminalView key={session.id} sessionID={session.id} />;
}

function TerminalView({ sessionID }: { sessionID: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<Status>({ kind: "connecting" });
  // A new value opens a new connection: to a new terminal (fresh) or to
  // the saved one (a reload, a reconnect).
  const [conn, setConn] = useState({ n: 0, fresh: false });
  const sock = useRef<WebSocket | null>(null);

  useEffect(() => {
    let disposed = false;
    let cleanup = () => {};
    setStatus({ kind: "connecting" });
    import("./xterm")
      .then((x) => {
        if (!disposed && box.current) cleanup = connect(x, box.current);
      })
      .catch(() => setStatus({ kind: "error", message: "The terminal could not be loaded." }));

    function connect(x: XtermModule, el: HTMLDivElement): () => void {
      const term = new x.Terminal({
        fontFamily: getComputedStyle(document.documentElement).getPropertyValue("--font-mono") || "monospace",
        fontSize: 13,
        cursorBlink: true,
        scrollback: 5000,
        theme: x.themeFor(isDark()),
      });
      const fit = new x.FitAddon();
      term.loadAddon(fit);
      term.open(el);
      try {
        fit.fit();
      } catch {
        /* not laid out yet: the observer fits it */
      }
      const enc = new TextEncoder();
      let ws: WebSocket | null = null;
      let greeted = false;
      let retriedFresh = false;

      const send = (data: string | Uint8Array<ArrayBuffer>) => {
        if (ws?.readyState === WebSocket.OPEN) ws.send(data);
      };
      const sendResize = () => send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));

      const open = (id: string | null) => {
        greeted = false;
        const q = new URLSearchParams({ cols: String(term.cols), rows: String(term.rows) });
        if (id) q.set("id", id);
        const proto = location.protocol === "https:" ? "wss:" : "ws:";
        ws = new WebSocket(`${proto}//${location.host}/api/sessions/${encodeURIComponent(sessionID)}/terminal?${q}`);
        ws.binaryType = "arraybuffer";
        sock.current = ws;
        let ended = false;
        ws.onmessage = (ev) => {
          if (ev.data instanceof ArrayBuffer) {
            term.write(new Uint8Array(ev.data));
            return;
          }
          let m: { type?: string; id?: string; shell?: string; code?: number; reason?: string; error?: string; message?: string };
          try {
            m = JSON.parse(ev.data);
          } catch {
            return;
          }
          switch (m.type) {
            case "hello":
              greeted = true;
              term.reset(); // the scrollback that follows repaints the screen
              saveID(sessionID, m.id ?? null);
              setStatus({ kind: "open", id: m.id ?? "", shell: m.shell ?? "" });
              sendResize();
              term.focus();
              break;
            case "exit":
              ended = true;
              saveID(sessionID, null);
              setStatus({ kind: "closed", code: m.code ?? -1, reason: m.reason ?? "" });
              break;
            case "detached":
              ended = true;
              if (m.reason === "too slow") {
                // The page fell behind a flood of output: reattach, and the
                // scrollback brings the screen up to date.
                setConn((c) => ({ n: c.n + 1, fresh: false }));
              } else {
                setStatus({ kind: "detached", reason: m.reason ?? "" });
              }
              break;
            case "error":
              if (m.error === "too_many_terminals") {
                ended = true;
                setStatus({ kind: "error", message: m.message ?? "Too many terminals are open in this session." });
              }
              break;
          }
        };
        ws.onclose = () => {
          if (disposed || ended) return;
          if (!greeted && id && !retriedFresh) {
            // The saved terminal is gone (it ended while the page was
            // away, or the server restarted): start a new one, once.
            retriedFresh = true;
            saveID(sessionID, null);
            open(null);
            return;
          }
          setStatus(greeted ? { kind: "lost" } : { kind: "error", message: "The terminal could not be opened." });
        };
      };

      const input = term.onData((d) => send(enc.encode(d)));
      const binary = term.onBinary((d) => send(Uint8Array.from(d, (c) => c.charCodeAt(0) & 0xff)));
      const resized = term.onResize(() => sendResize());
      const ro = new ResizeObserver(() => {
        if (el.clientWidth > 0 && el.clientHeight > 0) {
          try {
            fit.fit();
          } catch {
            /* detached from the document */
          }
        }
      });
      ro.observe(el);
      const mo = new MutationObserver(() => (term.options.theme = x.themeFor(isDark())));
      mo.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });

      open(conn.fresh ? null : savedID(sessionID));

      return () => {
        ro.disconnect();
        mo.disconnect();
        input.dispose();
        binary.dispose();
        resized.dispose();
        // Closing the socket leaves the terminal running for a reattach.
        ws?.close(1000, "tab closed");
        term.dispose();
      };
    }

    return () => {
      disposed = true;
      cleanup();
    };
  }, [sessionID, conn]);

  const newTerminal = () => {
    saveID(sessionID, null);
    setConn((c) => ({ n: c.n + 1, fresh: true }));
  };
  const reconnect = () => setConn((c) => ({ n: c.n + 1, fresh: false }));
  const closeTerminal = () => sock.current?.readyState === WebSocket.OPEN && sock.current.send(JSON.stringify({ type: "close" }));

  return (
    <div class="term-tab" data-testid="terminal-tab">
      <div class="term-bar">
        <span class="term-status" data-testid="terminal-status" data-state={status.kind}>
          {describe(status)}
        </span>
        {status.kind === "open" && (
          <button type="button" class="btn btn-sm" onClick={closeTerminal} title="End the shell and everything it started">
            Close terminal
          </button>
        )}
        {(status.kind === "detached" || status.kind === "lost") && (
          <button type="button" class="btn btn-sm" onClick={reconnect} data-testid="terminal-reconnect">
            Reconnect
          </button>
        )}
        {(status.kind === "closed" || status.kind === "error" || status.kind === "detached" || status.kind === "lost") && (
          <button type="button" class="btn btn-sm btn-primary" onClick={newTerminal} data-testid="terminal-new">
            New terminal
          </button>
        )}
      </div>
      <div class={"term-screen" + (status.kind === "open" || status.kind === "connecting" ? "" : " ended")} ref={box} data-testid="terminal-screen" />
    </div>
  );
}

function describe(s: Status): string {
  switch (s.kind) {
    case "connecting":
      return "Connecting…";
    case "open":
      return `Shell in the workspace${s.shell ? ` (${s.shell.split("/").pop()})` : ""}`;
    case "closed":
      return s.reason === "exited"
        ? `Terminal closed: the shell exited${s.code >= 0 ? ` with status ${s.code}` : ""}.`
        : s.reason === "idle"
          ? "Terminal closed: it was idle."
          : s.reason === "server stopping"
            ? "Terminal closed: the server stopped."
            : "Terminal closed.";
    case "detached":
      return s.reason === "too slow" ? "Disconnected: the connection fell behind." : "This terminal is open in another tab.";
    case "lost":
      return "Disconnected from the terminal.";
    case "error":
      return s.message;
  }
}

// MCP servers (issue 18, h18-mcpwire): the Model Context Protocol servers
// whose tools runs are offered. Each shows its state, its tools (name,
// description, verdict) and its last error; admins add, edit, restart and
// remove them and choose per server and per tool whether a call is
// allowed, asked about or denied. Secret values (environment, headers) are
// write-only: the API shows them masked, and a masked value sent back
// keeps the stored one.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";

interface McpTool { name: string; title?: string; description?: string; verdict: string }
interface McpServer {
  id: string; name: string; transport: "stdio" | "http";
  command?: string; args: string[]; dir?: string; url?: string;
  env: Record<string, string>; headers: Record<string, string>;
  start_timeout_ms: number; call_timeout_ms: number;
  enabled: boolean; policy: string; tool_policies: Record<string, string>;
  state: string; last_error?: string; restarts: number; pid?: number; tools: McpTool[];
}

const VERDICTS = ["allow", "ask", "deny"];

/** "NAME=value" lines to a map; the masked values the API showed stay as they are. */
function parsePairs(text: string, sep: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf(sep);
    if (i <= 0) continue;
    out[line.slice(0, i).trim()] = line.slice(i + sep.length).trim();
  }
  return out;
}

function pairs(m: Record<string, string>, sep: string): string {
  return Object.entries(m).map(([k, v]) => k + sep + v).join("\n");
}

function stateTone(state: string): string {
  switch (state) {
    case "ready": return "tone-ok";
    case "failed": return "tone-err";
    case "restarting": case "starting": return "tone-warn";
  }
  return "tone-neutral";
}

/** The add/edit form: stdio or HTTP fields, masked secrets, the server's verdict. */
function ServerForm(props: { server?: McpServer; onDone: (saved: boolean) => void; onError: (msg: string) => void }) {
  const store = useStore();
  const s = props.server;
  const transport = useSignal<string>(s?.transport ?? "stdio");
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const get = (k: string) => String(form.get(k) ?? "").trim();
    const body: Record<string, unknown> = {
      name: get("name"), transport: transport.value, policy: get("policy"),
      start_timeout_ms: Number(get("start_timeout_s") || "0") * 1000, call_timeout_ms: Number(get("call_timeout_s") || "0") * 1000,
    };
    if (transport.value === "stdio") {
      Object.assign(body, {
        command: get("command"), args: get("args") ? get("args").split("\n").map((a) => a.trim()).filter(Boolean) : [],
        dir: get("dir"), env: parsePairs(String(form.get("env") ?? ""), "="), url: "", headers: {},
      });
    } else {
      Object.assign(body, { url: get("url"), headers: parsePairs(String(form.get("headers") ?? ""), ":"), command: "", args: [], dir: "", env: {} });
    }
    const r = s ? await store.api.patch(`/api/mcp/servers/${s.id}`, body) : await store.api.post("/api/mcp/servers", body);
    if (!r.ok) {
      props.onError(r.error.message);
      return;
    }
    props.onDone(true);
  };
  return (
    <form class="mcp-form" data-testid="mcp-form" onSubmit={(e) => void submit(e)}>
      <div class="form-row">
        <label class="field"><span class="field-label">Name</span>
          <input class="input input-sm" name="name" required value={s?.name ?? ""} pattern="[A-Za-z0-9][A-Za-z0-9_-]{0,30}" data-testid="mcp-name" />
        </label>
        <label class="field"><span class="field-label">Transport</span>
          <select class="input input-sm" name="transport" value={transport.value} data-testid="mcp-transport"
            onChange={(e) => { transport.value = (e.currentTarget as HTMLSelectElement).value; }}>
            <option value="stdio">Local command (stdio)</option>
            <option value="http">Streamable HTTP</option>
          </select>
        </label>
        <label class="field"><span class="field-label">Tools are</span>
          <select class="input input-sm" name="policy" value={s?.policy ?? "ask"} data-testid="mcp-policy">
            <option value="ask">asked about</option><option value="allow">allowed</option><option value="deny">denied</option>
          </select>
        </label>
      </div>
      {transport.value === "stdio" ? (
        <div class="form-row">
          <label class="field mcp-wide"><span class="field-label">Command</span>
            <input class="input input-sm" name="command" required value={s?.command ?? ""} placeholder="npx" data-testid="mcp-command" />
          </label>
          <label class="field mcp-wide"><span class="field-label">Arguments (one a line)</span>
            <textarea class="input input-sm" name="args" rows={2} value={(s?.args ?? []).join("\n")} data-testid="mcp-args" />
          </label>
          <label class="field mcp-wide"><span class="field-label">Working directory</span>
            <input class="input input-sm" name="dir" value={s?.dir ?? ""} />
          </label>
          <label class="field mcp-wide"><span class="field-label">Environment (NAME=value a line; values are secret)</span>
            <textarea class="input input-sm" name="env" rows={2} value={pairs(s?.env ?? {}, "=")} data-testid="mcp-env" />
          </label>
        </div>
      ) : (
        <div class="form-row">
          <label class="field mcp-wide"><span class="field-label">URL</span>
            <input class="input input-sm" name="url" type="url" required value={s?.url ?? ""} placeholder="https://" data-testid="mcp-url" />
          </label>
          <label class="field mcp-wide"><span class="field-label">Headers (Name: value a line; values are secret)</span>
            <textarea class="input input-sm" name="headers" rows={2} value={pairs(s?.headers ?? {}, ": ")} data-testid="mcp-headers" />
          </label>
        </div>
      )}
      <div class="form-row">
        <label class="field"><span class="field-label">Start timeout (s)</span>
          <input class="input input-sm" name="start_timeout_s" type="number" min={0} value={s ? s.start_timeout_ms / 1000 : ""} placeholder="30" />
        </label>
        <label class="field"><span class="field-label">Call timeout (s)</span>
          <input class="input input-sm" name="call_timeout_s" type="number" min={0} value={s ? s.call_timeout_ms / 1000 : ""} placeholder="120" />
        </label>
      </div>
      <div class="form-row">
        <button type="submit" class="btn btn-sm" data-testid="mcp-save">{s ? "Save" : "Add server"}</button>
        <button type="button" class="btn btn-sm" onClick={() => props.onDone(false)}>Cancel</button>
      </div>
    </form>
  );
}

export function McpPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const servers = useSignal<McpServer[] | null>(null);
  const error = useSignal<string | null>(null);
  const editing = useSignal<string | null>(null); // a server's id, "new", or none
  const busy = useSignal<string | null>(null);

  const load = async () => {
    const r = await store.api.get<{ servers: McpServer[] }>("/api/mcp/servers");
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    servers.value = r.value.servers;
  };
  useEffect(() => void load(), []);

  const act = async (id: string, fn: () => Promise<{ ok: boolean; error?: { message: string } }>) => {
    busy.value = id;
    const r = await fn();
    busy.value = null;
    if (!r.ok) error.value = r.error?.message ?? "failed";
    else error.value = null;
    await load();
  };
  const setVerdict = (s: McpServer, tool: string, verdict: string) =>
    act(s.id, () => store.api.patch(`/api/mcp/servers/${s.id}`, { tool_policies: { ...s.tool_policies, [tool]: verdict } }));

  return (
    <div class="settings-section mcp-page" data-testid="mcp-page">
      <p class="page-lead">
        Tools of Model Context Protocol servers — local commands or HTTP endpoints — offered to every run (a profile that lists
        tools narrows them: <code>mcp__&lt;server&gt;</code> for all of a server's). A server starts when a run first needs it
        and is restarted if it dies. Calls are asked about unless you allow or deny them here.
      </p>
      {error.value && <p class="form-error" role="alert" data-testid="mcp-error">{error.value}</p>}
      {admin && editing.value !== "new" && (
        <button type="button" class="btn btn-sm" data-testid="mcp-add" onClick={() => { editing.value = "new"; }}>Add MCP server</button>
      )}
      {admin && editing.value === "new" && (
        <ServerForm onError={(m) => { error.value = m; }} onDone={(saved) => { editing.value = null; error.value = null; if (saved) void load(); }} />
      )}
      {servers.value?.length === 0 && <p class="page-note">No MCP server yet.</p>}
      <ul class="rows">
        {servers.value?.map((s) => (
          <li key={s.id} class="row mcp-server" data-testid="mcp-row" data-name={s.name} data-state={s.state}>
            <div class="row-main">
              <span class="row-title">
                {s.name}{" "}
                <span class={"mcp-badge " + stateTone(s.state)} data-testid="mcp-state">{s.state}</span>
              </span>
              <span class="row-sub mcp-where">
                {s.transport === "stdio" ? `$ ${s.command} ${s.args.join(" ")}` : s.url}
                {s.pid ? ` · pid ${s.pid}` : ""}{s.restarts ? ` · ${s.restarts} restart${s.restarts === 1 ? "" : "s"}` : ""}
                {` · tools ${s.policy === "ask" ? "asked about" : s.policy === "allow" ? "allowed" : "denied"}`}
              </span>
              {s.last_error && <span class="mcp-error" data-testid="mcp-last-error">{s.last_error}</span>}
              {editing.value === s.id && (
                <ServerForm server={s} onError={(m) => { error.value = m; }}
                  onDone={(saved) => { editing.value = null; error.value = null; if (saved) void load(); }} />
              )}
              {s.tools.length > 0 && (
                <ul class="mcp-tools" data-testid="mcp-tools">
                  {s.tools.map((t) => (
                    <li key={t.name} class="mcp-tool" data-testid="mcp-tool" data-tool={t.name}>
                      <div class="mcp-tool-text">
                        <code class="mcp-tool-name">{t.name}</code>
                        {t.description && <span class="mcp-tool-desc">{t.description}</span>}
                      </div>
                      {admin ? (
                        <select class="input input-sm mcp-verdict" aria-label={`${t.name}: allow, ask or deny`} value={t.verdict}
                          data-testid="mcp-verdict" disabled={busy.value === s.id}
                          onChange={(e) => void setVerdict(s, t.name, (e.currentTarget as HTMLSelectElement).value)}>
                          {VERDICTS.map((v) => <option key={v} value={v}>{v}</option>)}
                        </select>
                      ) : <span class="mcp-verdict-text">{t.verdict}</span>}
                    </li>
                  ))}
                </ul>
              )}
            </div>
            {admin && (
              <div class="row-actions">
                <button type="button" class="btn btn-sm" data-testid="mcp-restart" disabled={!s.enabled || busy.value === s.id}
                  onClick={() => void act(s.id, () => store.api.post(`/api/mcp/servers/${s.id}/restart`))}>
                  {busy.value === s.id ? "Starting…" : s.state === "idle" ? "Start" : "Restart"}
                </button>
                <button type="button" class="btn btn-sm" data-testid="mcp-edit" onClick={() => { editing.value = editing.peek() === s.id ? null : s.id; }}>Edit</button>
                <button type="button" class="btn btn-sm" data-testid="mcp-toggle"
                  onClick={() => void act(s.id, () => store.api.patch(`/api/mcp/servers/${s.id}`, { enabled: !s.enabled }))}>
                  {s.enabled ? "Disable" : "Enable"}
                </button>
                <button type="button" class="btn btn-sm" data-testid="mcp-delete"
                  onClick={() => void act(s.id, () => store.api.del(`/api/mcp/servers/${s.id}`))}>Remove</button>
              </div>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

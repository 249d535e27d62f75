// Skills (issue 16, h16-skills): the skills under the server's data
// directory. Everyone who reads sees the list and reads a skill; admins
// create, edit, delete and install them (a .zip, or a folder's files, by
// picking or dropping) and choose which profiles are offered each one.
// A profile that enables no skill in particular is offered all of them.

import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import type { Profile } from "../state/types";
import { ConfirmDialog } from "../shell/Dialog";
// The transcript's Markdown renderer (marked + DOMPurify, with its .md
// styles). MarkdownView itself is not imported: it reaches the workspace
// pane, whose stylesheets would then be bundled into this lazy chunk.
import { renderMarkdown } from "../transcript/markdown";
import { loadProfiles } from "./Profiles";

export interface SkillInfo {
  name: string; description: string; folder: string; path: string; size: number;
  license?: string; version?: string; tags?: string[]; allowed_tools?: string[];
  error?: string; enabled_for: string[];
}

interface SkillDoc { skill: SkillInfo; content: string; body: string; files: string[] }

/** A profile and the skills it enables ([] : all). */
interface ProfileSkills { profile: Profile; skills: string[] }

async function loadProfileSkills(store: Store): Promise<ProfileSkills[]> {
  const profiles = (await loadProfiles(store)) ?? [];
  return Promise.all(profiles.map(async (p) => {
    const r = await store.api.get<{ skills: string[] }>(`/api/profiles/${p.id}/skills`);
    return { profile: p, skills: r.ok ? r.value.skills : [] };
  }));
}

export function SkillsPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const skills = useSignal<SkillInfo[] | null>(null);
  const profiles = useSignal<ProfileSkills[]>([]);
  const error = useSignal<string | null>(null);
  const notice = useSignal<string | null>(null);
  const query = useSignal("");
  const open = useSignal<string | null>(null);
  const editing = useSignal<"new" | SkillDoc | null>(null);
  const deleting = useSignal<string | null>(null);

  const load = async () => {
    const r = await store.api.get<{ skills: SkillInfo[] }>("/api/skills");
    if (r.ok) {
      skills.value = r.value.skills;
      error.value = null;
    } else error.value = r.error.message;
    profiles.value = await loadProfileSkills(store);
  };
  useEffect(() => void load(), []);

  const install = async (files: File[], paths: string[]) => {
    if (files.length === 0) return;
    const form = new FormData();
    files.forEach((f, i) => form.append("file", f, paths[i] || f.name));
    notice.value = null;
    const r = await store.api.upload<SkillInfo>("/api/skills/install", form);
    if (!r.ok) {
      error.value = `Not installed: ${r.error.message}`;
      return;
    }
    error.value = null;
    notice.value = `Installed ${r.value.name}.`;
    await load();
    open.value = r.value.name;
  };
  const remove = async (name: string) => {
    const r = await store.api.del(`/api/skills/${encodeURIComponent(name)}`);
    if (!r.ok) error.value = r.error.message;
    if (open.peek() === name) open.value = null;
    await load();
  };

  const q = query.value.trim().toLowerCase();
  const shown = (skills.value ?? []).filter((s) => !q || s.name.includes(q) || s.description.toLowerCase().includes(q));
  const current = editing.value;
  return (
    <div class="settings-section" data-testid="skills-page">
      <p class="page-lead">
        A skill is instructions for one kind of task, in a folder with a SKILL.md. The agent sees each skill's name and description and loads the whole skill when a task calls for it. A profile that enables no skill in particular is offered every skill.
      </p>
      {admin && current === null && (
        <div class="skl-toolbar">
          <button type="button" class="btn" data-testid="skill-new" onClick={() => (editing.value = "new")}>New skill</button>
          <InstallZone onFiles={install} />
        </div>
      )}
      {current !== null && (
        <SkillForm key={current === "new" ? "new" : current.skill.name} doc={current === "new" ? null : current}
          onDone={async (saved) => {
            editing.value = null;
            if (saved) {
              await load();
              open.value = saved;
            }
          }} />
      )}
      {error.value && <p class="form-error" role="alert" data-testid="skills-error">{error.value}</p>}
      {notice.value && <p class="page-note" role="status" data-testid="skills-notice">{notice.value}</p>}
      <div class="skl-head">
        <h2 class="section-title">Skills</h2>
        <input class="input skl-search" type="search" placeholder="Search skills" aria-label="Search skills" data-testid="skill-search"
          value={query.value} onInput={(e) => (query.value = e.currentTarget.value)} />
      </div>
      {skills.value === null ? (
        <p class="page-note">Loading…</p>
      ) : skills.value.length === 0 ? (
        <p class="page-note" data-testid="skills-empty">No skill yet: install one from a .zip or write a new one.</p>
      ) : shown.length === 0 ? (
        <p class="page-note">No skill matches “{query.value}”.</p>
      ) : (
        <ul class="rows" data-testid="skill-list">
          {shown.map((s) => (
            <li key={s.name} class="row skl-row" data-testid="skill-row" data-name={s.name}>
              <div class="skl-row-top">
                <div class="row-main">
                  <span class="row-title mono">{s.name}
                    {s.error && <span class="skl-badge skl-broken" data-testid="skill-broken">broken</span>}
                  </span>
                  <span class="row-sub">{s.error ? s.error : s.description}</span>
                  <span class="row-sub skl-meta">{metaLine(s, profiles.value)}</span>
                </div>
                <div class="row-actions">
                  <button type="button" class="btn btn-sm" data-testid="skill-open" aria-expanded={open.value === s.name}
                    onClick={() => (open.value = open.value === s.name ? null : s.name)}>{open.value === s.name ? "Close" : "Read"}</button>
                  {admin && <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="skill-delete" onClick={() => (deleting.value = s.name)}>Delete</button>}
                </div>
              </div>
              {open.value === s.name && (
                <SkillReader name={s.name} admin={admin} profiles={profiles.value} all={skills.value!.map((x) => x.name)}
                  onEdit={(doc) => (editing.value = doc)}
                  onProfiles={async () => {
                    await load();
                  }} />
              )}
            </li>
          ))}
        </ul>
      )}
      {deleting.value && (
        <ConfirmDialog
          title={`Delete ${deleting.value}?`}
          body={<>The skill's folder and every file in it are removed; runs no longer see it. This cannot be undone.</>}
          confirmLabel="Delete"
          confirmTestId="confirm-skill-delete"
          cancelTestId="cancel-skill-delete"
          onCancel={() => (deleting.value = null)}
          onConfirm={() => {
            const n = deleting.value!;
            deleting.value = null;
            void remove(n);
          }}
        />
      )}
    </div>
  );
}

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The folder, size, licence and who is offered the skill. */
function metaLine(s: SkillInfo, profiles: ProfileSkills[]): string {
  const offered = profiles.filter((p) => p.skills.length === 0 || p.skills.includes(s.name)).map((p) => p.profile.name);
  return [
    `${s.folder}/`, size(s.size), s.license ? `licence ${s.license}` : "",
    profiles.length === 0 ? "" : offered.length === profiles.length ? "every profile" : offered.length === 0 ? "no profile" : offered.join(", "),
  ].filter(Boolean).join(" · ");
}

/** Picks or takes dropped files: one .zip, or a folder's files (their
 * paths kept, as the server needs them). */
function InstallZone({ onFiles }: { onFiles: (files: File[], paths: string[]) => void }) {
  const [over, setOver] = useState(false);
  const take = (list: FileList | null) => {
    const files = Array.from(list ?? []);
    onFiles(files, files.map((f) => (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name));
  };
  return (
    <label class={"skl-drop" + (over ? " over" : "")} data-testid="skill-drop"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        take(e.dataTransfer?.files ?? null);
      }}>
      <input type="file" accept=".zip,application/zip" class="skl-file" data-testid="skill-install-input"
        onChange={(e) => {
          take(e.currentTarget.files);
          e.currentTarget.value = "";
        }} />
      <span>Install from a .zip — choose or drop it here</span>
    </label>
  );
}

function SkillReader({ name, admin, profiles, all, onEdit, onProfiles }: {
  name: string; admin: boolean; profiles: ProfileSkills[]; all: string[];
  onEdit: (doc: SkillDoc) => void; onProfiles: () => Promise<void>;
}) {
  const store = useStore();
  const [doc, setDoc] = useState<SkillDoc | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    void store.api.get<SkillDoc>(`/api/skills/${encodeURIComponent(name)}`).then((r) => (r.ok ? setDoc(r.value) : setError(r.error.message)));
  }, [name]);

  // Checked: the profile is offered this skill. Unchecking it for a
  // profile offered every skill enables all the others instead.
  const toggle = async (p: ProfileSkills, on: boolean) => {
    const base = p.skills.length === 0 ? all : p.skills;
    const next = on ? [...base.filter((n) => n !== name), name] : base.filter((n) => n !== name);
    if (next.length === 0) {
      setError(`${p.profile.name} would enable no skill, which offers every skill: enable another one first.`);
      return;
    }
    const r = await store.api.request<{ skills: string[] }>("PUT", `/api/profiles/${p.profile.id}/skills`, { skills: next });
    if (!r.ok) setError(r.error.message);
    else setError("");
    await onProfiles();
  };

  if (error && !doc) return <p class="form-error" role="alert">{error}</p>;
  if (!doc) return <p class="page-note">Loading…</p>;
  return (
    <div class="skl-reader" data-testid="skill-reader">
      {doc.skill.error && <p class="form-error" data-testid="skill-reader-error">This skill cannot be loaded: {doc.skill.error}</p>}
      <div class="skl-body md" data-testid="skill-markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(doc.body || doc.content) }} />
      {doc.files.length > 0 && (
        <div class="skl-files">
          <span class="field-label">Files</span>
          <ul data-testid="skill-files">{doc.files.map((f) => <li key={f} class="mono">{f}</li>)}</ul>
        </div>
      )}
      {profiles.length > 0 && (
        <fieldset class="prf-fieldset" data-testid="skill-profiles">
          <legend class="field-label">Offered to</legend>
          <div class="prf-tools">
            {profiles.map((p) => (
              <label key={p.profile.id} class="prf-tool skl-profile" title={p.skills.length === 0 ? "This profile enables no skill in particular: every skill" : undefined}>
                <input type="checkbox" data-testid="skill-profile-toggle" data-profile={p.profile.name} disabled={!admin}
                  checked={p.skills.length === 0 || p.skills.includes(name)}
                  onChange={(e) => void toggle(p, e.currentTarget.checked)} />
                <span>{p.profile.name}{p.skills.length === 0 ? " (all skills)" : ""}</span>
              </label>
            ))}
          </div>
        </fieldset>
      )}
      {error && <p class="form-error" role="alert" data-testid="skill-reader-alert">{error}</p>}
      {admin && (
        <div class="prf-actions">
          <button type="button" class="btn btn-sm" data-testid="skill-edit" onClick={() => onEdit(doc)}>Edit SKILL.md</button>
        </div>
      )}
    </div>
  );
}

const NEW_BODY = "# What this skill is for\n\nSteps the agent follows.\n";

/** New: name, description and body. Edit: the whole SKILL.md, front
 * matter included. */
function SkillForm({ doc, onDone }: { doc: SkillDoc | null; onDone: (saved: string | null) => void }) {
  const store = useStore();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [body, setBody] = useState(doc ? doc.content : NEW_BODY);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const r = doc
      ? await store.api.request<SkillInfo>("PUT", `/api/skills/${encodeURIComponent(doc.skill.name)}`, { content: body })
      : await store.api.post<SkillInfo>("/api/skills", { name, description, body });
    setBusy(false);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    onDone(r.value.name);
  };
  return (
    <form class="card prf-form" onSubmit={save} noValidate data-testid="skill-form" aria-label={doc ? `Edit ${doc.skill.name}` : "New skill"}>
      <h3 class="section-title">{doc ? `Edit ${doc.skill.name}` : "New skill"}</h3>
      {!doc && (
        <>
          <label class="field">
            <span class="field-label">Name</span>
            <input class="input mono" data-testid="skill-name" value={name} maxLength={64} autoComplete="off" placeholder="release-notes"
              onInput={(e) => setName(e.currentTarget.value)} />
            <span class="page-note">Lowercase letters, digits and hyphens; it is also the folder's name.</span>
          </label>
          <label class="field">
            <span class="field-label">Description</span>
            <input class="input" data-testid="skill-description" value={description} maxLength={1024}
              placeholder="What it does and when to use it" onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
        </>
      )}
      <label class="field">
        <span class="field-label">{doc ? "SKILL.md (front matter, then Markdown)" : "Instructions (Markdown)"}</span>
        <textarea class="input prf-instructions mono" data-testid="skill-body" rows={12} value={body} spellcheck={false}
          onInput={(e) => setBody(e.currentTarget.value)} />
      </label>
      {error && <p class="form-error" role="alert" data-testid="skill-form-error">{error}</p>}
      <div class="prf-actions">
        <button type="submit" class="btn btn-primary" data-testid="skill-save" disabled={busy}>{doc ? "Save" : "Create"}</button>
        <button type="button" class="btn" data-testid="skill-cancel" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}

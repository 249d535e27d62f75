// Profiles (h16-profiles) in the session header: the session's agent
// profile (a dot of its colour and its name), which an operator switches
// here; the next run uses the new one.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import type { Profile } from "../state/types";
import { loadProfiles } from "../settings/Profiles";

export function ProfileChip({ sessionId, profileId }: { sessionId: string; profileId: string }) {
  const store = useStore();
  const profiles = useSignal<Profile[]>([]);
  /** The session's profile when it is not live (deleted): still named. */
  const gone = useSignal<Profile | null>(null);
  const live = profiles.value.find((p) => p.id === profileId);
  useEffect(() => {
    // A profile made since the list was read (in Settings, another tab)
    // is fetched with a fresh list.
    if (profileId && live) return;
    void loadProfiles(store).then(async (list) => {
      if (list) profiles.value = list;
      gone.value = null;
      if (profileId && !list?.some((p) => p.id === profileId)) {
        const r = await store.api.get<Profile>(`/api/profiles/${profileId}`);
        if (r.ok) gone.value = r.value;
      }
    });
  }, [profileId]);
  const shown = live ?? gone.value;
  if (!profileId && profiles.value.length === 0) return null;
  const operate = store.account.permissions.value.operate;
  return (
    <label class="prf-chip" data-testid="session-profile" data-profile-id={profileId} data-profile-name={shown?.name ?? ""}
      title={shown ? `Agent profile: ${shown.name}${shown.deleted_at ? " (deleted)" : ""}` : "No agent profile"}>
      <span class="prf-dot" style={{ background: shown?.color ?? "transparent" }} aria-hidden="true" />
      <span class="sr-only">Agent profile</span>
      <select data-testid="session-profile-picker" value={profileId} disabled={!operate}
        onChange={(e) => void store.organise(sessionId, { profile_id: e.currentTarget.value })}>
        <option value="">No profile</option>
        {gone.value && gone.value.id === profileId && <option value={profileId}>{gone.value.name} (deleted)</option>}
        {profiles.value.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
      </select>
    </label>
  );
}

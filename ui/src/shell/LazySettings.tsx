// The Settings area is a chunk of its own, fetched the first time a person
// opens it: its sections (profiles, processes, logs, providers, usage…)
// would otherwise weigh on every first page load, which most visits never
// need.

import { useEffect, useState } from "preact/hooks";
import { PageFrame } from "./Page";

type SettingsModule = typeof import("../settings/Settings");

export function LazySettings() {
  const [mod, setMod] = useState<SettingsModule | null>(null);
  const [failed, setFailed] = useState(false);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    setFailed(false);
    import("../settings/Settings").then(
      (m) => live && setMod(m),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [attempt]);
  if (mod) return <mod.SettingsPage />;
  return (
    <PageFrame title="Settings" testid="settings-loading">
      {failed ? (
        <p class="page-lead" role="alert">
          Settings could not be loaded (the server did not answer).{" "}
          <button type="button" class="btn" onClick={() => setAttempt((n) => n + 1)}>Try again</button>
        </p>
      ) : (
        <p class="page-lead" aria-busy="true">Loading…</p>
      )}
    </PageFrame>
  );
}

// Re-renders a component when a recovering run's retry time comes, so a
// text that says "retry at 12:01:05" turns into "due now" on its own and
// never shows a time already past.

import { useEffect, useState } from "preact/hooks";
import type { Run } from "../state/types";

export function useRetryTick(run: Run | null | undefined): void {
  const [, setTick] = useState(0);
  const at = run?.status === "recovering" && run.retry_at ? Date.parse(run.retry_at) : NaN;
  useEffect(() => {
    if (!isFinite(at)) return;
    const wait = at - Date.now();
    if (wait <= 0) return;
    const id = window.setTimeout(() => setTick((n) => n + 1), wait + 50);
    return () => clearTimeout(id);
  }, [at]);
}

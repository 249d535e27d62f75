import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Store } from "./contract";

export const StoreContext = createContext<Store | null>(null);

/** The store of the running app; views call this instead of importing a
 * module-level singleton, so tests can mount views on a store of their own. */
export function useStore(): Store {
  const s = useContext(StoreContext);
  if (!s) throw new Error("useStore outside StoreContext");
  return s;
}

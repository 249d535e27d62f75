// Entry: styles, the store, and the app mounted into #app. The store is
// created here, once, and handed to the views through StoreContext.

import { render } from "preact";
import { App } from "./shell/App";
import { StoreContext } from "./state/context";
import { createStore } from "./state/store";
import "./styles/base.css";
import "./shell/shell.css";
import "./shell/account.css";
import "./shell/organise.css";
import "./shell/search.css";
import "./styles/transcript.css";
import "./workspace/workspace.css";
// The Settings area's code is a chunk loaded on first use (LazySettings);
// its styles are here, as a lazily loaded chunk's CSS would never be linked.
import "./settings/settings.css";
import "./settings/profiles.css";
import "./settings/ops.css";
import "./settings/usage.css";
import "./settings/providers.css";
import "./settings/skills.css"; // h16-skills
import "./settings/policy.css";
import "./settings/memory.css";
import "./settings/budgets.css";
import "./settings/hooks.css"; // h17-hooks
import "./settings/scheduled.css"; // h17-jobs
import "./settings/mcp.css"; // h18-mcpwire
import "./transcript/websearch.css"; // h18-web: the results card and the Web search section
import "./shell/jobtoast.css"; // h17-jobsui

const store = createStore();
render(
  <StoreContext.Provider value={store}>
    <App />
  </StoreContext.Provider>,
  document.getElementById("app")!,
);
store.start();

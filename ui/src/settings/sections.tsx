// The sections of the Settings area, in the order the navigation lists
// them. A section is one component showing one concern; `shown` says who
// may see it (a section the caller may not use is not listed at all, and
// its address falls back to the first section).

import type { JSX } from "preact";
import type { Store } from "../state/contract";
import { TokensPage } from "../shell/Tokens";
import { UsersPage } from "../shell/Users";
import { ProfilesPage } from "./Profiles";
import { ProcessesPage } from "./Processes";
import { LogsPage } from "./Logs";
// Usage and cost (issue 16, h16-usage).
import { UsagePage } from "./Usage";
// Providers and settings (issue 16, h16-providers).
import { GeneralPage } from "./General";
import { ProvidersPage } from "./Providers";
import { SkillsPage } from "./Skills";
import { ApprovalsPage } from "./Approvals";
import { MemoryPage } from "./Memory";
import { BudgetsPage } from "./Budgets";
// Webhooks and triggers (issue 17, h17-hooks).
import { WebhooksPage, TriggersPage } from "./Hooks";
// Scheduled jobs (issue 17, h17-jobs).
import { ScheduledPage } from "./Scheduled";
// MCP servers (issue 18, h18-mcpwire).
import { McpPage } from "./Mcp";
// Web search (issue 18, h18-web).
import { WebSearchPage } from "./WebSearch";

export interface SettingsSection {
  /** The address: #settings/<id>. */
  id: string;
  title: string;
  /** One line under the title in the navigation (wide screens). */
  blurb: string;
  shown: (store: Store) => boolean;
  component: () => JSX.Element;
}

export const sections: SettingsSection[] = [
  {
    id: "tokens", title: "API tokens", blurb: "Personal tokens for scripts",
    shown: (s) => s.account.hasMenu.value, component: TokensPage,
  },
  {
    id: "users", title: "Users", blurb: "People, roles and access",
    shown: (s) => s.account.permissions.value.admin && s.account.hasMenu.value, component: UsersPage,
  },
  // Profiles (h16-profiles): everyone who reads sees them; admins change them.
  {
    id: "profiles", title: "Profiles", blurb: "Agents: instructions, model, tools",
    shown: () => true, component: ProfilesPage,
  },
  // Memory (h16-memory): readers see what each agent remembers; operators curate it.
  {
    id: "memory", title: "Memory", blurb: "What each agent remembers",
    shown: (s) => s.account.permissions.value.read, component: MemoryPage,
  },
  // The operator's console: processes and logs (h16-ops).
  {
    id: "processes", title: "Processes", blurb: "Background processes: output, kill",
    shown: (s) => s.account.permissions.value.read, component: ProcessesPage,
  },
  {
    id: "logs", title: "Logs", blurb: "The server's log, live",
    shown: (s) => s.account.permissions.value.admin, component: LogsPage,
  },
  // Usage and cost (issue 16, h16-usage).
  {
    id: "usage", title: "Usage", blurb: "Tokens and cost by day, model, session",
    shown: (s) => s.account.permissions.value.read, component: UsagePage,
  },
  // Providers and settings (issue 16, h16-providers): everyone may read
  // them; only an admin changes them.
  {
    id: "providers", title: "Providers", blurb: "Model endpoints and API keys",
    shown: (s) => s.account.permissions.value.read, component: ProvidersPage,
  },
  {
    id: "general", title: "General", blurb: "Default model, approvals, retries",
    shown: (s) => s.account.permissions.value.read, component: GeneralPage,
  },
  // Skills (h16-skills): everyone who reads sees them; admins change them.
  {
    id: "skills", title: "Skills", blurb: "Instructions the agent loads",
    shown: (s) => s.account.permissions.value.read, component: SkillsPage,
  },
  // The approval policy (h16-policy): everyone who reads sees it; operators
  // change rules, admins profiles' modes.
  {
    id: "approvals", title: "Approvals", blurb: "Modes, remembered rules, decisions",
    shown: (s) => s.account.permissions.value.read, component: ApprovalsPage,
  },
  // Budgets (h16-budgets): everyone who reads sees them; admins change them.
  {
    id: "budgets", title: "Budgets", blurb: "Limits per day and per profile",
    shown: (s) => s.account.permissions.value.read, component: BudgetsPage,
  },
  // Webhooks and triggers (h17-hooks): webhooks are admins' (a URL can hold
  // a token); everyone who reads sees triggers, admins change them.
  {
    id: "webhooks", title: "Webhooks", blurb: "Tell other systems when runs end",
    shown: (s) => s.account.permissions.value.admin, component: WebhooksPage,
  },
  {
    id: "triggers", title: "Triggers", blurb: "Let other systems start runs",
    shown: (s) => s.account.permissions.value.read, component: TriggersPage,
  },
  // Scheduled jobs (h17-jobs): everyone who reads sees them.
  {
    id: "scheduled", title: "Scheduled", blurb: "Jobs that run on a schedule",
    shown: (s) => s.account.permissions.value.read, component: ScheduledPage,
  },
  // MCP servers (h18-mcpwire): everyone who reads sees them; admins change them.
  {
    id: "mcp", title: "MCP servers", blurb: "Tools of other programs",
    shown: (s) => s.account.permissions.value.read, component: McpPage,
  },
  // Web search (h18-web): everyone who reads sees the back-end; admins change and test it.
  {
    id: "web-search", title: "Web search", blurb: "The back-end web_search uses",
    shown: (s) => s.account.permissions.value.read, component: WebSearchPage,
  },
];

// The console's providers and settings as the API sends them (docs/API.md,
// "Providers and settings"). API keys never come back: api_key is the
// masked hint ("sk-…4f2a"), "" when none is set or it is too short to
// show any of it.

export type ProviderSource = "env" | "config" | "database";

export interface ProviderView {
  id?: string;
  name: string;
  kind: "openai" | "anthropic";
  base_url: string;
  has_key: boolean;
  api_key: string;
  default_model: string;
  models: string[];
  /** Names of the extra HTTP headers; their values are write-only. */
  headers?: string[];
  enabled: boolean;
  source: ProviderSource;
  read_only: boolean;
  error?: string;
}

/** What the add/edit dialog sends; absent fields stay as they are. */
export interface ProviderInput {
  name?: string;
  kind?: string;
  base_url?: string;
  api_key?: string;
  default_model?: string;
  models?: string[];
  headers?: Record<string, string>;
  enabled?: boolean;
}

export interface Notifications { approvals: boolean; questions: boolean; run_failed: boolean; run_done: boolean }

export interface Effective {
  default_model: string;
  approval_mode: string;
  approval_timeout: string;
  max_retries: number;
  retry_backoff: string;
  notifications: Notifications;
}

export interface SettingsView {
  values: Record<string, unknown>;
  fixed: Record<string, { value: unknown; source: string }>;
  defaults: Effective;
  effective: Effective;
  keys: string[];
}

export const SOURCE_TEXT: Record<string, string> = {
  env: "environment",
  config: "config.json",
  flag: "command line",
  database: "added here",
};

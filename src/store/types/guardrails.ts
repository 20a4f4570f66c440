/** Organization settings, guardrails and their assignments (store/sql/guardrails.ts). */

import type { BuiltinFilterEntry, ContentFilterEntry } from '../../core/content-filters/types.js';
import type { Page } from './common.js';

export type GuardrailInterval = 'daily' | 'weekly' | 'monthly';

/** Organization-wide routing preferences and privacy rules (one row; our extension `/organization/settings`). */
export interface OrgSettingsRow {
  id: string;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  default_provider_sort: string | null;
  data_collection: 'allow' | 'deny';
  enforce_zdr: boolean;
  /** Model ids as clients send them → catalog ids (docs/agents.md); null = none. */
  model_aliases: Record<string, string> | null;
  created_at: string;
  updated_at: string | null;
}

export interface GuardrailRow {
  id: string;
  name: string;
  description: string | null;
  /** null only for legacy guardrails; a workspace default guardrail has its workspace here. */
  workspace_id: string | null;
  is_workspace_default: boolean;
  limit_usd: number | null;
  reset_interval: GuardrailInterval | null;
  include_byok_in_budgets: boolean;
  /** Canonical slugs. */
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  enforce_zdr_anthropic: boolean;
  enforce_zdr_openai: boolean;
  enforce_zdr_google: boolean;
  enforce_zdr_xai: boolean;
  enforce_zdr_other: boolean;
  enable_free_model_publication: boolean | null;
  enable_free_model_training: boolean | null;
  enable_paid_model_training: boolean | null;
  /** Content guardrails (docs/guardrails.md); absent on rows written before migration 0008. */
  content_filters?: ContentFilterEntry[] | null;
  content_filter_builtins?: BuiltinFilterEntry[] | null;
  /**
   * Our extension (docs/guardrails.md, "Rate limits"): at most `rate_limit_requests` requests per
   * `rate_limit_interval_s` seconds and/or `rate_limit_tokens_per_minute` tokens per clock minute, counted like the
   * guardrail's budget (per key, per member, or for the workspace). Absent on rows written before migration 0020.
   */
  rate_limit_requests?: number | null;
  rate_limit_interval_s?: number | null;
  rate_limit_tokens_per_minute?: number | null;
  created_at: string;
  updated_at: string | null;
}

/** A guardrail held by one key (`key_hash`) or one member (`user_id`); each holds at most one. */
export interface GuardrailAssignmentRow {
  id: string;
  guardrail_id: string;
  key_hash: string | null;
  user_id: string | null;
  assigned_by: string | null;
  created_at: string;
}

export interface KeyAssignmentRow extends GuardrailAssignmentRow {
  key_hash: string;
  key_name: string;
  key_label: string;
}

/** Organization settings, server secrets, guardrails and their assignments. */
export interface GuardrailStore {
  getOrgSettings(): Promise<OrgSettingsRow | null>;
  /** Inserts the row unless one exists (first start seeding from the config file); true when inserted. */
  seedOrgSettings(row: OrgSettingsRow): Promise<boolean>;
  /** The server secret `name`: the stored one, or `candidate` stored now when there is none (first writer wins). */
  serverSecret(name: string, candidate: string): Promise<string>;
  /** Inserts or replaces the row. */
  saveOrgSettings(row: OrgSettingsRow): Promise<void>;

  /** Guardrails of a workspace, oldest first (ties by id). */
  listGuardrails(workspace_id: string, offset: number, limit: number): Promise<Page<GuardrailRow>>;
  getGuardrail(id: string): Promise<GuardrailRow | null>;
  insertGuardrail(row: GuardrailRow): Promise<void>;
  updateGuardrail(id: string, patch: Partial<GuardrailRow>): Promise<GuardrailRow | null>;
  /** Deletes the guardrail and its assignments. */
  deleteGuardrail(id: string): Promise<boolean>;
  /**
   * Assigns the guardrail to keys or members in one transaction; an earlier assignment of any of them (to any
   * guardrail) is replaced. Returns how many were not already assigned to this guardrail.
   */
  assignGuardrail(input: { guardrail_id: string; kind: 'key' | 'member'; ids: string[]; assigned_by: string | null; now: string }): Promise<number>;
  /** Removes those keys' or members' assignments to this guardrail; returns how many were removed. */
  unassignGuardrail(guardrail_id: string, kind: 'key' | 'member', ids: string[]): Promise<number>;
  /** Key assignments (of one guardrail, or all), oldest first, with the key's name and label. */
  listKeyAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<KeyAssignmentRow>>;
  listMemberAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<GuardrailAssignmentRow>>;
  /** The guardrails that apply to a key: its own, its member's (creator), and its workspace's default (when configured). */
  guardrailsFor(q: { key_hash: string; user_id: string | null; workspace_id: string }): Promise<{ key: GuardrailRow | null; member: GuardrailRow | null; workspace: GuardrailRow | null }>;
  /** Whether any guardrail has a rate limit (requests or tokens); when none has, requests skip the guardrail check. */
  anyGuardrailRateLimit(): Promise<boolean>;
}

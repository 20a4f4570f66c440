/**
 * The store interface: everything the gateway persists, behind one contract with two backends
 * (SQLite by default, PostgreSQL for production). Rows use API-facing types: booleans, ISO timestamps, parsed JSON.
 */

import type { VideoStatus } from '../core/video-states.js';
import type { BuiltinFilterEntry, ContentFilterEntry } from '../core/content-filters/types.js';

export type KeyKind = 'management' | 'inference';
export type LimitReset = 'daily' | 'weekly' | 'monthly';
export type MemberRole = 'org:admin' | 'org:member';

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: string;
}

export interface MemberRow {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: MemberRole;
  created_at: string;
}

/** An organization member's membership of a (non-default) workspace; `role` is the member's organization role. */
export interface WorkspaceMemberRow {
  id: string;
  workspace_id: string;
  user_id: string;
  role: 'admin' | 'member';
  created_at: string;
}

/** One row of GET /activity: a day's served generations of one model on one endpoint (and workspace, when split). */
export interface ActivityRow {
  date: string;
  model: string;
  provider_name: string;
  endpoint_tag: string;
  workspace_id?: string;
  usage: number;
  byok_usage_inference: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
}

export interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  default_text_model: string | null;
  default_image_model: string | null;
  default_provider_sort: string | null;
  io_logging_api_key_ids: number[] | null;
  io_logging_sampling_rate: number;
  is_data_discount_logging_enabled: boolean;
  is_observability_broadcast_enabled: boolean;
  is_observability_io_logging_enabled: boolean;
  is_default: boolean;
  created_by: string;
  created_at: string;
  updated_at: string | null;
}

export interface KeyRow {
  hash: string;
  name: string;
  label: string;
  kind: KeyKind;
  disabled: boolean;
  limit: number | null;
  limit_reset: LimitReset | null;
  include_byok_in_limit: boolean;
  expires_at: string | null;
  creator_user_id: string | null;
  workspace_id: string;
  created_at: string;
  updated_at: string | null;
  /** Rate limit: at most this many requests per window (null: none). */
  rate_limit_requests: number | null;
  /** Its window in seconds (set together with `rate_limit_requests`). */
  rate_limit_interval_s: number | null;
  /** Token rate limit: at most this many tokens (prompt + completion) per clock minute (null or absent: none). */
  rate_limit_tokens_per_minute?: number | null;
}

export interface PresetRow {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'active' | 'disabled' | 'archived';
  status_updated_at: string | null;
  designated_version_id: string;
  creator_user_id: string;
  created_at: string;
  updated_at: string;
}

export interface PresetVersionRow {
  id: string;
  preset_id: string;
  version: number;
  config: Record<string, unknown>;
  system_prompt: string | null;
  creator_id: string;
  created_at: string;
  updated_at: string;
}

/** Spend of one key on one UTC day, in USD. */
/** A generation record the database refused, and why. */
export interface DeadLetter {
  row: GenerationRow;
  reason: string;
}

export interface DeadLetterRow {
  id: string;
  generation_id: string;
  key_hash: string;
  reason: string;
  /** The record as JSON text (unstorable characters escaped). */
  record: string;
  created_at: string;
}

export interface KeyUsageDelta {
  key_hash: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  usage: number;
  byok_usage: number;
  requests: number;
}

export interface KeyUsageTotals {
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
}

/** One inference request, successful or not, as recorded after it ended. */
export interface GenerationRow {
  id: string;
  request_id: string;
  key_hash: string;
  workspace_id: string;
  api_type: string;
  requested_model: string | null;
  model: string | null;
  provider_name: string | null;
  endpoint_tag: string | null;
  upstream_id: string | null;
  streamed: boolean;
  cancelled: boolean;
  status: number;
  finish_reason: string | null;
  native_finish_reason: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  native_tokens_reasoning: number;
  native_tokens_cached: number;
  native_tokens_cache_write: number;
  /** USD; null when the endpoint's price is unknown. */
  total_cost: number | null;
  upstream_inference_cost: number | null;
  is_byok: boolean;
  latency_ms: number;
  ttft_ms: number | null;
  generation_time_ms: number | null;
  /** Every attempt: provider, model, status, error message. */
  attempts: Array<{ provider: string; model: string; status: number; message?: string }>;
  /** gateway_metadata.pipeline of the request: what content guardrails and plugins did (null/absent: nothing). */
  pipeline?: Array<Record<string, unknown>> | null;
  error: { status: number; message: string } | null;
  preset_id: string | null;
  session_id: string | null;
  created_at: string;
}

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

/** A workspace budget's interval (`lifetime`: never resets; the API shows it as `reset_interval: null`). */
export type BudgetInterval = 'daily' | 'weekly' | 'monthly' | 'lifetime';

/** A workspace budget (docs/spend.md): at most one per workspace and interval. */
export interface WorkspaceBudgetRow {
  id: string;
  workspace_id: string;
  interval: BudgetInterval;
  /** USD (stored as nano-dollars). */
  limit_usd: number;
  created_at: string;
  updated_at: string;
}

/** One change of the organization's credit balance (docs/spend.md, "Credits"): never updated, never deleted. */
export interface CreditEntryRow {
  id: string;
  /** USD (stored as nano-dollars); negative for a downward adjustment. */
  amount_usd: number;
  kind: 'top_up' | 'adjustment';
  note: string | null;
  /** Who made it (a management key's hash, or `cli`). */
  created_by: string | null;
  created_at: string;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

/** A unique constraint or a concurrent change: the operation did not happen and may be retried. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

export interface BootstrapInput {
  organization: OrganizationRow;
  member: MemberRow;
  workspace: WorkspaceRow;
  key: KeyRow;
}

export interface SavePresetInput {
  workspace_id: string;
  slug: string;
  creator_id: string;
  config: Record<string, unknown>;
  system_prompt: string | null;
  now: string;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Applies pending migrations (`check`: only verifies none is pending, else throws); returns the names applied. */
  migrate(mode?: 'apply' | 'check'): Promise<string[]>;
  close(): Promise<void>;
  /** True when the database answers. */
  ping(): Promise<boolean>;

  getOrganization(): Promise<OrganizationRow | null>;
  /** Creates organization, owner, default workspace and first management key in one transaction. False when already bootstrapped. */
  bootstrap(input: BootstrapInput): Promise<boolean>;

  listMembers(offset: number, limit: number): Promise<Page<MemberRow>>;
  getMember(id: string): Promise<MemberRow | null>;
  insertMember(row: MemberRow): Promise<void>;
  /** Refuses (ConflictError) to remove the last admin or a member who still owns active keys. */
  deleteMember(id: string): Promise<boolean>;
  /** Members of a workspace (explicit memberships), oldest first. */
  listWorkspaceMembers(workspace_id: string, offset: number, limit: number): Promise<Page<WorkspaceMemberRow>>;
  isWorkspaceMember(workspace_id: string, user_id: string): Promise<boolean>;
  /** Adds the rows whose member is not in the workspace yet, in one transaction; returns those added. */
  addWorkspaceMembers(rows: WorkspaceMemberRow[]): Promise<WorkspaceMemberRow[]>;
  /**
   * Removes these members from the workspace in one transaction; refuses (ConflictError, nothing removed) when any of
   * them owns an active key in it. Returns how many were members.
   */
  removeWorkspaceMembers(workspace_id: string, user_ids: string[]): Promise<number>;

  /** Stores a workspace and its first members (its creator) in one transaction. */
  insertWorkspace(row: WorkspaceRow, members?: WorkspaceMemberRow[]): Promise<void>;
  getWorkspace(idOrSlug: string): Promise<WorkspaceRow | null>;
  getDefaultWorkspace(): Promise<WorkspaceRow | null>;
  listWorkspaces(offset: number, limit: number): Promise<Page<WorkspaceRow>>;
  updateWorkspace(id: string, patch: Partial<WorkspaceRow>): Promise<WorkspaceRow | null>;
  /** Refuses (ConflictError) while the workspace has active keys. Removes its presets in the same transaction. */
  deleteWorkspace(id: string): Promise<boolean>;

  insertKey(row: KeyRow): Promise<void>;
  getKey(hash: string): Promise<KeyRow | null>;
  listKeys(q: { workspace_id: string; include_disabled: boolean; offset: number; limit: number }): Promise<KeyRow[]>;
  updateKey(hash: string, patch: Partial<KeyRow>): Promise<KeyRow | null>;
  deleteKey(hash: string): Promise<boolean>;
  countActiveManagementKeys(): Promise<number>;

  /** Adds usage deltas (summed per key and day) in one transaction. */
  addKeyUsage(deltas: KeyUsageDelta[]): Promise<void>;
  /** Usage totals for the given keys; windows start at the given UTC days (`YYYY-MM-DD`). */
  getKeyUsage(hashes: string[], windows: { day: string; week: string; month: string }): Promise<Map<string, KeyUsageTotals>>;

  /** Writes generation records and the key usage they add, in one transaction. */
  recordGenerations(rows: GenerationRow[], usage: KeyUsageDelta[]): Promise<void>;
  /** Keeps records the database refused (with its reason) and adds the usage they carry, in one transaction. */
  deadLetterGenerations(entries: DeadLetter[], usage: KeyUsageDelta[]): Promise<void>;
  /** The newest dead-lettered records first. */
  listGenerationDeadLetters(limit: number): Promise<DeadLetterRow[]>;
  getGeneration(id: string): Promise<GenerationRow | null>;
  /** One page of the request log, newest first (store/generation-log.ts). */
  listGenerations(q: import('./generation-log.js').GenerationLogQuery): Promise<GenerationRow[]>;
  /** BYOK credentials (store/byok.ts; docs/byok.md): the secret sealed, deletion soft (secret wiped). */
  insertByokCredential(row: import('./byok.js').ByokCredentialRow): Promise<void>;
  listActiveByokCredentials(): Promise<Array<import('./byok.js').ByokCredentialRow>>;
  getByokCredential(id: string): Promise<import('./byok.js').ByokCredentialRow | null>;
  updateByokCredential(id: string, patch: import('./byok.js').ByokCredentialPatch): Promise<boolean>;
  nextByokSortOrder(provider: string, workspaceId: string | null): Promise<number>;
  /** Files (store/files.ts): rows of a workspace's files; the bytes are in the blob storage. */
  /** Inserted only if the workspace's files stay within quotaBytes (checked and inserted atomically). */
  insertFile(row: import('./files.js').FileRow, quotaBytes: number): Promise<{ inserted: boolean; used: number }>;
  getFile(workspace_id: string, id: string): Promise<import('./files.js').FileRow | null>;
  /** Oldest first, after an id; at most limit + 1 rows. */
  listFiles(workspace_id: string, after: string | null, limit: number): Promise<Array<import('./files.js').FileRow>>;
  workspaceFileBytes(workspace_id: string): Promise<number>;
  deleteFile(workspace_id: string, id: string): Promise<boolean>;
  getFileParse(sha256: string, engine: string): Promise<import('./files.js').FileParseRow | null>;
  putFileParse(row: import('./files.js').FileParseRow): Promise<void>;
  /** Feedback on generations (store/feedback.ts): one row per submission. */
  addGenerationFeedback(row: import('./feedback.js').GenerationFeedbackRow): Promise<void>;
  listGenerationFeedback(generationId: string): Promise<Array<import('./feedback.js').GenerationFeedbackRow>>;
  /** Logged content (I/O logging, store/generation-content.ts). */
  recordGenerationContent(rows: import('./generation-content.js').GenerationContentRow[]): Promise<void>;
  getGenerationContent(id: string): Promise<import('./generation-content.js').GenerationContentRow | null>;
  generationContentIds(ids: string[]): Promise<Set<string>>;
  /** Deletes content created before `before` (ISO), at most `limit` rows; returns how many. */
  deleteGenerationContentBefore(before: string, limit: number): Promise<number>;
  /** Broadcast destinations (store/destinations.ts). */
  insertDestination(row: import('./destinations.js').DestinationRow): Promise<void>;
  getDestination(id: string): Promise<import('./destinations.js').DestinationRow | null>;
  /** A workspace's (null: every workspace's) destinations, not deleted, oldest first. */
  listDestinations(workspaceId: string | null): Promise<Array<import('./destinations.js').DestinationRow>>;
  updateDestination(id: string, patch: Partial<import('./destinations.js').DestinationRow>): Promise<import('./destinations.js').DestinationRow | null>;
  addDestinationStats(id: string, stats: import('./destinations.js').DestinationStats): Promise<void>;
  /** Analytics rows (at most limit + 1) over the generation records (store/analytics.ts). */
  analytics(q: import('./analytics.js').AnalyticsQuery): Promise<Array<Record<string, string | number | null>>>;

  getPreset(workspace_id: string, slug: string): Promise<PresetRow | null>;
  listPresets(workspace_id: string, offset: number, limit: number): Promise<Page<PresetRow>>;
  getPresetVersion(preset_id: string, version: number): Promise<PresetVersionRow | null>;
  getPresetVersionById(id: string): Promise<PresetVersionRow | null>;
  listPresetVersions(preset_id: string, offset: number, limit: number): Promise<Page<PresetVersionRow>>;
  /**
   * Creates the preset (version 1) or adds the next version and designates it, in one transaction.
   * Two concurrent saves of one preset never produce the same version number: the loser gets ConflictError.
   */
  savePresetVersion(input: SavePresetInput): Promise<{ preset: PresetRow; version: PresetVersionRow; created: boolean }>;

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
  /**
   * Served generations (status 200, or billed) created in [from, to) (ISO timestamps), summed per UTC day, model,
   * provider and endpoint — and workspace with `byWorkspace` — optionally only of these keys or of one workspace.
   */
  activity(q: { from: string; to: string; keyHashes: string[] | null; workspaceId: string | null; byWorkspace: boolean }): Promise<ActivityRow[]>;
  /** Hashes of the keys created by a member, or of a workspace. */
  listKeyHashes(q: { creator_user_id?: string; workspace_id?: string }): Promise<string[]>;

  // ---- video generation jobs (docs/videos.md) -------------------------------------------------------------------
  insertVideoJob(row: VideoJobRow): Promise<void>;
  getVideoJob(id: string): Promise<VideoJobRow | null>;
  /**
   * Moves a job along `path` (e.g. `['in_progress', 'completed']`, or `['pending', 'in_progress', 'cancelled']`): one
   * conditional UPDATE per step (`where id = ? and status = <step's from>`, plus `lease_owner = owner` when given), all
   * in one transaction, `patch` applied with the last step. Every step must be an allowed transition (else
   * IllegalTransitionError, before any SQL). False, with nothing changed, when the job is not in `path[0]` (or not held
   * by `owner`): another actor moved it first.
   */
  transitionVideoJob(id: string, path: VideoStatus[], patch: VideoJobPatch, opts?: { owner?: string; now?: string }): Promise<boolean>;
  /** Changes fields other than `status`, only while the job is in `when.status` (and held by `when.owner`). */
  updateVideoJob(id: string, patch: VideoJobPatch, when: { status?: VideoStatus | VideoStatus[]; owner?: string }): Promise<boolean>;
  /**
   * Claims up to `limit` jobs with work due at `now` (active jobs whose `next_poll_at` has come, terminal jobs with a
   * webhook due) that no other owner holds: each is a conditional UPDATE setting `lease_owner = owner` and
   * `lease_until`, winning only when the job is free, already the caller's, or its lease expired. Returns the claimed
   * rows.
   */
  claimVideoJobs(q: { owner: string; now: string; leaseUntil: string; limit: number }): Promise<VideoJobRow[]>;
  /** Extends the leases `owner` holds on jobs that still have work; returns how many. */
  renewVideoLeases(owner: string, leaseUntil: string): Promise<number>;
  /** Gives up the leases `owner` holds (all, or those of `ids`; never those of `except`). */
  releaseVideoLeases(owner: string, ids?: string[], except?: string[]): Promise<number>;
  /** USD the unfinished (`pending`, `in_progress`) video jobs of these keys hold (`reserved_cost`), per key. */
  videoReservations(hashes: string[]): Promise<Map<string, number>>;
  /**
   * Runs `fn` while holding a lock on the key that every instance sharing the database respects (PostgreSQL: an
   * advisory lock on its own connection; a few holders at a time per instance, so that what runs under the locks
   * always finds a free connection); on SQLite, which one instance owns, `fn` simply runs. Callers serialize their
   * own concurrent calls per key in memory too.
   */
  withKeyLock<T>(hash: string, fn: () => Promise<T>): Promise<T>;

  // ---- credits and workspace budgets (docs/spend.md) -----------------------------------------------------------
  insertCreditEntry(row: CreditEntryRow): Promise<void>;
  /** Newest first. */
  listCreditEntries(offset: number, limit: number): Promise<Page<CreditEntryRow>>;
  /** Sum of every ledger entry, USD (exact: summed in nano-dollars). */
  creditTotal(): Promise<number>;
  /** Everything the organization was billed (served generations, BYOK excluded), USD, exact. */
  organizationUsage(): Promise<number>;
  /** The workspace's budgets (daily, weekly, monthly, lifetime order) and its `include_byok_in_budgets`. */
  listWorkspaceBudgets(workspace_id: string): Promise<{ budgets: WorkspaceBudgetRow[]; include_byok_in_budgets: boolean }>;
  /**
   * Creates or replaces the budget of `row.interval` (keeping its id and created_at when it exists) and, when given,
   * sets the workspace-wide `include_byok_in_budgets`, in one transaction; `check` sees every budget the workspace
   * would then have and may throw to cancel. Returns the stored budget.
   */
  saveWorkspaceBudget(row: WorkspaceBudgetRow, includeByok: boolean | undefined, check: (all: WorkspaceBudgetRow[]) => void): Promise<WorkspaceBudgetRow>;
  deleteWorkspaceBudget(workspace_id: string, interval: BudgetInterval): Promise<boolean>;
}

// ---- video generation jobs ------------------------------------------------------------------------------------------

/** Delivery state of a job's terminal-state webhook. */
export type VideoWebhookState = 'none' | 'pending' | 'delivered' | 'failed';

/** Where the upstream keeps one generated video (never shown to callers: the gateway proxies the bytes). */
export type VideoContentRef = { kind: 'openai-video'; video_id: string } | { kind: 'google-veo'; uri: string };

/** The request as accepted (validated and normalized), kept with the job: the worker submits from it. */
export interface VideoJobRequest {
  /** Id of the HTTP request that created the job (for the generation record). */
  request_id: string;
  prompt: string | null;
  duration: number | null;
  resolution: string | null;
  aspect_ratio: string | null;
  size: string | null;
  frame_images: Array<{ url: string; frame_type: 'first_frame' | 'last_frame' }>;
  input_references: Array<{ type: string; url: string }>;
  generate_audio: boolean | null;
  seed: number | null;
  /** `provider.options` as sent (filtered per endpoint at submission). */
  provider_options: Record<string, Record<string, unknown>>;
  /** Endpoints to try, in order (the routing plan made at creation): `model` and endpoint `tag`. */
  candidates: Array<{ model: string; tag: string }>;
  /** Index into `candidates` of the endpoint the job was submitted to (null before submission). */
  attempt: number | null;
  /** Failed submissions so far: provider, model, status, message. */
  attempts: Array<{ provider: string; model: string; status: number; message?: string }>;
}

export interface VideoJobRow {
  id: string;
  workspace_id: string;
  key_hash: string;
  /** The model the caller asked for. */
  model: string;
  /** Provider slug and endpoint tag the job was submitted to (null before submission). */
  provider: string | null;
  endpoint_tag: string | null;
  /** The upstream job: OpenAI video id or Google operation name. */
  upstream_id: string | null;
  status: VideoStatus;
  request_body: VideoJobRequest;
  /** Failure reason (status `failed`, and `expired`). */
  error: string | null;
  generation_id: string | null;
  /** USD, once completed (null when the endpoint's price is unknown). */
  cost: number | null;
  /**
   * USD held against the key's spending limit and budgets while the job is unfinished: the most any of its endpoints
   * would bill for the requested duration (null: no known price).
   */
  reserved_cost: number | null;
  is_byok: boolean;
  /** Upstream references of the generated videos, once completed. */
  content_refs: VideoContentRef[] | null;
  /** Seconds of video billed. */
  seconds: number | null;
  callback_url: string | null;
  webhook_state: VideoWebhookState;
  webhook_attempts: number;
  webhook_next_at: string | null;
  webhook_last_error: string | null;
  /** The worker instance driving the job, until `lease_until`. */
  lease_owner: string | null;
  lease_until: string | null;
  /** When the worker next looks at the job (submission, upstream poll). */
  next_poll_at: string | null;
  /** Consecutive failed upstream polls (backoff). */
  poll_errors: number;
  /** A job not finished by then expires. */
  deadline_at: string;
  submitted_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Fields a transition or an update may change (`status` only through `transitionVideoJob`). */
export type VideoJobPatch = Partial<Omit<VideoJobRow, 'id' | 'workspace_id' | 'key_hash' | 'model' | 'status' | 'created_at'>>;

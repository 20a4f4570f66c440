/** Generation records, their dead letters, key usage and the activity rollups (store/sql/generations.ts). */

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

/** Tokens a key's attempts settled against token rate limits in one clock minute (docs/spend.md). */
export interface KeyTokensDelta {
  key_hash: string;
  /** The clock minute the attempts reserved in: ms since the epoch / 60,000, rounded down. */
  minute: number;
  tokens: number;
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

/** Generation records, key usage, the request log, analytics and activity. */
export interface GenerationStore {
  /** Adds usage deltas (summed per key and day) in one transaction. */
  addKeyUsage(deltas: KeyUsageDelta[]): Promise<void>;
  /** Usage totals for the given keys; windows start at the given UTC days (`YYYY-MM-DD`). */
  getKeyUsage(hashes: string[], windows: { day: string; week: string; month: string }): Promise<Map<string, KeyUsageTotals>>;

  /**
   * Adds tokens settled against token rate limits (summed per key and minute) in one transaction, and drops the minutes
   * before `keepFrom` (only the current minute is ever read).
   */
  addKeyTokens(deltas: KeyTokensDelta[], keepFrom: number): Promise<void>;
  /** Tokens the keys settled in clock minute `minute` (an indexed read: seeds a token rate limit's counter). */
  keyTokensInMinute(hashes: string[], minute: number): Promise<number>;

  /** Writes generation records and the key usage they add, in one transaction. */
  recordGenerations(rows: GenerationRow[], usage: KeyUsageDelta[]): Promise<void>;
  /** Keeps records the database refused (with its reason) and adds the usage they carry, in one transaction. */
  deadLetterGenerations(entries: DeadLetter[], usage: KeyUsageDelta[]): Promise<void>;
  /** The newest dead-lettered records first. */
  listGenerationDeadLetters(limit: number): Promise<DeadLetterRow[]>;
  getGeneration(id: string): Promise<GenerationRow | null>;
  /** One page of the request log, newest first (store/generation-log.ts). */
  listGenerations(q: import('../generation-log.js').GenerationLogQuery): Promise<GenerationRow[]>;
  /** Analytics rows (at most limit + 1) over the generation records (store/analytics.ts). */
  analytics(q: import('../analytics.js').AnalyticsQuery): Promise<Array<Record<string, string | number | null>>>;
  /**
   * Served generations (status 200, or billed) created in [from, to) (ISO timestamps), summed per UTC day, model,
   * provider and endpoint — and workspace with `byWorkspace` — optionally only of these keys or of one workspace.
   */
  activity(q: { from: string; to: string; keyHashes: string[] | null; workspaceId: string | null; byWorkspace: boolean }): Promise<ActivityRow[]>;
}

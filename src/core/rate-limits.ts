/**
 * Per-key rate limits: at most `requests` requests per fixed window of `interval` seconds. Windows are aligned to the
 * epoch (a one-minute window starts on the minute), so every gateway instance agrees on the current window and a
 * shared counter (Redis) needs no coordination beyond one increment per request.
 *
 * Pure logic: no I/O.
 */

/** Longest window a rate limit may use (30 days). */
export const MAX_INTERVAL_S = 30 * 24 * 3600;

/** The accepted spelling of an interval: a positive integer and a unit, e.g. `10s`, `1m`, `6h`, `1d`. */
export const INTERVAL_PATTERN = '^[1-9][0-9]{0,6}[smhd]$';

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of an interval string (`90s`, `1m`, …), or null when malformed or longer than 30 days. */
export function parseInterval(text: string): number | null {
  const m = /^([1-9][0-9]{0,6})([smhd])$/.exec(text);
  if (!m) return null;
  const seconds = Number(m[1]) * UNIT_S[m[2]];
  return seconds <= MAX_INTERVAL_S ? seconds : null;
}

/** An interval in its largest exact unit (60 → `1m`, 90 → `90s`, 86400 → `1d`). */
export function formatInterval(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (seconds % UNIT_S[unit] === 0) return `${seconds / UNIT_S[unit]}${unit}`;
  return `${seconds}s`;
}

/** The window `now` (ms) falls in: its index (shared by every instance) and when it ends (ms). */
export function windowAt(nowMs: number, intervalS: number): { index: number; resetAt: number } {
  const ms = intervalS * 1000;
  const index = Math.floor(nowMs / ms);
  return { index, resetAt: (index + 1) * ms };
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** End of the window (ms since the epoch). */
  resetAt: number;
}

/** The decision for the `count`-th request of a window (counting this one). */
export function decide(count: number, limit: number, resetAt: number): RateDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt };
}

/** A rate limit as stored (seconds) and as the API takes it: requests per window and/or tokens per clock minute. */
export interface RateLimitSetting {
  /** At most `requests` requests per `interval_s` seconds (both null: no request limit). */
  requests: number | null;
  interval_s: number | null;
  /** At most this many tokens per clock minute (null: none). */
  tokens_per_minute: number | null;
}

/** A rate limit as the API shows it (`{ requests, interval, tokens_per_minute }`, each when set), or null. */
export function rateLimitView(requests: number | null | undefined, intervalS: number | null | undefined, tpm: number | null | undefined): { requests?: number; interval?: string; tokens_per_minute?: number } | null {
  const r = requests && intervalS ? { requests, interval: formatInterval(intervalS) } : null;
  const t = tpm ? Number(tpm) : null;
  if (!r && !t) return null;
  return { ...r, ...(t ? { tokens_per_minute: t } : {}) };
}

/**
 * Who a guardrail's rate limit counts for, as its budget does (docs/guardrails.md, "Rate limits"): a key-assigned
 * guardrail per key, a member-assigned one per member (every key of the member together), a workspace default one for
 * the whole workspace.
 */
export type RateScope = 'key' | 'member' | 'workspace';

/** One guardrail request limit as it applies to one key: `id` names its counter (guardrail, scope and owner). */
export interface GuardrailRequestLimit {
  id: string;
  guardrailId: string;
  name: string;
  scope: RateScope;
  limit: number;
  intervalS: number;
}

/** One guardrail tokens-per-minute limit as it applies to one key (`id`: its counter, as above). */
export interface GuardrailTokenLimit {
  id: string;
  guardrailId: string;
  name: string;
  scope: RateScope;
  tokensPerMinute: number;
}

/** The rate-limit fields of a guardrail that applies to a key, with the scope it applies in. */
export interface GuardrailRateInput {
  id: string;
  name: string;
  scope: RateScope;
  rate_limit_requests?: number | null;
  rate_limit_interval_s?: number | null;
  rate_limit_tokens_per_minute?: number | null;
}

/**
 * The guardrail rate limits of one key (null for each kind when none applies: the hot path checks only that): the
 * owner of each counter is the key, its member (`member`; the key itself when it has no member, as budgets do) or
 * its workspace.
 */
export function guardrailRateLimits(
  guardrails: readonly GuardrailRateInput[],
  owner: { key: string; member: string | null; workspace: string },
): { requests: GuardrailRequestLimit[] | null; tokens: GuardrailTokenLimit[] | null } {
  let requests: GuardrailRequestLimit[] | null = null;
  let tokens: GuardrailTokenLimit[] | null = null;
  for (const g of guardrails) {
    const who = g.scope === 'workspace' ? owner.workspace : g.scope === 'member' ? (owner.member ?? owner.key) : owner.key;
    const id = `g:${g.id}:${g.scope}:${who}`;
    if (g.rate_limit_requests && g.rate_limit_interval_s) {
      (requests ??= []).push({ id, guardrailId: g.id, name: g.name, scope: g.scope, limit: Number(g.rate_limit_requests), intervalS: Number(g.rate_limit_interval_s) });
    }
    if (g.rate_limit_tokens_per_minute) (tokens ??= []).push({ id, guardrailId: g.id, name: g.name, scope: g.scope, tokensPerMinute: Number(g.rate_limit_tokens_per_minute) });
  }
  return { requests, tokens };
}

/** How a guardrail's limit counts, in words (refusals, docs). */
export function perScope(scope: RateScope): string {
  return scope === 'key' ? 'per key' : scope === 'member' ? 'per member' : 'for its whole workspace';
}

/** Seconds to wait before `resetAt` (epoch ms) for `Retry-After`: at least 1. */
export function retryAfterS(resetAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetAt - now) / 1000));
}

/** The headers of a rate limit's 429: `Retry-After` (seconds) and `X-RateLimit-*` (limit, what is left, reset in epoch ms). */
export function rateLimitHeaders(limit: number, remaining: number, resetAt: number, retryAfter: number): Record<string, string> {
  return { 'retry-after': String(retryAfter), 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(resetAt) };
}

/** The metadata naming a guardrail's limit in a 429 (`limit_source` and the guardrail's id, name and scope). */
export function guardrailLimitSource(g: { guardrailId: string; name: string; scope: RateScope }): Record<string, string> {
  return { limit_source: 'guardrail', guardrail_id: g.guardrailId, guardrail_name: g.name, guardrail_scope: g.scope };
}

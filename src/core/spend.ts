/**
 * Spend control, the pure parts (docs/spend.md): what a request may cost at most at an endpoint's prices, how many
 * output tokens a remaining balance can buy, the hosted router's 402 message, the scopes (limits) a request counts
 * against, and how large a lease an instance takes from a shared budget. Amounts are integer nano-dollars
 * (src/core/money.ts).
 *
 * Pure logic: no I/O.
 */
import type { EndpointDef, Pricing } from './catalog-types.js';
import { windowStarts } from './limits.js';
import { usdToNano } from './money.js';
import { computeCost } from './pricing.js';

/** The largest output a request may ask for when neither it nor the endpoint gives one (tokens). */
export const FALLBACK_MAX_OUTPUT_TOKENS = 16_384;

/** The output limit a request states: `max_tokens`, `max_completion_tokens` or `max_output_tokens`, whichever is set. */
export function requestedOutputTokens(body: Record<string, unknown>): number | null {
  for (const k of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const v = body[k];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.floor(v);
  }
  return null;
}

/** Output tokens a request may produce at an endpoint: what it asks for, capped by the endpoint; else the endpoint's (or the fallback) maximum. */
export function maxOutputTokens(requested: number | null, endpoint: Pick<EndpointDef, 'max_completion_tokens' | 'context_length'>, promptTokens: number): number {
  const cap = endpoint.max_completion_tokens ?? Math.max(0, (endpoint.context_length || 0) - promptTokens);
  const ceiling = cap > 0 ? cap : FALLBACK_MAX_OUTPUT_TOKENS;
  return requested === null ? ceiling : Math.min(requested, ceiling);
}

export interface MaxCost {
  /** Nano-dollars; null when the endpoint has no known price (nothing can be reserved). */
  nano: number | null;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The most a request can cost at an endpoint's prices: its prompt estimate billed as uncached prompt tokens plus its
 * maximum output billed as completion (reasoning is part of the completion), plus the per-request fee — exactly as
 * the hosted router's pre-flight check computes it.
 */
export function maxRequestCost(pricing: Pricing | null, promptTokens: number, completionTokens: number): MaxCost {
  const c = computeCost(pricing, { promptTokens, completionTokens });
  return { nano: c.cost === null ? null : usdToNano(c.cost), promptTokens, completionTokens };
}

/**
 * Output tokens `availableNano` can buy after the prompt (and the request fee) is paid: the `M` of the 402 message.
 * Never negative.
 */
export function affordableOutputTokens(pricing: Pricing | null, promptTokens: number, availableNano: number): number {
  const fixed = maxRequestCost(pricing, promptTokens, 0).nano;
  const perToken = (maxRequestCost(pricing, 0, 1_000_000).nano ?? 0) - (maxRequestCost(pricing, 0, 0).nano ?? 0);
  if (fixed === null || availableNano <= fixed) return 0;
  if (perToken <= 0) return Number.MAX_SAFE_INTEGER;
  return Math.floor(((availableNano - fixed) * 1_000_000) / perToken);
}

/** The hosted router's refusal when the room left cannot pay for the request's maximum output. */
export function insufficientCreditsMessage(requestedTokens: number, affordableTokens: number): string {
  return `This request requires more credits, or fewer max_tokens. You requested up to ${requestedTokens} tokens, but can only afford ${affordableTokens}.`;
}

// ---- scopes -------------------------------------------------------------------------------------------------------

export type SpendWindow = 'daily' | 'weekly' | 'monthly' | null;

/** What kind of limit a scope is (messages, metrics). */
export type ScopeKind = 'key' | 'guardrail' | 'workspace_budget' | 'credits' | 'tokens' | 'requests';

/** One limit a request counts against, in the current window. */
export interface SpendScopeId {
  /** Unique across limits and windows, e.g. `key:<hash>:monthly:2026-11-01` (a new window is a new scope). */
  id: string;
  kind: ScopeKind;
  /** For messages: `key limit`, `guardrail "team" budget (daily)`, `workspace budget (monthly)`, `credits`. */
  label: string;
  /** Seconds the shared counters of this window are kept (a little past the window's end); 0: forever. */
  ttlS: number;
}

const DAY_S = 86_400;

/** The current window of a limit: its start day and how long its counters must live. */
export function windowOf(window: SpendWindow, nowMs: number): { start: string; ttlS: number } {
  const w = windowStarts(nowMs);
  switch (window) {
    case 'daily':
      return { start: w.day, ttlS: 2 * DAY_S };
    case 'weekly':
      return { start: w.week, ttlS: 8 * DAY_S };
    case 'monthly':
      return { start: w.month, ttlS: 32 * DAY_S };
    default:
      return { start: 'lifetime', ttlS: 0 };
  }
}

/** A scope of a limit in the window containing `nowMs`. */
export function scopeId(kind: ScopeKind, owner: string, window: SpendWindow, nowMs: number, label: string): SpendScopeId {
  const w = windowOf(window, nowMs);
  return { id: `${kind}:${owner}:${window ?? 'lifetime'}:${w.start}`, kind, label, ttlS: w.ttlS };
}

// ---- leases -------------------------------------------------------------------------------------------------------

/**
 * How much an instance takes from a shared budget beyond the request in hand (the lease's slack), given the room
 * left (`freeNano`, after the request), the request's amount and the instances holding parts of the budget: a share
 * of what is left small enough that every instance can still take one (`free / (2 × (holders + 1))`), in whole
 * requests (so that no instance is left with a fragment another request could have used), capped at `maxRequests`
 * requests' worth — and none at all (a per-request reservation) once that share is below one more
 * request, so that a nearly spent budget is never tied up in leases some instance may not use.
 */
export function leaseSlack(freeNano: number, amountNano: number, holders: number, maxRequests: number): number {
  if (amountNano <= 0 || freeNano <= 0) return 0;
  const share = Math.floor(freeNano / (2 * (holders + 1)));
  if (share < amountNano) return 0;
  return Math.min(share - (share % amountNano), amountNano * maxRequests);
}

/**
 * The `rate_limit` object of keys and guardrails (both our extension; docs/api.md "Rate limits", docs/guardrails.md
 * "Rate limits"): requests per interval and/or tokens per minute, one schema and one validation for both.
 */
import { Type, type Static } from '@sinclair/typebox';
import { badRequest } from '../../core/errors.js';
import { INTERVAL_PATTERN, parseInterval, type RateLimitSetting } from '../../core/rate-limits.js';
import { Nullable } from './common.js';

const fields = {
  requests: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Requests allowed per window (with `interval`).' })),
  interval: Type.Optional(Type.String({ pattern: INTERVAL_PATTERN, description: 'The window: a number and s, m, h or d (`10s`, `1m`, `1h`, `1d`; at most 30 days). Windows are aligned to the clock.' })),
  tokens_per_minute: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2_000_000_000, description: 'Tokens (prompt + completion) allowed per clock minute: each request reserves its upper bound before its upstream call and settles to what it used (docs/spend.md).' }),
  ),
};

/** The nullable `rate_limit` object, described for its owner (a key or a guardrail). */
export function RateLimitSchema(description: string) {
  return Nullable(Type.Object(fields, { additionalProperties: false }), { description });
}

const Shape = RateLimitSchema('');
export type RateLimitBody = Static<typeof Shape>;

/** The body's rate limit in seconds (undefined: not given; null: none); 400 naming the field when incomplete or too long. */
export function rateLimitSetting(v: RateLimitBody | undefined): RateLimitSetting | null | undefined {
  if (v === undefined || v === null) return v;
  if (v.requests !== undefined && v.interval === undefined) throw badRequest('rate_limit.interval is required with rate_limit.requests', { field: 'rate_limit.interval' });
  if (v.interval !== undefined && v.requests === undefined) throw badRequest('rate_limit.requests is required with rate_limit.interval', { field: 'rate_limit.requests' });
  if (v.requests === undefined && v.tokens_per_minute === undefined) throw badRequest('rate_limit needs requests and interval, or tokens_per_minute (null removes it)', { field: 'rate_limit' });
  const interval_s = v.interval === undefined ? null : parseInterval(v.interval);
  if (v.interval !== undefined && interval_s === null) throw badRequest(`rate_limit.interval must be at most 30 days (${v.interval})`, { field: 'rate_limit.interval' });
  return { requests: v.requests ?? null, interval_s, tokens_per_minute: v.tokens_per_minute ?? null };
}

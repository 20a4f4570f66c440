/**
 * Per-key rate limits (docs/api.md, "Rate limits"): every authenticated request of a key with a rate limit counts against the
 * current fixed window (src/core/rate-limits.ts); over the limit, 429 with `Retry-After` and `X-RateLimit-*`.
 *
 * One instance counts in memory, without a promise. With Redis configured, every instance counts on one shared
 * counter per key and window (an INCR and an expiry in one round trip), so the limit holds across instances; should
 * Redis fail, the instance falls back to counting in memory rather than refusing or letting every request through.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decide, formatInterval, windowAt, type RateDecision } from '../core/rate-limits.js';
import { HttpError } from '../core/errors.js';
import type { KeyRow } from '../store/types.js';
import { whenReady } from './redis.js';

const counterKey = (hash: string, intervalS: number, index: number) => `gw:rl:${hash}:${intervalS}:${index}`;

export class RateLimiter {
  /** Per key: the current window of its interval and the requests counted in it. */
  private readonly local = new Map<string, { intervalS: number; index: number; count: number }>();
  private readonly redis: Redis | null;
  private warned = false;

  constructor(
    redisUrl: string | null,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // No offline queue: while Redis is unreachable a count fails at once and is taken on this instance instead.
    this.redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) : null;
    this.redis?.on('error', (err: Error) => log.warn({ err: err.message }, 'redis rate limit counter error'));
  }

  /**
   * Counts a request of `key`. Null when the key has no rate limit; otherwise the decision, synchronous unless the
   * counter is shared through Redis.
   */
  admit(key: KeyRow): RateDecision | null | Promise<RateDecision> {
    const limit = key.rate_limit_requests;
    const intervalS = key.rate_limit_interval_s;
    if (!limit || !intervalS) return null;
    const { index, resetAt } = windowAt(this.now(), intervalS);
    if (!this.redis) return decide(this.countLocally(key.hash, intervalS, index), limit, resetAt);
    const k = counterKey(key.hash, intervalS, index);
    return this.redis
      .multi()
      .incr(k)
      .pexpireat(k, resetAt + 5_000)
      .exec()
      .then((res) => {
        const [err, count] = res?.[0] ?? [new Error('no reply'), null];
        if (err) throw err;
        return decide(Number(count), limit, resetAt);
      })
      .catch((err: Error) => {
        if (!this.warned) this.log.warn({ err: err.message }, 'rate limits: Redis unavailable, counting on this instance only');
        this.warned = true;
        return decide(this.countLocally(key.hash, intervalS, index), limit, resetAt);
      });
  }

  private countLocally(hash: string, intervalS: number, index: number): number {
    let c = this.local.get(hash);
    if (!c || c.index !== index || c.intervalS !== intervalS) {
      if (!c && this.local.size >= 100_000) this.prune();
      c = { intervalS, index, count: 0 };
      this.local.set(hash, c);
    }
    return ++c.count;
  }

  /** Drops counters of windows that are over (bounded memory with many limited keys). */
  private prune(): void {
    const now = this.now();
    for (const [hash, c] of this.local) if (windowAt(now, c.intervalS).index !== c.index) this.local.delete(hash);
  }

  /** Resolves once the shared counter is reachable (or after `ms`: until then, counts are taken on this instance). */
  async ready(ms = 2000): Promise<void> {
    if (this.redis) await whenReady(this.redis, ms);
  }

  /** The 429 for a refused request of `key`: the envelope, `Retry-After` (seconds) and the `X-RateLimit-*` headers. */
  refusal(key: KeyRow, d: RateDecision): HttpError {
    const interval = formatInterval(key.rate_limit_interval_s ?? 0);
    const retryAfter = Math.max(1, Math.ceil((d.resetAt - this.now()) / 1000));
    return new HttpError(
      429,
      `Rate limit exceeded: this key may make ${d.limit} requests per ${interval}; try again in ${retryAfter}s`,
      { error_type: 'rate_limit_exceeded', limit: d.limit, interval, reset_at: new Date(d.resetAt).toISOString() },
      { 'retry-after': String(retryAfter), 'x-ratelimit-limit': String(d.limit), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(d.resetAt) },
    );
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

/**
 * Request rate limits (docs/api.md, "Rate limits"; docs/guardrails.md, "Rate limits"): every authenticated request of
 * a key with a rate limit counts against the current fixed window (src/core/rate-limits.ts); over the limit, 429 with
 * `Retry-After` and `X-RateLimit-*`. An inference key's guardrails may add limits of their own (counted per key, per
 * member or for the workspace): the request is checked against its key's limit and all of them at once.
 *
 * One instance counts in memory, without a promise. With Redis configured, every instance counts on one shared
 * counter per limit and window — one round trip per request whatever the number of limits: an INCR and an expiry
 * (the key's own limit alone), or one script over the key's and its guardrails' counters — so the limits hold across
 * instances; should Redis fail, the instance falls back to counting in memory rather than refusing or letting every
 * request through.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decide, formatInterval, guardrailLimitSource, perScope, rateLimitHeaders, retryAfterS, windowAt, type GuardrailRequestLimit, type RateDecision } from '../core/rate-limits.js';
import { HttpError } from '../core/errors.js';
import type { KeyRow } from '../store/types.js';
import { newRedis, whenReady } from './redis.js';

const counterKey = (hash: string, intervalS: number, index: number) => `gw:rl:${hash}:${intervalS}:${index}`;

/**
 * The counters of one request in one atomic step (KEYS: the counters; ARGV per counter: limit, expiry (ms since the
 * epoch), always). A counter marked `always` (the key's own limit: every request of the key counts, refused ones
 * included) is incremented whatever the answer; the others (guardrails' limits, which other keys may share) only when
 * every counter admits the request, so a request refused anywhere uses up no guardrail's room. Answers each counter's
 * count with this request.
 */
const COUNT_ALL = `
local n = #KEYS
local counts, refused = {}, false
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0') + 1
  if counts[i] > tonumber(ARGV[3 * i - 2]) then refused = true end
end
for i = 1, n do
  if not refused or ARGV[3 * i] == '1' then
    counts[i] = redis.call('INCR', KEYS[i])
    redis.call('PEXPIREAT', KEYS[i], ARGV[3 * i - 1])
  end
end
return counts
`;

/** What the limiter needs from the guardrail service: the request limits of a key's guardrails (its policy). */
export interface GuardrailRateSource {
  /** False when no guardrail has a rate limit: no policy is looked at. */
  mayRateLimit(): boolean;
  peekPolicy(key: KeyRow): { requestLimits: GuardrailRequestLimit[] | null } | undefined;
  policyFor(key: KeyRow): Promise<{ requestLimits: GuardrailRequestLimit[] | null }>;
}

/** One counter of a request: the key's own limit (`guardrail` null) or a guardrail's. */
interface Counter {
  id: string;
  limit: number;
  intervalS: number;
  index: number;
  resetAt: number;
  /** Counted even when the request is refused (the key's own limit). */
  always: boolean;
  guardrail: GuardrailRequestLimit | null;
}

type RedisWithCount = Redis & { gwRateCount(n: number, ...args: Array<string | number>): Promise<unknown[]> };

export class RateLimiter {
  /** Per key: the current window of its interval and the requests counted in it. */
  private readonly local = new Map<string, { intervalS: number; index: number; count: number }>();
  private readonly redis: Redis | null;
  private warned = false;
  private guardrails: GuardrailRateSource | null = null;

  constructor(
    redisUrl: string | null,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // No offline queue: while Redis is unreachable a count fails at once and is taken on this instance instead.
    this.redis = redisUrl ? newRedis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) : null;
    this.redis?.on('error', (err: Error) => log.warn({ err: err.message }, 'redis rate limit counter error'));
    this.redis?.defineCommand('gwRateCount', { lua: COUNT_ALL });
  }

  /** Guardrail request limits are checked too (inference keys), from this source. */
  useGuardrails(source: GuardrailRateSource): void {
    this.guardrails = source;
  }

  /**
   * Counts a request of `key` against its own rate limit and, for an inference key, its guardrails' request limits:
   * null when admitted, else the 429 of the strictest limit that refuses (the one whose window ends last).
   * Synchronous unless the counters are shared through Redis or the key's policy is not cached; a key none of whose
   * guardrails has a rate limit counts exactly as `admit` does.
   */
  check(key: KeyRow): HttpError | null | Promise<HttpError | null> {
    const g = this.guardrails;
    if (g === null || key.kind !== 'inference' || !g.mayRateLimit()) return this.checkKey(key);
    const policy = g.peekPolicy(key);
    if (policy) return policy.requestLimits === null ? this.checkKey(key) : this.checkAll(key, policy.requestLimits);
    return g.policyFor(key).then((p) => (p.requestLimits === null ? this.checkKey(key) : this.checkAll(key, p.requestLimits)));
  }

  private checkKey(key: KeyRow): HttpError | null | Promise<HttpError | null> {
    const d = this.admit(key);
    if (d === null) return null;
    if (d instanceof Promise) return d.then((x) => (x.allowed ? null : this.refusal(key, x)));
    return d.allowed ? null : this.refusal(key, d);
  }

  /** The key's counter (when it has a limit) and its guardrails', counted together: one step, one Redis round trip. */
  private checkAll(key: KeyRow, limits: readonly GuardrailRequestLimit[]): HttpError | null | Promise<HttpError | null> {
    const now = this.now();
    const counters: Counter[] = [];
    if (key.rate_limit_requests && key.rate_limit_interval_s) {
      const w = windowAt(now, key.rate_limit_interval_s);
      counters.push({ id: key.hash, limit: key.rate_limit_requests, intervalS: key.rate_limit_interval_s, index: w.index, resetAt: w.resetAt, always: true, guardrail: null });
    }
    for (const l of limits) {
      const w = windowAt(now, l.intervalS);
      counters.push({ id: l.id, limit: l.limit, intervalS: l.intervalS, index: w.index, resetAt: w.resetAt, always: false, guardrail: l });
    }
    if (!this.redis) return this.verdict(key, counters, this.countAllLocally(counters));
    const keys = counters.map((c) => counterKey(c.id, c.intervalS, c.index));
    const args = counters.flatMap((c) => [c.limit, c.resetAt + 5_000, c.always ? 1 : 0]);
    return (this.redis as RedisWithCount).gwRateCount(keys.length, ...keys, ...args).then(
      (counts) => this.verdict(key, counters, counts.map(Number)),
      (err: Error) => {
        if (!this.warned) this.log.warn({ err: err.message }, 'rate limits: Redis unavailable, counting on this instance only');
        this.warned = true;
        return this.verdict(key, counters, this.countAllLocally(counters));
      },
    );
  }

  /** COUNT_ALL on this instance's counters. */
  private countAllLocally(counters: Counter[]): number[] {
    const slots = counters.map((c) => this.slot(c.id, c.intervalS, c.index));
    const refused = counters.some((c, i) => slots[i].count + 1 > c.limit);
    return counters.map((c, i) => (!refused || c.always ? ++slots[i].count : slots[i].count + 1));
  }

  /** Null when every count is within its limit; else the 429 of the refusing limit whose window ends last. */
  private verdict(key: KeyRow, counters: Counter[], counts: number[]): HttpError | null {
    let worst = -1;
    for (let i = 0; i < counters.length; i++) {
      if (counts[i] > counters[i].limit && (worst < 0 || counters[i].resetAt > counters[worst].resetAt)) worst = i;
    }
    if (worst < 0) return null;
    const c = counters[worst];
    const d = decide(counts[worst], c.limit, c.resetAt);
    return c.guardrail ? this.guardrailRefusal(c.guardrail, d) : this.refusal(key, d);
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
    return ++this.slot(hash, intervalS, index).count;
  }

  /** The in-memory counter of a limit (`id`: a key hash or a guardrail counter id) in the current window. */
  private slot(id: string, intervalS: number, index: number): { intervalS: number; index: number; count: number } {
    let c = this.local.get(id);
    if (!c || c.index !== index || c.intervalS !== intervalS) {
      if (!c && this.local.size >= 100_000) this.prune();
      c = { intervalS, index, count: 0 };
      this.local.set(id, c);
    }
    return c;
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
    const retryAfter = retryAfterS(d.resetAt, this.now());
    return new HttpError(
      429,
      `Rate limit exceeded: this key may make ${d.limit} requests per ${interval}; try again in ${retryAfter}s`,
      { error_type: 'rate_limit_exceeded', limit_source: 'key', limit: d.limit, interval, reset_at: new Date(d.resetAt).toISOString() },
      rateLimitHeaders(d.limit, 0, d.resetAt, retryAfter),
    );
  }

  /** The 429 of a guardrail's request limit: names the guardrail, how it counts, and its window. */
  private guardrailRefusal(l: GuardrailRequestLimit, d: RateDecision): HttpError {
    const interval = formatInterval(l.intervalS);
    const retryAfter = retryAfterS(d.resetAt, this.now());
    return new HttpError(
      429,
      `Rate limit exceeded: guardrail "${l.name}" (${l.guardrailId}) allows ${d.limit} requests per ${interval} ${perScope(l.scope)}; try again in ${retryAfter}s`,
      { error_type: 'rate_limit_exceeded', ...guardrailLimitSource(l), limit: d.limit, interval, reset_at: new Date(d.resetAt).toISOString() },
      rateLimitHeaders(d.limit, 0, d.resetAt, retryAfter),
    );
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }
}

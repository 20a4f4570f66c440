/**
 * Request rate limits (docs/api.md, "Rate limits"; docs/guardrails.md, "Rate limits"): every authenticated request of
 * a key with a rate limit counts against the current fixed window (src/core/rate-limits.ts); over the limit, 429 with
 * `Retry-After` and `X-RateLimit-*`. An inference key's guardrails may add limits of their own (counted per key, per
 * member or for the workspace): the request is checked against its key's limit and all of them at once.
 *
 * Counted as scopes of the spend-control ledger (docs/spend.md, "Request rate limits"): one scope of kind `requests`
 * per limit and window, a request reserving 1 in all of its scopes at once and settling 1 at once — an admitted
 * request is counted, a refused one is not. One instance counts in memory, synchronously. With Redis, every instance
 * counts through the ledger's leases: admitted from its lease without a round trip while it has room, exact across
 * instances, and — Redis unreachable — 503 for limited keys (GATEWAY_SPEND_REDIS_DOWN=closed, the default) or
 * counted on each instance alone (`local`), as spend is.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { formatInterval, guardrailLimitSource, perScope, rateLimitHeaders, retryAfterS, windowAt, type GuardrailRequestLimit, type RateDecision } from '../core/rate-limits.js';
import { HttpError } from '../core/errors.js';
import type { KeyRow } from '../store/types.js';
import { newRedis, whenReady } from './redis.js';
import { SpendService, unavailable, type ReserveResult, type ScopeSpec } from './spend/index.js';

/** What the limiter needs from the guardrail service: the request limits of a key's guardrails (its policy). */
export interface GuardrailRateSource {
  /** False when no guardrail has a rate limit: no policy is looked at. */
  mayRateLimit(): boolean;
  peekPolicy(key: KeyRow): { requestLimits: GuardrailRequestLimit[] | null } | undefined;
  policyFor(key: KeyRow): Promise<{ requestLimits: GuardrailRequestLimit[] | null }>;
}

/** One limit of a request in its current window: the key's own (`guardrail` null) or a guardrail's, and its scope. */
interface Counter {
  limit: number;
  startAt: number;
  resetAt: number;
  guardrail: GuardrailRequestLimit | null;
  scope: ScopeSpec;
}

/** The counters of a request, in the order the ledger checks them (the first without room is the refusal). */
interface Counters {
  /** The latest window start and the earliest window end among them: built again outside [from, until). */
  from: number;
  until: number;
  list: Counter[];
  scopes: ScopeSpec[];
}

const ZERO = async () => 0;

/** The scope of one limit (`owner`: a key hash or a guardrail counter id) in the window containing `now`. */
function counter(owner: string, limit: number, intervalS: number, now: number, guardrail: GuardrailRequestLimit | null): Counter {
  const { index, resetAt } = windowAt(now, intervalS);
  const label = guardrail ? `guardrail "${guardrail.name}" requests per ${formatInterval(intervalS)}` : `requests per ${formatInterval(intervalS)}`;
  // Kept a minute past the window's end (each script renews the expiry from its own time).
  const scope: ScopeSpec = { id: `requests:${owner}:${intervalS}:${index}`, kind: 'requests', label, ttlS: intervalS + 60, limitNano: limit, seed: ZERO, ledgerOnly: { endsAt: resetAt } };
  return { limit, startAt: resetAt - intervalS * 1000, resetAt, guardrail, scope };
}

function counters(list: Counter[]): Counters {
  // Latest-ending first (stable: the key's own first on a tie), so the refusal named is the strictest one that refuses.
  if (list.length > 1) list.sort((a, b) => b.resetAt - a.resetAt);
  return { from: Math.max(...list.map((c) => c.startAt)), until: Math.min(...list.map((c) => c.resetAt)), list, scopes: list.map((c) => c.scope) };
}

/** The 503 of a rate-limited request while the shared counters cannot be reached (spend/types.ts `unavailable`). */
const UNAVAILABLE = 'Rate limits cannot be checked right now (the shared rate-limit counters are unreachable); try again shortly';
const rateUnavailable = (err: unknown): HttpError => unavailable(err, UNAVAILABLE);

export class RateLimiter {
  private readonly spend: SpendService;
  /** A ledger and connection of its own (built from a Redis URL or none), closed by `close`; null: the gateway's. */
  private readonly own: { redis: Redis | null } | null;
  private guardrails: GuardrailRateSource | null = null;
  /** Per key row (a changed key is a new row): its own limit's counter in the current window. */
  private readonly keyCounters = new WeakMap<KeyRow, Counters>();
  /** Per key row: its own and its guardrails' counters, for the guardrail limits they were built from. */
  private readonly allCounters = new WeakMap<KeyRow, Counters & { limits: readonly GuardrailRequestLimit[] }>();

  /**
   * `counters`: the gateway's spend ledger (its leases and Redis connection are shared), or a Redis URL (a ledger of
   * its own, failing closed) or null (this instance alone).
   */
  constructor(
    counters: SpendService | string | null,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    if (counters instanceof SpendService) {
      this.spend = counters;
      this.own = null;
      return;
    }
    const redis = counters ? newRedis(counters, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (n) => Math.min(n * 50, 500) }) : null;
    redis?.on('error', (err: Error) => log.debug({ err: err.message }, 'redis rate limit counter error'));
    this.spend = new SpendService({ redis, log, now });
    this.own = { redis };
  }

  /** Guardrail request limits are checked too (inference keys), from this source. */
  useGuardrails(source: GuardrailRateSource): void {
    this.guardrails = source;
  }

  /**
   * Counts a request of `key` against its own rate limit and, for an inference key, its guardrails' request limits:
   * null when admitted, else the 429 of the strictest limit that refuses (the one whose window ends last), or the 503
   * of shared counters that cannot be reached. Synchronous when the ledger answers from memory (one instance, or
   * leases with room) and the key's policy is cached.
   */
  check(key: KeyRow): HttpError | null | Promise<HttpError | null> {
    const g = this.guardrails;
    if (g === null || key.kind !== 'inference' || !g.mayRateLimit()) return this.checkKey(key);
    const policy = g.peekPolicy(key);
    if (policy) return policy.requestLimits === null ? this.checkKey(key) : this.checkAll(key, policy.requestLimits);
    return g.policyFor(key).then((p) => (p.requestLimits === null ? this.checkKey(key) : this.checkAll(key, p.requestLimits)));
  }

  private checkKey(key: KeyRow): HttpError | null | Promise<HttpError | null> {
    const c = this.keyCounter(key);
    return c === null ? null : this.count(key, c);
  }

  /** The key's counter (when it has a limit) and its guardrails', counted together in one step. */
  private checkAll(key: KeyRow, limits: readonly GuardrailRequestLimit[]): HttpError | null | Promise<HttpError | null> {
    const now = this.now();
    let c = this.allCounters.get(key);
    if (!c || c.limits !== limits || now >= c.until || now < c.from) {
      const list: Counter[] = [];
      if (key.rate_limit_requests && key.rate_limit_interval_s) list.push(counter(key.hash, key.rate_limit_requests, key.rate_limit_interval_s, now, null));
      for (const l of limits) list.push(counter(l.id, l.limit, l.intervalS, now, l));
      if (list.length === 0) return null;
      c = { ...counters(list), limits };
      this.allCounters.set(key, c);
    }
    return this.count(key, c);
  }

  /** The key's own limit in the current window, built once per key row and window; null when it has none. */
  private keyCounter(key: KeyRow): Counters | null {
    const limit = key.rate_limit_requests;
    const intervalS = key.rate_limit_interval_s;
    if (!limit || !intervalS) return null;
    const now = this.now();
    let c = this.keyCounters.get(key);
    if (!c || now >= c.until || now < c.from) {
      c = counters([counter(key.hash, limit, intervalS, now, null)]);
      this.keyCounters.set(key, c);
    }
    return c;
  }

  /** One request in every counter of `c`: reserved and settled at 1 when all have room, else the refusal. */
  private count(key: KeyRow, c: Counters): HttpError | null | Promise<HttpError | null> {
    const r = this.reserve(c);
    if (r instanceof HttpError) return r;
    if (!(r instanceof Promise)) return this.verdict(key, c, r);
    return r.then((x) => this.verdict(key, c, x), rateUnavailable);
  }

  /** The ledger's answer for one request in `c` (the 503 when it cannot be had). */
  private reserve(c: Counters): ReserveResult | Promise<ReserveResult> | HttpError {
    try {
      return this.spend.reserve(c.scopes, 1);
    } catch (err) {
      return rateUnavailable(err);
    }
  }

  /** Admitted: counted (settled at 1), null. Refused: the 429 of the counter the ledger named. */
  private verdict(key: KeyRow, c: Counters, r: ReserveResult): HttpError | null {
    if (r.ok) {
      r.reservation.settle(1);
      return null;
    }
    const refused = c.list.find((x) => x.scope.id === r.scope.id) ?? c.list[0];
    const d: RateDecision = { allowed: false, limit: refused.limit, remaining: 0, resetAt: refused.resetAt };
    return refused.guardrail ? this.guardrailRefusal(refused.guardrail, d) : this.refusal(key, d);
  }

  /**
   * Counts a request of `key` against its own limit alone. Null when the key has no rate limit; otherwise the decision
   * (`remaining`: exact on one instance; with Redis, this instance's unused lease room, a lower bound), synchronous
   * when the ledger answers from memory. Throws (or rejects with) the 503 when the shared counters cannot be reached.
   */
  admit(key: KeyRow): RateDecision | null | Promise<RateDecision> {
    const c = this.keyCounter(key);
    if (c === null) return null;
    const r = this.reserve(c);
    if (r instanceof HttpError) throw r;
    const decided = (x: ReserveResult): RateDecision => {
      const { limit, resetAt, scope } = c.list[0];
      if (!x.ok) return { allowed: false, limit, remaining: 0, resetAt };
      x.reservation.settle(1);
      return { allowed: true, limit, remaining: this.spend.room(scope) ?? 0, resetAt };
    };
    return r instanceof Promise ? r.then(decided, (err) => Promise.reject(rateUnavailable(err))) : decided(r);
  }

  /** Resolves once a Redis connection of its own is up (or after `ms`); the gateway's ledger is awaited by the gateway. */
  async ready(ms = 2000): Promise<void> {
    if (this.own?.redis) await whenReady(this.own.redis, ms);
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

  /** Closes a ledger of its own (its leases given back); the gateway's is closed by the gateway. */
  async close(): Promise<void> {
    if (!this.own) return;
    await this.spend.close();
    this.own.redis?.disconnect();
  }
}

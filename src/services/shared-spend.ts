/**
 * Spend that several gateway instances must see at once. Each instance records generations in batches; until a batch
 * is written, its spend exists only in that instance's memory. With Redis configured, every instance also adds that
 * not-yet-written spend to a shared per-key counter and, once the batch is written, moves it out again and bumps a
 * shared epoch — so limit and budget checks on any instance count every instance's spend without waiting for writes.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { whenReady } from './redis.js';

const EPOCH = 'gw:spend:epoch';
const pendingKey = (hash: string) => `gw:spend:pending:${hash}`;
const inflightKey = (hash: string) => `gw:spend:inflight:${hash}`;
const avgKey = (hash: string) => `gw:spend:avg:${hash}`;
/** A crashed instance's in-flight count stops counting after this long without a new request of the key. */
const INFLIGHT_TTL_S = 3600;

/**
 * A key's limit check and its in-flight count in one step on Redis: spent = stored (ARGV[1]) + every instance's
 * not-yet-written spend + every instance's requests in flight × the key's average cost; below the limit (ARGV[2]),
 * one more request is counted in flight. Returns {admitted, spent as text}.
 */
const ADMIT = `
local pending = tonumber(redis.call('GET', KEYS[1]) or '0')
if pending < 0 then pending = 0 end
local flying = tonumber(redis.call('GET', KEYS[2]) or '0')
if flying < 0 then flying = 0 end
local avg = tonumber(redis.call('GET', KEYS[3]) or ARGV[3])
if avg < 0 then avg = 0 end
local spent = tonumber(ARGV[1]) + pending + flying * avg
if spent >= tonumber(ARGV[2]) then return {0, tostring(spent)} end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ${INFLIGHT_TTL_S})
return {1, tostring(spent)}
`;

type AdmitRedis = Redis & { gwAdmit(k1: string, k2: string, k3: string, stored: string, limit: string, avg: string): Promise<[number, string]> };
/** A crashed instance's pending spend (never written) stops counting after this long. */
const PENDING_TTL_S = 2 * 24 * 3600;

export class SharedSpend {
  private readonly redis: Redis;

  constructor(url: string, log: Logger) {
    // No offline queue: while Redis is unreachable a read fails at once and the caller counts this instance only.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis spend counter error'));
    this.redis.defineCommand('gwAdmit', { numberOfKeys: 3, lua: ADMIT });
  }

  /**
   * A request of a key with a spending limit, across every instance: admitted (and counted in flight until
   * `release`) when stored spend + everyone's unwritten spend + everyone's in-flight requests at the key's average
   * cost stay below the limit. `avg` is this instance's average cost per request (null: unknown).
   */
  async admit(hash: string, stored: number, limit: number, avg: number | null): Promise<{ admitted: boolean; spent: number }> {
    const [ok, spent] = await (this.redis as AdmitRedis).gwAdmit(pendingKey(hash), inflightKey(hash), avgKey(hash), String(stored), String(limit), String(avg ?? -1));
    return { admitted: ok === 1, spent: Number(spent) };
  }

  /** An admitted request ended; its key's average cost per request is shared with the other instances. */
  release(hash: string, avg: number | null): void {
    const p = this.redis.pipeline().decr(inflightKey(hash));
    if (avg !== null) p.set(avgKey(hash), String(avg), 'EX', 7 * 24 * 3600);
    p.exec().catch(() => undefined);
  }

  /**
   * Pending spend this instance did add to Redis and has not taken out yet, per key: a settle takes out no more than
   * that, so an add lost while Redis was unreachable cannot drive the shared counter below zero.
   */
  private readonly added = new Map<string, number>();
  /** What settles that failed (Redis unreachable) still have to take out, per key: the next settle does. */
  private readonly owed = new Map<string, number>();

  /** Spend recorded here but not yet written to the database. */
  add(hash: string, usd: number): void {
    this.redis
      .pipeline()
      .incrbyfloat(pendingKey(hash), usd)
      .expire(pendingKey(hash), PENDING_TTL_S)
      .exec()
      .then((res) => {
        if (res && !res[0]?.[0]) this.added.set(hash, (this.added.get(hash) ?? 0) + usd);
      })
      .catch(() => undefined);
  }

  /** A batch was written: its spend leaves the pending counters, and the epoch tells every instance to re-read. */
  async settle(byKey: Map<string, number>): Promise<void> {
    const p = this.redis.pipeline();
    const wanted = new Map<string, number>();
    const taking = new Map<string, number>();
    for (const hash of new Set([...byKey.keys(), ...this.owed.keys()])) {
      const want = (byKey.get(hash) ?? 0) + (this.owed.get(hash) ?? 0);
      wanted.set(hash, want);
      const take = Math.min(want, this.added.get(hash) ?? 0);
      if (take <= 0) continue;
      p.incrbyfloat(pendingKey(hash), -take);
      taking.set(hash, take);
    }
    p.incr(EPOCH);
    const res = await p.exec().catch(() => null);
    if (!res) {
      for (const [hash, want] of wanted) this.owed.set(hash, want);
      return;
    }
    for (const hash of wanted.keys()) {
      this.owed.delete(hash);
      const left = (this.added.get(hash) ?? 0) - (taking.get(hash) ?? 0);
      if (left <= 1e-12) this.added.delete(hash);
      else this.added.set(hash, left);
    }
  }

  /** Requests of the key in flight on every instance, at the key's shared average cost (`avg` when none is shared). */
  async flyingCost(hash: string, avg: number | null): Promise<number> {
    const [n, shared] = await this.redis.mget(inflightKey(hash), avgKey(hash));
    const flying = Math.max(0, Number(n ?? 0));
    const each = shared !== null ? Number(shared) : (avg ?? 0);
    return flying * Math.max(0, each);
  }

  /** Something other than a write changed the spend figures (a video reservation): every instance reads them again. */
  async bump(): Promise<void> {
    await this.redis.incr(EPOCH);
  }

  /** Changes whenever any instance wrote spend to the database (or a video reservation changed). */
  async epoch(): Promise<string> {
    return (await this.redis.get(EPOCH)) ?? '0';
  }

  /** Not-yet-written spend of these keys, across every instance. */
  async pending(hashes: string[]): Promise<number> {
    if (hashes.length === 0) return 0;
    const values = await this.redis.mget(...hashes.map(pendingKey));
    let sum = 0;
    for (const v of values) if (v !== null) sum += Math.max(0, Number(v));
    return sum;
  }

  /** Resolves once Redis is reachable, or after `ms` (until then, reads fail and callers fall back). */
  ready(ms = 2000): Promise<void> {
    return whenReady(this.redis, ms);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

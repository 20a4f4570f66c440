/**
 * Spend that several gateway instances must see at once. Each instance records generations in batches; until a batch
 * is written, its spend exists only in that instance's memory. With Redis configured, every instance also adds that
 * not-yet-written spend to a shared per-key counter and, once the batch is written, moves it out again and bumps a
 * shared epoch — so limit and budget checks on any instance count every instance's spend without waiting for writes.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const EPOCH = 'gw:spend:epoch';
const pendingKey = (hash: string) => `gw:spend:pending:${hash}`;
/** A crashed instance's pending spend (never written) stops counting after this long. */
const PENDING_TTL_S = 2 * 24 * 3600;

export class SharedSpend {
  private readonly redis: Redis;

  constructor(url: string, log: Logger) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1 });
    this.redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis spend counter error'));
  }

  /** Spend recorded here but not yet written to the database. */
  add(hash: string, usd: number): void {
    this.redis.pipeline().incrbyfloat(pendingKey(hash), usd).expire(pendingKey(hash), PENDING_TTL_S).exec().catch(() => undefined);
  }

  /** A batch was written: its spend leaves the pending counters, and the epoch tells every instance to re-read. */
  async settle(byKey: Map<string, number>): Promise<void> {
    const p = this.redis.pipeline();
    for (const [hash, usd] of byKey) p.incrbyfloat(pendingKey(hash), -usd);
    p.incr(EPOCH);
    await p.exec().catch(() => undefined);
  }

  /** Changes whenever any instance wrote spend to the database. */
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

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

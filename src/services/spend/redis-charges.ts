/**
 * Spend that went through no reservation, straight into the Redis ledger's shared counters (the CHARGE script,
 * redis-lua.ts): a video job's final cost against what its admission charged ahead. Each charge carries this
 * instance's sequence number; one whose reply never came is kept and sent again under the same number by the ledger's
 * sync, and Redis applies it at most once.
 */
import { ACK_TTL_MS, type RedisWithScripts } from './redis-lua.js';
import type { ScopeSpec } from './types.js';

/** A charge not acknowledged yet, sent again under the same sequence number (its key) until a reply comes. */
interface Charge {
  seq: number;
  scopes: ScopeSpec[];
  nano: number[];
}

export class RedisCharges {
  /** Charges whose reply never came, each under its own sequence number. */
  private queue: Charge[] = [];

  constructor(
    private readonly redis: RedisWithScripts,
    private readonly prefix: string,
    private readonly instance: string,
    /** The ledger's next sequence number (shared with its pushes). */
    private readonly next: () => number,
  ) {}

  /** How many charges wait to be sent again. */
  get owed(): number {
    return this.queue.length;
  }

  /**
   * `nano[i]` in scope i (or `nano` in each; may be negative: a refund of what was charged ahead). A scope whose
   * counter does not exist is left alone (its seed reads the store, which already holds the change). When no reply
   * comes the charge is kept for `retry`.
   */
  async charge(scopes: ScopeSpec[], nano: number | number[]): Promise<void> {
    const c: Charge = { seq: 0, scopes: [], nano: [] };
    scopes.forEach((s, i) => {
      const n = Math.round(Array.isArray(nano) ? nano[i] : nano);
      if (n !== 0) c.scopes.push(s), c.nano.push(n);
    });
    if (c.scopes.length === 0) return;
    c.seq = this.next();
    await this.send(c);
  }

  /** Sends again every charge whose reply never came (those still unanswered are kept for the next time). */
  async retry(): Promise<void> {
    if (this.queue.length === 0) return;
    const owed = this.queue;
    this.queue = [];
    for (const c of owed) await this.send(c);
  }

  /** One CHARGE; kept (same number) when no reply comes. */
  private async send(c: Charge): Promise<void> {
    const keys = [`${this.prefix}:charge:${this.instance}:${c.seq}`, ...c.scopes.map((s) => `${this.prefix}:spent:${s.id}`)];
    const args = [ACK_TTL_MS, ...c.scopes.flatMap((s, i) => [c.nano[i], s.ttlS])];
    try {
      await this.redis.gwSpendCharge(keys.length, ...keys, ...args);
    } catch {
      this.queue.push(c);
    }
  }
}

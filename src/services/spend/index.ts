/**
 * SpendService (docs/spend.md): `reserve(scopes, maxCost)` before an upstream call, then `settle(actualCost)` or
 * `release()` on the reservation — over every limit that covers the request (key limit, guardrail budgets, workspace
 * budgets, organization credits), each a scope. Without Redis one instance is exact on its own (LocalLedger); with
 * Redis every instance shares one set of counters through leases (RedisLedger). When Redis cannot be reached,
 * limited requests fail closed (503, `SpendUnavailableError`) unless the operator chose `local` (each instance then
 * counts alone until Redis is back — limits may be overshot by the number of instances).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LocalLedger } from './local.js';
import { RedisLedger, type RedisLedgerOptions } from './redis-ledger.js';
import { once, SpendUnavailableError, type ReserveResult, type ScopeSpec } from './types.js';

export type SpendFailMode = 'closed' | 'local';

export interface SpendServiceOptions {
  /** Shared counters across instances (null: this instance alone). */
  redis?: Redis | null;
  /** Redis ledger settings (key prefix, heartbeat TTL, sync period, idle time, lease cap). */
  ledger?: Partial<RedisLedgerOptions>;
  /** What a limited request gets while Redis is unreachable: 503 (`closed`, the default) or local counting. */
  failMode?: SpendFailMode;
  log?: Logger;
  /** The gateway's clock (the one request windows and token minutes are computed on): the local counters' windows end by it. */
  now?: () => number;
}

const NOTHING: ReserveResult = { ok: true, reservation: once(0, () => undefined, () => undefined) };

export class SpendService {
  private readonly local: LocalLedger;
  readonly shared: RedisLedger | null;
  private readonly failMode: SpendFailMode;
  private warned = 0;

  constructor(private readonly opts: SpendServiceOptions = {}) {
    this.failMode = opts.failMode ?? 'closed';
    this.local = new LocalLedger(opts.now);
    this.shared = opts.redis ? new RedisLedger(opts.redis, { prefix: 'gw:spendctl', ...opts.ledger }) : null;
    this.shared?.start();
  }

  /**
   * Holds `amountNano` in every scope, or refuses naming a scope without room (`exact`: a trip to Redis takes no
   * lease slack — for rare, large reservations). No scope: nothing to hold. Throws
   * SpendUnavailableError when the shared counters cannot be reached and the fail mode is `closed`.
   */
  reserve(scopes: ScopeSpec[], amountNano: number, opts?: { exact?: boolean }): ReserveResult | Promise<ReserveResult> {
    if (scopes.length === 0) return NOTHING;
    const amount = Math.max(0, Math.ceil(amountNano));
    if (!this.shared) return this.local.reserve(scopes, amount);
    let r: ReserveResult | Promise<ReserveResult>;
    try {
      r = this.shared.reserve(scopes, amount, opts?.exact === true);
    } catch (err) {
      return this.unreachable(err as Error, scopes, amount);
    }
    return r instanceof Promise ? r.catch((err: Error) => this.unreachable(err, scopes, amount)) : r;
  }

  private unreachable(err: Error, scopes: ScopeSpec[], amount: number): ReserveResult | Promise<ReserveResult> {
    if (err instanceof SpendUnavailableError) throw err;
    const now = Date.now();
    if (now - this.warned > 10_000) {
      this.warned = now;
      this.opts.log?.warn({ err: err.message, failMode: this.failMode }, 'spend limits: Redis unreachable');
    }
    if (this.failMode === 'local') return this.local.reserve(scopes, amount);
    throw new SpendUnavailableError('Spending limits cannot be checked right now (the shared spend counters are unreachable); try again shortly');
  }

  /**
   * Spend that went through no reservation, in every scope (nano-dollars; negative: a refund of what was charged
   * ahead, e.g. a video job that cost less than its admission charged). Never refuses; with Redis unreachable it is
   * kept and pushed once Redis is back.
   */
  async charge(scopes: ScopeSpec[], nano: number): Promise<void> {
    if (scopes.length === 0 || nano === 0) return;
    if (this.shared) await this.shared.charge(scopes, nano);
    else this.local.charge(scopes, nano);
  }

  /** What settled in these scopes is in the shared counters before this resolves (Redis; nothing to do alone). */
  async flush(scopes: ScopeSpec[]): Promise<void> {
    await this.shared?.flush(scopes);
  }

  /**
   * Room left in a scope as this instance knows it: exact alone; with Redis, its lease's unused room (a lower bound
   * of the room in Redis). Null when this instance has not used the scope.
   */
  room(scope: ScopeSpec): number | null {
    if (this.shared) {
      const l = this.shared.peek(scope.id);
      return l ? Math.max(0, l.granted - l.held - l.used) : null;
    }
    const c = this.local.peek(scope.id);
    return c ? Math.max(0, scope.limitNano - c.spent - c.held) : null;
  }

  /** Gives every lease back and stops the timers. */
  async close(): Promise<void> {
    await this.shared?.close();
  }
}

export { SpendUnavailableError, unavailable, type Reservation, type ReserveResult, type ScopeSpec } from './types.js';

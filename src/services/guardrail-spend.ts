/**
 * The spend side of guardrails (docs/spend.md): what a key, a member or a workspace spent against a budget (stored
 * usage, spend not yet written, video holds), a key's `limit_remaining`, the spend seam of every paid attempt
 * (`spendHooks`: reservations through the SpendGate, and token rate limits), and video jobs' admissions against the
 * key's own limit. GuardrailService extends it with the policies the budgets come from.
 */
import type { Logger } from 'pino';
import { limitRemaining, usageInWindow, windowStarts } from '../core/limits.js';
import { nanoToUsd, usdToNano } from '../core/money.js';
import { type Budget, type EffectivePolicy } from '../core/policy.js';
import { HttpError } from '../core/errors.js';
import { type KeyRow, type KeyUsageTotals, type Store } from '../store/types.js';
import { byokSpendId, type GenerationRecorder } from './generations.js';
import type { SpendGate } from './spend/gate.js';
import type { SpendAsk } from '../core/spend-ask.js';
import type { Admission, AttemptHooks, AttemptTarget } from './attempts/runner.js';
import type { Reservation } from './spend/types.js';

/** Spend figures behind budgets are re-read after every generation flush, and at least this often. */
const SPEND_TTL_MS = 5_000;

/** A key's own spending limit seen as a budget of its own scope (same spend figures as guardrail budgets). */
function keyBudget(key: KeyRow, limitUsd: number): Budget {
  return { guardrailId: '', name: 'key limit', scope: 'key', limitUsd, resetInterval: key.limit_reset, includeByok: key.include_byok_in_limit };
}

/** The 402 of a key whose spending limit is reached (model calls, speech, videos). */
export function keyLimitError(key: KeyRow, limit: number, spent: number): HttpError {
  return new HttpError(402, `Key limit reached: $${spent.toFixed(6)} spent of $${limit} (${key.limit_reset ?? 'no reset'})`, {
    error_type: 'payment_required',
    limit,
    spent,
    limit_reset: key.limit_reset,
  });
}

export interface GuardrailSpendDeps {
  store: Store;
  recorder: GenerationRecorder;
  now?: () => number;
  log?: Logger;
}

export abstract class GuardrailSpend {
  protected readonly spend = new Map<string, { hashes: string[]; totals: KeyUsageTotals; reserved: number; flushes: string; at: number }>();
  /** Bumped whenever video reservations change on this instance (cached spend figures include them). */
  private reservations = 0;
  protected gate: SpendGate | null = null;

  constructor(protected readonly deps: GuardrailSpendDeps) {}

  /** The effective policy of a key (its budgets). */
  abstract policyFor(key: KeyRow): Promise<EffectivePolicy>;
  /** The key's effective policy when cached and fresh (no await); undefined: ask `policyFor`. */
  abstract peekPolicy(key: KeyRow): EffectivePolicy | undefined;

  protected now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /**
   * USD spent against a budget: the scope's keys' usage in the budget's window, plus what this instance has not yet
   * written, plus what their unfinished video jobs hold. `fresh` reads the database whatever the cache holds. These
   * figures seed spend control's counters and answer `limit_remaining` and the 403 of a spent budget; the limits
   * themselves are enforced by spend control (reservations), exact across instances — another instance's spend
   * shows here once it is written (GATEWAY_RECORD_FLUSH_MS) or the cache expires.
   */
  private async spent(b: Budget, key: KeyRow, withPending = true, fresh = false): Promise<number> {
    // A fresh read seeds spend control, which counts what this instance settled before the seed began: the amounts
    // not yet written are taken now, before the store is read. Taken after, a batch written during the read would be
    // in neither figure (spend missed); taken before, it is at worst in both (a refusal one request early).
    const pending = fresh && withPending ? new Map(this.deps.recorder.unflushedSpend) : this.deps.recorder.unflushedSpend;
    const member = b.scope === 'member' && key.creator_user_id ? key.creator_user_id : null;
    const scopeKey = b.scope === 'workspace' ? `w:${key.workspace_id}` : member ? `m:${member}` : `k:${key.hash}`;
    // The cached database total stays exact while this instance wrote no batch and held no new video reservation.
    const flushes = `${this.deps.recorder.flushes}:${this.reservations}`;
    let e = this.spend.get(scopeKey);
    if (fresh || !e || e.flushes !== flushes || this.now() - e.at > SPEND_TTL_MS) {
      const hashes =
        b.scope === 'workspace'
          ? await this.deps.store.listKeyHashes({ workspace_id: key.workspace_id })
          : member
            ? await this.deps.store.listKeyHashes({ creator_user_id: member })
            : [key.hash];
      if (!hashes.includes(key.hash)) hashes.push(key.hash);
      const usage = await this.deps.store.getKeyUsage(hashes, windowStarts(this.now()));
      // Summed in nano-dollars (exact), kept in USD.
      const totals: KeyUsageTotals = { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 };
      for (const t of usage.values()) for (const k of Object.keys(totals) as Array<keyof KeyUsageTotals>) totals[k] += usdToNano(t[k]);
      for (const k of Object.keys(totals) as Array<keyof KeyUsageTotals>) totals[k] = nanoToUsd(totals[k]);
      let reserved = 0;
      for (const usd of (await this.deps.store.videoReservations(hashes)).values()) reserved += usdToNano(usd);
      reserved = nanoToUsd(reserved);
      e = { hashes, totals, reserved, flushes, at: this.now() };
      if (this.spend.size > 100_000) this.spend.clear();
      this.spend.set(scopeKey, e);
    }
    // A reserved video cost lands in the current window when the job completes (BYOK is not known before then).
    let spent = usdToNano(usageInWindow(e.totals, b.resetInterval, b.includeByok)) + usdToNano(e.reserved);
    if (!withPending) return nanoToUsd(spent);
    // Not yet written: BYOK spend (kept apart, `byokSpendId`) only in budgets that count it.
    const ids = b.includeByok ? [...e.hashes, ...e.hashes.map(byokSpendId)] : e.hashes;
    for (const h of ids) spent += usdToNano(pending.get(h) ?? 0);
    return nanoToUsd(spent);
  }

  /**
   * A key's `limit_remaining`: its limit minus its spend in the limit's window — written records, records not yet
   * written by this instance, and video jobs' holds; null without a limit.
   */
  async limitRemaining(key: KeyRow): Promise<number | null> {
    if (key.limit === null) return null;
    return limitRemaining(key.limit, await this.spent(keyBudget(key, key.limit), key, true));
  }

  /**
   * A request that may be answered without any attempt (a response cache hit) still needs every limit of the key to
   * have room left: 402 (or 503) otherwise. Nothing stays reserved.
   */
  async checkRoom(key: KeyRow): Promise<void> {
    if (this.gate) (await this.gate.admit(key, () => null))?.release();
  }

  /**
   * The spend seam of a key's request (services/attempts/runner.ts, docs/spend.md): before each attempt, its maximum
   * cost at that endpoint's prices (`askOf`) is reserved in every limit of the key — a fallback to another endpoint
   * reserves afresh at its prices — and settled to the real cost (or released) by the runner. 402 when a limit has
   * no room, 503 when the shared counters are unreachable (fail closed). None without spend control.
   */
  spendHooks<A extends AttemptTarget>(key: KeyRow, askOf: (a: A) => SpendAsk | null): AttemptHooks<A> | undefined {
    const gate = this.gate;
    if (!gate) return undefined;
    return {
      // Without a promise on the hot path: no token rate limit, and the limits' leases have room.
      admit: (a) => {
        // Sized once, and only when some limit needs it.
        let ask: SpendAsk | null | undefined;
        const sized = () => (ask === undefined ? (ask = askOf(a)) : ask);
        // On a BYOK credential: held only in the limits that count BYOK spend (docs/byok.md).
        const byok = (a as { byok?: unknown }).byok !== undefined;
        // The key's token rate limit and its guardrails' (docs/guardrails.md, "Rate limits"), reserved together.
        const policy = this.peekPolicy(key);
        if (policy === undefined) return this.policyFor(key).then((p) => admitWithTokens(gate, key, sized, byok, p.tokenLimits));
        return admitWithTokens(gate, key, sized, byok, policy.tokenLimits);
      },
    };
  }

  /**
   * Admits a video job and stores it (`insert`): the most it can bill (`reserve`, USD) is reserved in every limit of
   * the key through spend control — exact across instances, as for any request — and counted as spent at once
   * (pushed to the shared counters before the job exists), until the job ends and `videoEnded` replaces it with the
   * real cost. 402 when a limit has no room (the key's own limit says what the video could cost and what is spent or
   * held), 503 when the shared counters are unreachable (fail closed). A failed insert gives the charge back.
   */
  async admitVideo(key: KeyRow, reserve: number, insert: () => Promise<void>): Promise<void> {
    const gate = this.gate;
    if (!gate) {
      await insert();
      return;
    }
    const nano = usdToNano(reserve);
    const refuse = (scope: { kind: string; limitNano: number }, available: number): HttpError | null => {
      if (scope.kind !== 'key' || key.limit === null) return null;
      const limit = key.limit;
      const spent = nanoToUsd(Math.max(0, scope.limitNano - available));
      if (available <= 0 || nano <= 0) return keyLimitError(key, limit, spent);
      return new HttpError(402, `Key limit would be exceeded: this video can cost up to $${reserve.toFixed(6)}, and $${spent.toFixed(6)} of $${limit} is spent or held (${key.limit_reset ?? 'no reset'})`, {
        error_type: 'payment_required',
        limit,
        spent,
        reserve,
        limit_reset: key.limit_reset,
      });
    };
    const scopes = await gate.chargeAhead(key, nano, refuse);
    try {
      await insert();
    } catch (err) {
      await gate.charge(scopes, -nano).catch(() => undefined);
      throw err;
    }
    if (nano > 0) this.reservationsChanged();
  }

  /**
   * A video job ended (its terminal transition won and its generation is recorded): what its admission charged
   * (`reserved`, USD) is replaced by its real cost (`cost`, null: none) in every limit of its key — for a job served on
   * a BYOK credential (`byok`), only in the limits that count BYOK spend (include_byok_in_limit / _in_budgets); the
   * others (and credits) just get the hold back (docs/byok.md).
   */
  async videoEnded(keyHash: string, reserved: number, cost: number | null, byok = false): Promise<void> {
    this.reservationsChanged();
    const gate = this.gate;
    const held = usdToNano(reserved);
    const delta = usdToNano(cost ?? 0) - held;
    if (!gate || (delta === 0 && (!byok || held === 0))) return;
    const key = await this.deps.store.getKey(keyHash);
    if (!key) return;
    const scopes = await gate.scopes(key);
    const counting = byok ? scopes.filter((s) => s.countsByok) : scopes;
    const others = byok ? scopes.filter((s) => !s.countsByok) : [];
    if (counting.length > 0 && delta !== 0) await gate.charge(counting, delta);
    if (others.length > 0 && held !== 0) await gate.charge(others, -held);
  }

  /** Video reservations changed (a job was admitted or ended): cached spend figures are read again on this instance. */
  reservationsChanged(): void {
    this.reservations++;
  }

  /** Hands admissions of callers that give a request's maximum cost to spend control. */
  useSpend(gate: SpendGate): void {
    this.gate = gate;
  }

  /** The guardrail budgets that apply to a key (spend-control scopes). */
  async budgetsOf(key: KeyRow): Promise<Budget[]> {
    return (await this.policyFor(key)).budgets;
  }

  /** USD spent against a budget, read fresh (seeds a spend-control scope). */
  budgetSpent(b: Budget, key: KeyRow): Promise<number> {
    return this.spent(b, key, true, true);
  }

  /** The first budget of the policy that is spent, if any. */
  async exhaustedBudget(key: KeyRow, policy: EffectivePolicy): Promise<{ budget: Budget; spent: number } | null> {
    for (const budget of policy.budgets) {
      const spent = await this.spent(budget, key);
      if (spent >= budget.limitUsd) return { budget, spent };
    }
    return null;
  }
}

/** Reserves the request's tokens in its token rate limits (if any), then its cost: synchronous when neither waits. */
function admitWithTokens(gate: SpendGate, key: KeyRow, sized: () => SpendAsk | null, byok: boolean, limits: EffectivePolicy['tokenLimits']): SpendAdmission | Promise<SpendAdmission> {
  const tokens = gate.reserveTokens(key, () => sized()?.tokens ?? 1, limits);
  return tokens ? tokens.then((held) => spendAdmission(gate, key, sized, byok, held)) : spendAdmission(gate, key, sized, byok, null);
}

/** An attempt's admission in the key's limits, once its tokens (`held`, token rate limit) are reserved. */
function spendAdmission(gate: SpendGate, key: KeyRow, sized: () => SpendAsk | null, byok: boolean, held: Reservation | null): SpendAdmission | Promise<SpendAdmission> {
  let r: Reservation | null | Promise<Reservation | null>;
  try {
    r = gate.admit(key, sized, byok);
  } catch (err) {
    held?.release();
    throw err;
  }
  if (!(r instanceof Promise)) return new SpendAdmission(r, held);
  return r.then(
    (x) => new SpendAdmission(x, held),
    (err) => {
      held?.release();
      throw err;
    },
  );
}

/** An attempt's holds: its maximum cost in the key's limits, and its tokens in its token rate limit (either may be null). */
class SpendAdmission implements Admission {
  constructor(
    private readonly spend: Reservation | null,
    private readonly held: Reservation | null,
  ) {}

  settle(cost: number | null, used?: number): void {
    if (cost === null || !(cost > 0)) this.spend?.release();
    else this.spend?.settle(usdToNano(cost));
    this.held?.settle(used ?? this.held.amountNano);
  }

  release(): void {
    this.spend?.release();
    this.held?.release();
  }
}

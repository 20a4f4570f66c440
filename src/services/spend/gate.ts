/**
 * Every limit of a request as spend-control scopes, and its admission (docs/spend.md): the key's spending limit (in
 * its reset window), its guardrails' budgets (key, member, workspace default), its workspace's budgets and — credits on
 * — the organization's balance. `admit` reserves the request's maximum cost in all of them at once and answers the
 * settle function (call it once with the real cost, or null when nothing was billed), or throws 402 (no room) or 503
 * (shared counters unreachable, fail closed). Scopes come from caches: no database read per request once seeded.
 */
import { HttpError } from '../../core/errors.js';
import { formatNano, nanoToUsd, usdToNano } from '../../core/money.js';
import { scopeId, windowOf } from '../../core/spend.js';
import type { SpendAsk } from '../../core/spend-ask.js';
import type { Budget } from '../../core/policy.js';
import type { KeyRow } from '../../store/types.js';
import type { WorkspaceBudgetService } from './budgets.js';
import type { CreditService } from './credits.js';
import { guardrailLimitSource, perScope, rateLimitHeaders, retryAfterS, windowAt, type GuardrailTokenLimit } from '../../core/rate-limits.js';
import type { SpendService } from './index.js';
import type { TokenUsage } from './tokens.js';
import { once, unavailable, type Reservation, type ReserveResult, type ScopeSpec } from './types.js';

/** What the gate needs from the guardrail service: the key's budgets, and spend figures to seed scopes from. */
export interface BudgetSource {
  budgetsOf(key: KeyRow): Promise<Budget[]>;
  /** USD spent against a budget (a key limit is a budget of scope `key`): written, unwritten and held by video jobs. */
  budgetSpent(b: Budget, key: KeyRow): Promise<number>;
  /** The key's policy when cached and fresh (no await); undefined: ask `budgetsOf`. */
  peekPolicy?(key: KeyRow): { budgets: readonly Budget[] } | undefined;
}

/**
 * The 429 of a token rate limit without room for `tokens`: the key's own (`guardrail` undefined, limit `keyTpm`) or a
 * guardrail's (named, with how it counts), with Retry-After and X-RateLimit-* counting tokens.
 */
function tokenRefusal(available: number, tokens: number, keyTpm: number, resetAt: number, now: number, guardrail: GuardrailTokenLimit | undefined): HttpError {
  const tpm = guardrail ? guardrail.tokensPerMinute : keyTpm;
  const retryAfter = retryAfterS(resetAt, now);
  const whose = guardrail ? `guardrail "${guardrail.name}" (${guardrail.guardrailId}) allows ${tpm} tokens per minute ${perScope(guardrail.scope)}` : `this key may use ${tpm} tokens per minute`;
  const message =
    tokens > tpm
      ? `Rate limit exceeded: this request may use up to ${tokens} tokens, more than ${guardrail ? `guardrail "${guardrail.name}" (${guardrail.guardrailId}) allows per minute (${tpm} ${perScope(guardrail.scope)})` : `this key's ${tpm} tokens per minute`}; lower max_tokens or the prompt`
      : `Rate limit exceeded: ${whose} and this request may use up to ${tokens} (${available} left); try again in ${retryAfter}s`;
  const source = guardrail ? guardrailLimitSource(guardrail) : { limit_source: 'key' };
  return new HttpError(
    429,
    message,
    { error_type: 'rate_limit_exceeded', ...source, limit_tokens: tpm, requested_tokens: tokens, remaining_tokens: available, reset_at: new Date(resetAt).toISOString() },
    rateLimitHeaders(tpm, available, resetAt, retryAfter),
  );
}

export class SpendGate {
  /** Per key row (a changed key is a new row): the scope of its own limit in the current window, built once. */
  private readonly keyScopes = new WeakMap<KeyRow, { start: string; scopes: ScopeSpec[] }>();

  constructor(
    private readonly deps: {
      spend: SpendService;
      credits: CreditService;
      budgets: WorkspaceBudgetService;
      source: BudgetSource;
      /** Where token rate limits' settled tokens are kept and their seeds read (absent: minutes start at 0, nothing kept). */
      tokens?: TokenUsage;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /**
   * The scopes of a key's request. Without an await when only the key's own limit can apply (its policy cached with
   * no budget, its workspace known to have none, credits off): that scope is built once per key row and window.
   */
  scopes(key: KeyRow): ScopeSpec[] | Promise<ScopeSpec[]> {
    const now = this.now();
    const policy = this.deps.source.peekPolicy?.(key);
    if (policy && policy.budgets.length === 0 && !this.deps.credits.enabled && this.deps.budgets.knownEmpty(key.workspace_id)) {
      if (key.limit === null) return [];
      const start = windowOf(key.limit_reset, now).start;
      const hit = this.keyScopes.get(key);
      if (hit && hit.start === start) return hit.scopes;
      const scopes = [this.keyScope(key, key.limit, now)];
      this.keyScopes.set(key, { start, scopes });
      return scopes;
    }
    return this.allScopes(key, now);
  }

  private keyScope(key: KeyRow, limit: number, now: number): ScopeSpec {
    const src = this.deps.source;
    const b: Budget = { guardrailId: '', name: 'key limit', scope: 'key', limitUsd: limit, resetInterval: key.limit_reset, includeByok: key.include_byok_in_limit };
    return { ...scopeId('key', `${key.hash}${b.includeByok ? '+byok' : ''}`, key.limit_reset, now, 'key limit'), limitNano: usdToNano(limit), seed: async () => usdToNano(await src.budgetSpent(b, key)), countsByok: b.includeByok };
  }

  private async allScopes(key: KeyRow, now: number): Promise<ScopeSpec[]> {
    const src = this.deps.source;
    const out: ScopeSpec[] = [];
    if (key.limit !== null) out.push(this.keyScope(key, key.limit, now));
    for (const b of await src.budgetsOf(key)) {
      const owner = b.scope === 'workspace' ? key.workspace_id : b.scope === 'member' ? (key.creator_user_id ?? key.hash) : key.hash;
      const label = `guardrail "${b.name}" budget (${b.resetInterval ?? 'lifetime'})`;
      out.push({ ...scopeId('guardrail', `${b.guardrailId}:${b.scope}:${owner}${b.includeByok ? '+byok' : ''}`, b.resetInterval, now, label), limitNano: usdToNano(b.limitUsd), seed: async () => usdToNano(await src.budgetSpent(b, key)), countsByok: b.includeByok });
    }
    out.push(...(await this.deps.budgets.scopes(key.workspace_id)));
    const credits = await this.deps.credits.scope();
    if (credits) out.push(credits);
    return out;
  }

  /**
   * Whether a key's requests have no scope to reserve in, from what is cached (no await): no key limit, no token rate
   * limit (the key's or a guardrail's), no guardrail budget in `policy`, credits off and the workspace known to have no
   * budget. False when unsure.
   */
  nothingToReserve(key: KeyRow, policy: { budgets: readonly Budget[]; tokenLimits?: readonly GuardrailTokenLimit[] | null }): boolean {
    return key.limit === null && !key.rate_limit_tokens_per_minute && !policy.tokenLimits && policy.budgets.length === 0 && !this.deps.credits.enabled && this.deps.budgets.knownEmpty(key.workspace_id);
  }

  /**
   * Token rate limits (docs/spend.md, "Token rate limits"; docs/guardrails.md, "Rate limits"): reserves the attempt's
   * token bound in the current clock minute of the key's own limit and of every guardrail token limit that applies
   * (`guardrails`, counted per key, per member or for the workspace) — all in one step, as scopes of the same counters
   * (local, or Redis leases), counted in tokens — or throws 429 naming the limit that has no room, with Retry-After
   * and X-RateLimit-*. Null when none applies (nothing awaited).
   */
  reserveTokens(key: KeyRow, tokensOf: () => number, guardrails: readonly GuardrailTokenLimit[] | null = null): Promise<Reservation> | null {
    const tpm = key.rate_limit_tokens_per_minute ? Number(key.rate_limit_tokens_per_minute) : 0;
    if (!tpm && guardrails === null) return null;
    const now = this.now();
    const { index, resetAt } = windowAt(now, 60);
    const usage = this.deps.tokens;
    // Seeded (first use of the minute here, Redis lost it) with what the minute already used: the store's count and
    // this instance's not yet written (tokens.ts).
    const seed = (scope: GuardrailTokenLimit['scope']) => (usage ? () => usage.seed(key, scope, index) : async () => 0);
    const scopes: ScopeSpec[] = [];
    if (tpm) scopes.push({ id: `tokens:${key.hash}:minute:${index}`, kind: 'tokens', label: 'tokens per minute', ttlS: 120, limitNano: tpm, seed: seed('key'), keepUntil: resetAt });
    for (const g of guardrails ?? []) {
      scopes.push({ id: `tokens:${g.id}:minute:${index}`, kind: 'tokens', label: `guardrail "${g.name}" tokens per minute`, ttlS: 120, limitNano: g.tokensPerMinute, seed: seed(g.scope), keepUntil: resetAt });
    }
    const tokens = Math.max(1, Math.ceil(tokensOf()));
    const decide = (r: ReserveResult): Reservation => {
      if (!r.ok) throw tokenRefusal(r.availableNano, tokens, tpm, resetAt, now, guardrails?.find((g) => r.scope.id === `tokens:${g.id}:minute:${index}`));
      if (!usage) return r.reservation;
      // The tokens used are kept for later seeds of this minute — queued with the records before they are settled
      // (what a seed reads is then never behind what the counters hold: docs/spend.md, "Seed versions").
      const held = r.reservation;
      return once(
        held.amountNano,
        (used) => {
          usage.used(key.hash, index, used);
          held.settle(used);
        },
        () => held.release(),
      );
    };
    let r: ReserveResult | Promise<ReserveResult>;
    try {
      r = this.deps.spend.reserve(scopes, tokens);
    } catch (err) {
      // unavailable() throws what is not the ledger's outage: either way the caller gets a rejected promise.
      return Promise.resolve().then(() => {
        throw unavailable(err);
      });
    }
    return Promise.resolve(r).then(decide, (err) => {
      throw unavailable(err);
    });
  }

  /**
   * Reserves the attempt's maximum cost (`ask`, sized only when some limit needs it; null: unpriced, nothing to
   * reserve but every limit must have room left) and answers the reservation (null: no limit applies). An attempt on a
   * BYOK credential (`byok`) reserves only in the limits that count BYOK spend (`countsByok`: include_byok_in_limit /
   * include_byok_in_budgets; never credits), so a full shared limit does not refuse what the workspace's own provider
   * account pays for (docs/byok.md). Without a promise when the scopes and the counters answer from memory (a lease
   * with room: the hot path); 402 or 503 are thrown, synchronously or as a rejection.
   */
  admit(key: KeyRow, ask: () => SpendAsk | null, byok = false): Reservation | null | Promise<Reservation | null> {
    const found = this.scopes(key);
    return found instanceof Promise ? found.then((all) => this.admitIn(all, ask, byok)) : this.admitIn(found, ask, byok);
  }

  private admitIn(all: ScopeSpec[], ask: () => SpendAsk | null, byok: boolean): Reservation | null | Promise<Reservation | null> {
    const scopes = byok ? all.filter((s) => s.countsByok) : all;
    if (scopes.length === 0) return null;
    // Sized only now: a request without limits never bounds its prompt.
    const max = ask();
    let r: ReserveResult | Promise<ReserveResult>;
    try {
      // An unpriced request reserves one nano-dollar: admitted while every limit has room left.
      r = this.deps.spend.reserve(scopes, max?.nano ?? 1);
    } catch (err) {
      throw unavailable(err);
    }
    if (!(r instanceof Promise)) return this.decided(r, max);
    return r.then(
      (x) => this.decided(x, max),
      (err) => {
        throw unavailable(err);
      },
    );
  }

  private decided(r: ReserveResult, max: SpendAsk | null): Reservation {
    if (!r.ok) throw this.refusal(r, max);
    return r.reservation;
  }

  /**
   * Charges `nano` ahead in every limit of the key (a video job's most possible cost, held until it ends): reserved
   * exactly — no lease slack, one atomic step across instances — 402 when a limit has no room (`refuse` may word the
   * refusal of a scope; otherwise the usual one), 503 when the shared counters are unreachable; then counted as spent
   * and pushed to the shared counters before this resolves. Answers the scopes charged (for `charge` to correct).
   */
  async chargeAhead(key: KeyRow, nano: number, refuse?: (scope: ScopeSpec, availableNano: number) => HttpError | null): Promise<ScopeSpec[]> {
    const scopes = await this.scopes(key);
    if (scopes.length === 0) return [];
    let r: ReserveResult;
    try {
      r = await this.deps.spend.reserve(scopes, Math.max(1, nano), { exact: true });
    } catch (err) {
      throw unavailable(err);
    }
    if (!r.ok) throw refuse?.(r.scope, r.availableNano) ?? this.refusal(r, nano > 0 ? { nano, tokens: 0, refusal: (a) => `This request requires more credits: it can cost up to $${formatNano(nano)}, but only $${formatNano(a)} can be spent.` } : null);
    r.reservation.settle(nano);
    await this.deps.spend.flush(scopes).catch(() => undefined);
    return scopes;
  }

  /** Spend outside a reservation in these scopes (negative: gives back part of a `chargeAhead`). Never refuses. */
  charge(scopes: ScopeSpec[], nano: number): Promise<void> {
    return this.deps.spend.charge(scopes, nano);
  }

  private refusal(r: Extract<ReserveResult, { ok: false }>, max: SpendAsk | null): HttpError {
    const available = r.availableNano;
    const where = `${r.scope.label}: $${formatNano(available)} left`;
    const priced = max && max.nano !== null ? max.nano : null;
    const message = priced !== null ? `${max!.refusal(available)} (${where})` : `Insufficient room under the ${where}`;
    // `spent`: what the limit has spent or holds (its limit less the room left).
    return new HttpError(402, message, {
      error_type: 'payment_required',
      limit: r.scope.label,
      available: nanoToUsd(available),
      spent: nanoToUsd(Math.max(0, r.scope.limitNano - available)),
      ...(priced !== null ? { requested_max_cost: nanoToUsd(priced) } : {}),
    });
  }
}

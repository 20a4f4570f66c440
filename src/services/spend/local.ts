/**
 * Spend control on one instance (no Redis): in-process counters per scope, seeded from the store the first time a
 * scope is used and then kept here — so the check is exact on its own and reads no database per request. The check
 * and the hold over every scope of a request are one synchronous step.
 */
import { Backoffs } from '../../core/backoff.js';
import { once, SEED_BACKOFF_MS, SeedUnavailableError, type ReserveResult, type ScopeSpec } from './types.js';

interface Counter {
  /** Settled spend in the window (seed + what settled here since). */
  spent: number;
  /** Held by requests in flight. */
  held: number;
  /**
   * The end of its window (ms) for a counter that must not be dropped before: a ledger-only scope's (its count exists
   * nowhere else) or a short window's (`keepUntil`: a token minute). Absent: idle, it may be dropped (re-seeded).
   */
  endsAt?: number;
  /** Added or used since the last trim (a counter without `endsAt` is dropped only when idle through a whole trim period). */
  recent: boolean;
}

/**
 * Counters kept before idle ones are dropped (`trim`; re-seeded on next use — one with a window end only once its
 * window is over). Past it with many still needed, the next trim waits until there are twice as many.
 */
const MAX_COUNTERS = 200_000;

export class LocalLedger {
  private readonly counters = new Map<string, Counter>();
  private readonly seeding = new Map<string, Promise<void>>();
  /** Scopes whose seed failed: the store is read again only once their wait is over (SeedUnavailableError meanwhile). */
  private readonly backoff = new Backoffs(SEED_BACKOFF_MS.min, SEED_BACKOFF_MS.max);
  private trimAt = MAX_COUNTERS;

  /** A new counter (seeded, or a ledger-only scope's, which starts at 0 without a store read). Never trims. */
  private add(s: ScopeSpec, spent: number): void {
    const endsAt = s.ledgerOnly ? s.ledgerOnly.endsAt : s.keepUntil;
    this.counters.set(s.id, endsAt === undefined ? { spent, held: 0, recent: true } : { spent, held: 0, endsAt, recent: true });
  }

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Seeds the scopes not known yet (concurrent first uses share one store read). A seed that fails (the store cannot
   * be read) is tried again only after a back-off; until then the scope's requests are refused at once (503).
   */
  private async ensure(scopes: ScopeSpec[]): Promise<void> {
    for (const s of scopes) {
      if (this.counters.has(s.id)) continue;
      let p = this.seeding.get(s.id);
      if (!p) {
        if (this.backoff.wait(s.id, this.now()) > 0) throw new SeedUnavailableError(s.id);
        p = s.seed().then(
          (spent) => {
            if (!this.counters.has(s.id)) this.add(s, spent);
            this.seeding.delete(s.id);
            this.backoff.succeeded(s.id);
          },
          (err) => {
            this.seeding.delete(s.id);
            this.backoff.failed(s.id, this.now());
            throw new SeedUnavailableError(s.id, err);
          },
        );
        this.seeding.set(s.id, p);
      }
      await p;
    }
  }

  /**
   * Reserves `amountNano` in every scope, or refuses naming the first scope without room. Idle counters are dropped
   * (`trim`) only here, before a request's missing counters are added or seeded — never between a request's seed and
   * its take; a counter missing at its take (dropped while another of its scopes was being seeded) is added again.
   */
  reserve(scopes: ScopeSpec[], amountNano: number): ReserveResult | Promise<ReserveResult> {
    if (scopes.every((s) => this.counters.has(s.id))) return this.take(scopes, amountNano);
    if (this.counters.size >= this.trimAt) this.trim();
    // A ledger-only scope has nothing to read: its counter starts now, synchronously.
    for (const s of scopes) if (s.ledgerOnly && !this.counters.has(s.id)) this.add(s, 0);
    if (scopes.every((s) => this.counters.has(s.id))) return this.take(scopes, amountNano);
    return this.ensure(scopes).then(() => this.take(scopes, amountNano));
  }

  private take(scopes: ScopeSpec[], amount: number): ReserveResult | Promise<ReserveResult> {
    const counters: Counter[] = [];
    for (const s of scopes) {
      const c = this.counters.get(s.id);
      if (c === undefined) return this.reserve(scopes, amount);
      c.recent = true;
      const available = s.limitNano - c.spent - c.held;
      if (available < amount) return { ok: false, scope: s, availableNano: Math.max(0, available) };
      counters.push(c);
    }
    for (const c of counters) c.held += amount;
    return {
      ok: true,
      reservation: once(
        amount,
        (actual) => {
          for (const c of counters) (c.held -= amount), (c.spent += actual);
        },
        () => {
          for (const c of counters) c.held -= amount;
        },
      ),
    };
  }

  /** Spent and held in a scope (null when this instance has not used it). */
  peek(id: string): { spent: number; held: number } | null {
    const c = this.counters.get(id);
    return c ? { spent: c.spent, held: c.held } : null;
  }

  /**
   * Adds spend that did not go through a reservation (negative: a refund of what was charged ahead) to the scopes
   * known here; an unknown one is seeded from the store on first use, which already holds the change.
   */
  charge(scopes: ScopeSpec[], nano: number): void {
    for (const s of scopes) {
      const c = this.counters.get(s.id);
      if (c) c.spent = Math.max(0, c.spent + nano);
    }
  }

  /** Forgets a scope (its limit owner changed in a way the counters cannot follow); the next use re-seeds it. */
  forget(id: string): void {
    const c = this.counters.get(id);
    if (c && c.held === 0) this.counters.delete(id);
  }

  /**
   * Drops idle counters: one with a window end (a request window, a token minute) once its window is over, any other
   * (money: re-seeded from the store on next use) when neither added nor used since the last trim. Then waits until
   * there are twice as many as are left (at least MAX_COUNTERS) before the next: the scans cost O(1) per counter added.
   */
  private trim(): void {
    const now = this.now();
    for (const [id, c] of this.counters) {
      if (c.held === 0 && (c.endsAt === undefined ? !c.recent : c.endsAt <= now)) this.counters.delete(id);
      else c.recent = false;
    }
    this.trimAt = Math.max(MAX_COUNTERS, 2 * this.counters.size);
  }

  /** Counters held (diagnostics, tests). */
  get size(): number {
    return this.counters.size;
  }
}

/** The contract of spend control (docs/spend.md): scopes, reservations, refusals. Amounts in nano-dollars. */
import { HttpError } from '../../core/errors.js';
import type { SpendScopeId } from '../../core/spend.js';

/** One limit a request counts against, with its current limit and how to read what was spent in its window. */
export interface ScopeSpec extends SpendScopeId {
  /** The limit (nano-dollars), read from the key, guardrail, budget or balance at the time of the request. */
  limitNano: number;
  /**
   * What the store says was spent in this scope's window (nano-dollars), including spend recorded but not yet written
   * by this instance. Read once per scope and window (the first request), never per request.
   */
  seed: () => Promise<number>;
  /** BYOK spend counts here too (`include_byok_in_limit` / `include_byok_in_budgets`; docs/byok.md). */
  countsByok?: boolean;
  /**
   * Counted by the ledger alone, never written to the store (request rate limits: docs/spend.md, "Request rate
   * limits"): its seed is 0 and settled amounts are taken as counted by any later seed, so a counter Redis loses
   * starts again from 0 (at most one window's limit more in that window); an in-process counter is kept until
   * `endsAt` (ms, the end of its window) — it is the only count there is — and dropped after.
   */
  ledgerOnly?: { endsAt: number };
  /**
   * The end of a short window (ms; token minutes): an in-process counter is not dropped before it, even idle — seeded
   * again mid-window it would start from the store's count, which may lag what the window used (tokens.ts).
   */
  keepUntil?: number;
}

export interface Reservation {
  /** Nano-dollars held. */
  readonly amountNano: number;
  /** The request ended and cost `actualNano`: that much is spent in every scope, the rest of the hold is free again. Once. */
  settle(actualNano: number): void;
  /** The request failed before costing anything: the whole hold is free again. Once. */
  release(): void;
}

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  /** Refused: `scope` has only `availableNano` left (never negative). */
  | { ok: false; scope: ScopeSpec; availableNano: number };

/** The shared spend counters cannot be reached and the operator chose to fail closed (503). */
export class SpendUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpendUnavailableError';
  }
}

/**
 * The one rule for a limited request whose counters cannot be read (fail closed): the ledger's SpendUnavailableError
 * becomes 503 `spend_unavailable`; any other error is thrown on. `message` names the limits that could not be checked:
 * rate limits say so in their own words (`Rate limits cannot be checked …`, the 503 documented beside their 429);
 * spending limits keep the error's own, which tells an unreachable Redis from unreadable spend records.
 */
export function unavailable(err: unknown, message?: string): HttpError {
  if (err instanceof SpendUnavailableError) return new HttpError(503, message ?? err.message, { error_type: 'spend_unavailable' });
  throw err;
}

/**
 * A scope's seed cannot read the store (a database outage): the request gets 503 like an unreachable Redis. After a
 * failed read the scope's seed waits (200 ms doubling to 5 s, core/backoff.ts) before the store is asked again;
 * meanwhile its requests get this at once, without a read.
 */
export class SeedUnavailableError extends SpendUnavailableError {
  constructor(
    readonly scopeId: string,
    override readonly cause?: unknown,
  ) {
    super('Spending limits cannot be checked right now (the spend records cannot be read); try again shortly');
    this.name = 'SeedUnavailableError';
  }
}

/** How long a scope whose seed failed waits before the store is read again: doubling from the first to the second, reset by a success. */
export const SEED_BACKOFF_MS = { min: 200, max: 5_000 } as const;

/** A reservation that settles or releases once; later calls are ignored. */
export function once(amountNano: number, settle: (actualNano: number) => void, release: () => void): Reservation {
  let done = false;
  return {
    amountNano,
    settle(actual) {
      if (done) return;
      done = true;
      settle(Math.max(0, Math.round(actual)));
    },
    release() {
      if (done) return;
      done = true;
      release();
    },
  };
}

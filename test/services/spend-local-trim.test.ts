/**
 * The local ledger's trim (src/services/spend/local.ts; docs/spend.md): past 200,000 counters idle ones are dropped —
 * never a counter a request is about to take (it was a TypeError, HTTP 500), never a window that is not over (a
 * request window, a token minute: dropped mid-window it would start again at 0), and windows end by the gateway's
 * clock, not the machine's.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/core/errors.js';
import { RateLimiter } from '../../src/services/rate-limits.js';
import { SpendGate } from '../../src/services/spend/gate.js';
import { SpendService, type ReserveResult, type ScopeSpec } from '../../src/services/spend/index.js';
import { LocalLedger } from '../../src/services/spend/local.js';
import type { KeyRow } from '../../src/store/types.js';

const FULL = 200_000;

/** A ledger-only scope (a request window) ending at `endsAt`. */
const window = (id: string, endsAt: number): ScopeSpec => ({ id, kind: 'requests', label: 'requests', ttlS: 120, limitNano: 10, seed: async () => 0, ledgerOnly: { endsAt } });

/** `n` request windows counted once each (synchronous: ledger-only counters start without a read). */
function fill(reserve: (s: ScopeSpec[], n: number) => ReserveResult | Promise<ReserveResult>, prefix: string, n: number, endsAt: number): void {
  for (let i = 0; i < n; i++) {
    const r = reserve([window(`${prefix}:${i}`, endsAt)], 1);
    if (r instanceof Promise || !r.ok) throw new Error('filler refused');
    r.reservation.settle(1);
  }
}

function deferred(): { promise: Promise<number>; resolve: (n: number) => void } {
  let resolve!: (n: number) => void;
  const promise = new Promise<number>((r) => (resolve = r));
  return { promise, resolve };
}

describe('local ledger trim', () => {
  it('past 200,000 counters, a newly seeded scope is taken, not dropped before its take (every waiting request gets it)', async () => {
    const ledger = new LocalLedger(() => 1_000);
    fill((s, n) => ledger.reserve(s, n), 'live', FULL, 60_000);
    const key: ScopeSpec = { id: 'key:k:lifetime', kind: 'key', label: 'key limit', ttlS: 0, limitNano: 1_000, seed: async () => 100 };
    const results = await Promise.all([ledger.reserve([key], 300), ledger.reserve([key], 300), ledger.reserve([key], 300), ledger.reserve([key], 300)]);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect(ledger.peek('key:k:lifetime')).toEqual({ spent: 100, held: 900 });
  });

  it("a trim by another request while a request's second scope is being seeded does not drop its first", async () => {
    let clock = 1_000;
    const ledger = new LocalLedger(() => clock);
    const slow = deferred();
    let seeds = 0;
    const a: ScopeSpec = { id: 'key:a', kind: 'key', label: 'key limit', ttlS: 0, limitNano: 1_000, seed: async () => (seeds++, 0) };
    const b: ScopeSpec = { id: 'guardrail:b', kind: 'guardrail', label: 'budget', ttlS: 0, limitNano: 1_000, seed: () => slow.promise };
    fill((s, n) => ledger.reserve(s, n), 'old', FULL - 1, 2_000);
    const pending = ledger.reserve([a, b], 10); // seeds a, then waits for b
    await new Promise((r) => setImmediate(r));
    expect(ledger.peek('key:a')).toEqual({ spent: 0, held: 0 });
    clock = 3_000; // the fillers' windows are over: the next new counter trims
    fill((s, n) => ledger.reserve(s, n), 'new', 1, 60_000);
    expect(ledger.peek('old:0')).toBeNull();
    expect(ledger.peek('key:a')).toEqual({ spent: 0, held: 0 }); // added since the last trim: kept
    // A second trim (another 200,000 counters whose windows end) may drop it, idle: the take seeds it again.
    fill((s, n) => ledger.reserve(s, n), 'more', FULL, 4_000);
    clock = 5_000;
    fill((s, n) => ledger.reserve(s, n), 'next', 1, 60_000);
    expect(ledger.peek('key:a')).toBeNull();
    slow.resolve(0);
    const r = await pending;
    expect(r.ok).toBe(true);
    expect(seeds).toBe(2);
    expect(ledger.peek('key:a')).toEqual({ spent: 0, held: 10 });
    expect(ledger.peek('guardrail:b')).toEqual({ spent: 0, held: 10 });
  });

  it("keeps the current minute's token counter through trims (its seed could start below what the minute used), drops it once the minute is over", async () => {
    let clock = Date.UTC(2024, 0, 1, 12, 0, 10); // 10 s into a minute, long before the machine's clock
    const spend = new SpendService({ now: () => clock });
    // No token usage store: a minute seeded again would start at 0.
    const gate = new SpendGate({ spend, credits: {} as never, budgets: {} as never, source: {} as never, now: () => clock });
    const key = { hash: 'tpm-key', rate_limit_tokens_per_minute: 1_000 } as unknown as KeyRow;
    const first = await gate.reserveTokens(key, () => 900)!;
    first.settle(900);
    // Two trims in this minute, each past 200,000 counters (request windows already over).
    for (const round of [1, 2]) {
      clock += 1_000;
      fill((s, n) => spend.reserve(s, n), `over${round}`, FULL, clock - 1);
      clock += 1_000;
      fill((s, n) => spend.reserve(s, n), `trigger${round}`, 1, clock + 60_000);
    }
    expect(spend.room({ id: 'over1:0' } as ScopeSpec)).toBeNull(); // trimmed
    const refused = await gate.reserveTokens(key, () => 200)!.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(429);
    const last = await gate.reserveTokens(key, () => 100)!;
    expect(last.amountNano).toBe(100);
    last.settle(100);
    // The minute is over: the next trim drops its counter (settled, idle).
    const id = `tokens:tpm-key:minute:${Math.floor(clock / 60_000)}`;
    expect(spend.room({ id, limitNano: 1_000 } as ScopeSpec)).toBe(0);
    clock += 60_000;
    fill((s, n) => spend.reserve(s, n), 'over3', FULL, clock - 1);
    fill((s, n) => spend.reserve(s, n), 'trigger3', 1, clock + 60_000);
    expect(spend.room({ id, limitNano: 1_000 } as ScopeSpec)).toBeNull();
  });

  it("request windows end by the gateway's clock: a clock behind the machine's does not reset a live window at a trim", () => {
    let clock = Date.UTC(2020, 0, 1, 0, 0, 5);
    const limiter = new RateLimiter(null, pino({ level: 'silent' }), () => clock);
    const k = (hash: string) => ({ hash, kind: 'management', rate_limit_requests: 1, rate_limit_interval_s: 60 }) as KeyRow;
    const mine = k('mine');
    expect(limiter.check(mine)).toBeNull();
    for (let i = 0; i <= FULL; i++) expect(limiter.check(k(`other${i}`))).toBeNull(); // the last one trims
    clock += 1_000;
    const again = limiter.check(mine);
    expect(again).toBeInstanceOf(HttpError);
    expect((again as HttpError).status).toBe(429);
  });
});

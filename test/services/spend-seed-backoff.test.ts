/**
 * A seed that cannot read the store (a database outage; docs/spend.md, "When the store cannot be read"): the scope's
 * requests get SpendUnavailableError (503) and the store is read again only after a back-off — 200 ms doubling to 5 s,
 * cleared by a success — not by every request and every 200 ms sync; other scopes keep syncing at the usual period; and
 * once the store answers again the scope is served within the back-off. One instance (local counters) and across
 * instances (Redis leases). Before, every request (one instance) or every sync and request (Redis) read the store.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../helpers.js';
import { SpendService, SpendUnavailableError, type ScopeSpec } from '../../src/services/spend/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scope whose seed reads a store that is down while `down` is true; `reads` counts the reads tried. */
function flakyScope(limitNano: number): { spec: ScopeSpec; state: { down: boolean; reads: number } } {
  const state = { down: false, reads: 0 };
  const spec: ScopeSpec = {
    id: `key:${randomUUID()}:lifetime`,
    kind: 'key',
    label: 'key limit',
    ttlS: 3_600,
    limitNano,
    seed: async () => {
      state.reads++;
      await sleep(2);
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return 0;
    },
  };
  return { spec, state };
}

/** Reserves `amount` every 10 ms for `ms`: how many were refused as unavailable (503), and any other outcome. */
async function hammer(spend: SpendService, spec: ScopeSpec, amount: number, ms: number): Promise<{ unavailable: number; other: number }> {
  const out = { unavailable: 0, other: 0 };
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await spend.reserve([spec], amount);
      out.other++;
      if (r.ok) r.reservation.settle(amount);
    } catch (err) {
      if (err instanceof SpendUnavailableError) out.unavailable++;
      else throw err;
    }
    await sleep(10);
  }
  return out;
}

/** Reserves until admitted (every 20 ms): ms it took. */
async function untilServed(spend: SpendService, spec: ScopeSpec, amount: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      const r = await spend.reserve([spec], amount);
      if (r.ok) {
        r.reservation.settle(amount);
        return Date.now() - t0;
      }
    } catch (err) {
      if (!(err instanceof SpendUnavailableError)) throw err;
    }
    if (Date.now() - t0 > 15_000) throw new Error('not served within 15 s of the store coming back');
    await sleep(20);
  }
}

describe('a seed whose store read fails', () => {
  it('one instance: refused at once (503) while waiting; at most a few reads in 3 s of requests every 10 ms; served again within the back-off', { timeout: 30_000 }, async () => {
    const spend = new SpendService();
    const { spec, state } = flakyScope(1_000_000);
    state.down = true;
    const during = await hammer(spend, spec, 1_000, 3_000);
    // Reads at about 0, 0.2, 0.6, 1.4 and 3.0 s: 5 (one more on a slow machine); before, one per request (~250).
    expect(during.other).toBe(0);
    expect(during.unavailable).toBeGreaterThan(100);
    expect(state.reads).toBeGreaterThanOrEqual(3);
    expect(state.reads).toBeLessThanOrEqual(6);
    state.down = false;
    const readsBefore = state.reads;
    // The wait is at most 3.2 s now (at most 5 s ever).
    expect(await untilServed(spend, spec, 1_000)).toBeLessThanOrEqual(5_000);
    expect(state.reads).toBe(readsBefore + 1);
    // Seeded: no further read.
    await hammer(spend, spec, 1_000, 200);
    expect(state.reads).toBe(readsBefore + 1);
  });

  describe('across instances (Redis leases)', () => {
    let redis: Redis;
    beforeAll(async () => {
      redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    });
    afterAll(async () => redis?.quit());

    it('the lost counter is read again after a back-off, by requests and syncs alike; other scopes keep syncing; served again within the back-off', { timeout: 30_000 }, async () => {
      const prefix = `gwtest:seedbackoff:${randomUUID()}`;
      const spend = new SpendService({ redis: new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }), ledger: { prefix, syncMs: 200 } });
      try {
        // Reservations of half the limit: the lease takes no slack, so every request needs a trip to Redis.
        const flaky = flakyScope(1_000_000);
        const healthy = flakyScope(1_000_000);
        for (const s of [flaky, healthy]) {
          const r = await spend.reserve([s.spec], 500_000);
          expect(r.ok).toBe(true);
          if (r.ok) r.reservation.settle(1_000);
        }
        await spend.flush([flaky.spec, healthy.spec]);
        // Redis loses the flaky scope's counter while the store is down.
        await redis.del(`${prefix}:spent:${flaky.spec.id}`, `${prefix}:ver:${flaky.spec.id}`, `${prefix}:hold:${flaky.spec.id}`);
        flaky.state.down = true;
        const readsBefore = flaky.state.reads;
        // The healthy scope settles spend during the outage: pushed by the usual sync, not held back.
        const h = await spend.reserve([healthy.spec], 1_000);
        const pushedBy = Date.now() + 1_000;
        if (h.ok) h.reservation.settle(1_000);
        let healthyPushed = false;
        const watch = (async () => {
          while (!healthyPushed && Date.now() < pushedBy) {
            healthyPushed = Number(await redis.get(`${prefix}:spent:${healthy.spec.id}`)) === 2_000;
            if (!healthyPushed) await sleep(20);
          }
        })();
        const during = await hammer(spend, flaky.spec, 500_000, 3_000);
        await watch;
        expect(healthyPushed).toBe(true);
        expect(during.other).toBe(0);
        expect(during.unavailable).toBeGreaterThan(100);
        // Requests every 10 ms and syncs every 200 ms, 3 s: about 5 reads (6 on a slow machine); before, ~15 from the
        // syncs alone plus one per request.
        const reads = flaky.state.reads - readsBefore;
        expect(reads).toBeGreaterThanOrEqual(3);
        expect(reads).toBeLessThanOrEqual(6);
        flaky.state.down = false;
        expect(await untilServed(spend, flaky.spec, 500_000)).toBeLessThanOrEqual(5_000);
        // The counter started from the seed (0) and holds what was settled since: nothing lost, nothing twice.
        await spend.flush([flaky.spec]);
        expect(Number(await redis.get(`${prefix}:spent:${flaky.spec.id}`))).toBe(500_000);
      } finally {
        await spend.close();
      }
    });
  });
});

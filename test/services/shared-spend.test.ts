/**
 * The shared (Redis) counters behind spending limits across instances: unwritten spend is added and taken out again
 * once written; a settle never takes out more than this instance added (an add lost while Redis was unreachable must
 * not leave the counter below zero); the atomic admit counts every instance's requests in flight.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SharedSpend } from '../../src/services/shared-spend.js';
import { REDIS_URL } from '../helpers.js';

const log = pino({ level: 'silent' });
const spends: SharedSpend[] = [];
const make = async () => {
  const s = new SharedSpend(REDIS_URL, log);
  spends.push(s);
  await s.ready();
  return s;
};
afterAll(async () => {
  for (const s of spends) await s.close();
});
const settleSoon = () => new Promise((r) => setTimeout(r, 50));

describe('shared spend (Redis)', () => {
  it('adds unwritten spend and takes it out once written, never below zero', async () => {
    const a = await make();
    const b = await make();
    const hash = randomBytes(32).toString('hex');
    a.add(hash, 0.25);
    b.add(hash, 0.5);
    await settleSoon();
    expect(await a.pending([hash])).toBeCloseTo(0.75, 12);
    await a.settle(new Map([[hash, 0.25]]));
    expect(await b.pending([hash])).toBeCloseTo(0.5, 12);
    // A settle for spend this instance never managed to add takes nothing out.
    await a.settle(new Map([[hash, 1]]));
    expect(await b.pending([hash])).toBeCloseTo(0.5, 12);
    await b.settle(new Map([[hash, 0.5]]));
    expect(await a.pending([hash])).toBeCloseTo(0, 12);
  });

  it('admits against stored + pending spend + every instance in flight at the average cost, atomically', async () => {
    const a = await make();
    const b = await make();
    const hash = randomBytes(32).toString('hex');
    // Limit 1.0, stored 0.4, average 0.2: in flight 0, 1, 2 pass (0.4, 0.6, 0.8), the 4th (1.0) does not.
    const got = await Promise.all([a, b, a, b].map((s) => s.admit(hash, 0.4, 1, 0.2)));
    expect(got.filter((r) => r.admitted)).toHaveLength(3);
    a.release(hash, 0.2);
    await settleSoon();
    expect((await b.admit(hash, 0.4, 1, null)).admitted).toBe(true);
  });

  it('while Redis is unreachable, reads fail at once (callers then count this instance only)', async () => {
    const down = new SharedSpend('redis://127.0.0.1:1', log);
    spends.push(down);
    const t0 = Date.now();
    await expect(down.pending(['x'])).rejects.toThrow();
    await expect(down.admit('x', 0, 1, null)).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(1000);
    down.add('x', 1);
    await down.settle(new Map([['x', 1]])); // nothing thrown, nothing owed that was never added
  });
});

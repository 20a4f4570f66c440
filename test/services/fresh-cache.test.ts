/** services/fresh-cache.ts: the TTL-and-bus cache the workspace, preset and workspace-budget services share. */
import { describe, expect, it } from 'vitest';
import { FreshCache } from '../../src/services/fresh-cache.js';
import { LocalBus } from '../../src/services/invalidation.js';

function counting<V>(values: V[]) {
  let i = 0;
  const load = async () => values[Math.min(i++, values.length - 1)]!;
  return { load, reads: () => i };
}

describe('FreshCache', () => {
  it('serves a value for ttlMs after it was read, then reads it again', async () => {
    let t = 1_000;
    const c = new FreshCache<string>({ ttlMs: 100, now: () => t });
    const { load, reads } = counting(['a', 'b']);
    expect(c.peek('k')).toBeUndefined();
    expect(await c.get('k', load)).toBe('a');
    t += 99;
    expect(c.peek('k')).toBe('a');
    expect(await c.get('k', load)).toBe('a');
    expect(reads()).toBe(1);
    t += 1; // exactly ttlMs old: stale
    expect(c.peek('k')).toBeUndefined();
    expect(await c.get('k', load)).toBe('b');
    expect(reads()).toBe(2);
  });

  it('keeps null as a value (a row that does not exist is cached too)', async () => {
    const c = new FreshCache<string | null>({ ttlMs: 100, now: () => 0 });
    const { load, reads } = counting<string | null>([null]);
    expect(await c.get('k', load)).toBeNull();
    expect(c.peek('k')).toBeNull();
    expect(await c.get('k', load)).toBeNull();
    expect(reads()).toBe(1);
  });

  it('drops a key when one of its kinds is announced on the bus, and only then', async () => {
    const bus = new LocalBus();
    const c = new FreshCache<number>({ ttlMs: 60_000, now: () => 0, bus, kinds: ['workspace', 'workspace_budget'] });
    await c.get('w1', async () => 1);
    await c.get('w2', async () => 2);
    bus.publish('preset', 'w1'); // another kind: kept
    bus.publish('workspace', 'w3'); // another key: kept
    expect(c.peek('w1')).toBe(1);
    bus.publish('workspace_budget', 'w1');
    expect(c.peek('w1')).toBeUndefined();
    expect(c.peek('w2')).toBe(2);
    c.delete('w2');
    expect(c.peek('w2')).toBeUndefined();
  });

  it('keeps nothing when the load fails', async () => {
    const c = new FreshCache<number>({ ttlMs: 60_000, now: () => 0 });
    await expect(c.get('k', async () => { throw new Error('store down'); })).rejects.toThrow('store down');
    expect(c.peek('k')).toBeUndefined();
    expect(await c.get('k', async () => 7)).toBe(7);
  });

  it('starts over past maxEntries instead of growing without end', async () => {
    const c = new FreshCache<number>({ ttlMs: 60_000, now: () => 0, maxEntries: 3 });
    for (let i = 0; i < 3; i++) await c.get(`k${i}`, async () => i);
    expect(c.peek('k2')).toBe(2);
    await c.get('k0', async () => 99); // present: no reset, still the cached value
    expect(c.peek('k0')).toBe(0);
    await c.get('k3', async () => 3); // a fourth key: the map starts over with it
    expect(c.peek('k0')).toBeUndefined();
    expect(c.peek('k3')).toBe(3);
  });
});

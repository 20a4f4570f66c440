/**
 * The pacing of young-generation collections by request-body bytes (services/body-collections.ts): one collection
 * each time the threshold has been read since the last, none when turned off, and V8's own minor collection reachable
 * without exposing `gc` to the program.
 */
import { describe, expect, it } from 'vitest';
import { BodyCollections, bodyCollections, minorCollection } from '../../src/services/body-collections.js';
import { loadConfig } from '../../src/config.js';

describe('BodyCollections', () => {
  it('runs one collection each time the threshold has been read since the last', () => {
    let calls = 0;
    const c = new BodyCollections(1000, () => calls++);
    c.note(400);
    c.note(599);
    expect(calls).toBe(0);
    c.note(1);
    expect(calls).toBe(1);
    // The count starts over after a collection: what was past the threshold is not carried.
    c.note(999);
    expect(calls).toBe(1);
    c.note(5000);
    expect(calls).toBe(2);
    expect(c.collections).toBe(2);
  });

  it('a single body over the threshold runs one collection, not one per threshold it holds', () => {
    let calls = 0;
    const c = new BodyCollections(1024, () => calls++);
    c.note(10 * 1024);
    expect(calls).toBe(1);
  });

  it('0 turns it off, and so does a missing collection function', () => {
    let calls = 0;
    const off = bodyCollections(0, () => calls++);
    expect(off.enabled).toBe(false);
    for (let i = 0; i < 100; i++) off.note(1 << 20);
    expect(calls).toBe(0);
    const none = new BodyCollections(1, null);
    expect(none.enabled).toBe(false);
    none.note(10);
    expect(none.collections).toBe(0);
  });

  it('takes V8\'s minor collection without leaving gc on the global object', async () => {
    const gc = minorCollection();
    expect(typeof gc).toBe('function');
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(process.execArgv.includes('--expose-gc'));
    const { PerformanceObserver, constants } = await import('node:perf_hooks');
    const kinds: number[] = [];
    const seen = new Promise<void>((resolve) => {
      const obs = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
        obs.disconnect();
        resolve();
      });
      obs.observe({ entryTypes: ['gc'] });
    });
    gc!();
    await seen;
    expect(kinds[0]).toBe(constants.NODE_PERFORMANCE_GC_MINOR);
    // A context made later does not get `gc` either.
    const { runInNewContext } = await import('node:vm');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it('GATEWAY_BODY_GC_BYTES sets the threshold (default 16 MiB; 0 = off)', () => {
    const base = { GATEWAY_DATABASE_URL: 'sqlite::memory:' };
    expect(loadConfig(base).bodyGcBytes).toBe(16 * 1024 * 1024);
    expect(loadConfig({ ...base, GATEWAY_BODY_GC_BYTES: '0' }).bodyGcBytes).toBe(0);
    expect(loadConfig({ ...base, GATEWAY_BODY_GC_BYTES: '4194304' }).bodyGcBytes).toBe(4194304);
    expect(() => loadConfig({ ...base, GATEWAY_BODY_GC_BYTES: '-1' })).toThrow(/GATEWAY_BODY_GC_BYTES/);
  });
});

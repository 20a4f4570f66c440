/**
 * V8's old-generation growing factor set by `serve` (services/heap-growth.ts, GATEWAY_HEAP_GROWING_PERCENT): the flag
 * for a percentage, nothing for 0, and the operator's own flag (node's command line; Node refuses it in NODE_OPTIONS) left alone.
 */
import { describe, expect, it } from 'vitest';
import { applyHeapGrowth, heapGrowthFlag } from '../../src/services/heap-growth.js';
import { loadConfig } from '../../src/config.js';

describe('heap growth', () => {
  it('a percentage gives V8\'s --heap-growing-percent', () => {
    expect(heapGrowthFlag(100, [])).toBe('--heap-growing-percent=100');
    expect(heapGrowthFlag(35, ['--max-semi-space-size=64'])).toBe('--heap-growing-percent=35');
  });

  it('0 leaves V8\'s own factor', () => {
    expect(heapGrowthFlag(0, [])).toBeNull();
  });

  it('a flag the operator chose on the command line wins, in either spelling', () => {
    expect(heapGrowthFlag(100, ['--heap-growing-percent=30'])).toBeNull();
    expect(heapGrowthFlag(100, ['--max-old-space-size=512', '--heap_growing_percent=50'])).toBeNull();
  });

  it('applyHeapGrowth sets the flag once, or not at all', () => {
    const set: string[] = [];
    expect(applyHeapGrowth(100, (f) => set.push(f), [])).toBe('--heap-growing-percent=100');
    expect(applyHeapGrowth(0, (f) => set.push(f), [])).toBeNull();
    expect(applyHeapGrowth(100, (f) => set.push(f), ['--heap-growing-percent=10'])).toBeNull();
    expect(set).toEqual(['--heap-growing-percent=100']);
  });

  it('GATEWAY_HEAP_GROWING_PERCENT: default 100, 0 to 1000', () => {
    const base = { GATEWAY_DATABASE_URL: 'sqlite::memory:' };
    expect(loadConfig(base).heapGrowingPercent).toBe(100);
    expect(loadConfig({ ...base, GATEWAY_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ ...base, GATEWAY_HEAP_GROWING_PERCENT: '250' }).heapGrowingPercent).toBe(250);
    expect(() => loadConfig({ ...base, GATEWAY_HEAP_GROWING_PERCENT: '-1' })).toThrow(/GATEWAY_HEAP_GROWING_PERCENT/);
  });
});

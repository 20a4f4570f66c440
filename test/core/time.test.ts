import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/core/time.js';

describe('isoTime', () => {
  it('equals Date#toISOString for every millisecond pattern, across second, day and year boundaries', () => {
    const starts = [Date.parse('2026-11-22T14:29:47.000Z'), Date.parse('2026-12-31T23:59:59.990Z'), 0, Date.parse('2024-02-29T00:00:00.000Z')];
    for (const start of starts) for (let t = start; t < start + 2100; t += 7) expect(isoTime(t)).toBe(new Date(t).toISOString());
    // Out of order (the cache is per second, not monotonic).
    for (const t of [5_000_123, 1_000, 5_000_999, 999]) expect(isoTime(t)).toBe(new Date(t).toISOString());
  });
});

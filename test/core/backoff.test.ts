/** core/backoff.ts: the wait before a failed seed's store is read again (docs/spend.md, "When the store cannot be read"). */
import { describe, expect, it } from 'vitest';
import { Backoffs } from '../../src/core/backoff.js';

describe('Backoffs', () => {
  it('waits 200 ms after a failure, doubling to 5 s, cleared by a success', () => {
    const b = new Backoffs(200, 5_000);
    expect(b.wait('s', 0)).toBe(0);
    const waits = [0, 1, 2, 3, 4, 5, 6].map(() => b.failed('s', 1_000));
    expect(waits).toEqual([200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
    expect(b.wait('s', 1_000)).toBe(5_000);
    expect(b.wait('s', 6_000)).toBe(0);
    expect(b.wait('other', 1_000)).toBe(0);
    b.succeeded('s');
    expect(b.wait('s', 1_000)).toBe(0);
    expect(b.failed('s', 1_000)).toBe(200);
  });

  it('forgets ids whose wait is long over once it keeps too many', () => {
    const b = new Backoffs(200, 5_000, 3);
    for (const id of ['a', 'b', 'c']) b.failed(id, 0);
    expect(b.size).toBe(3);
    b.failed('d', 60_000);
    expect(b.size).toBe(1);
    expect(b.wait('d', 60_000)).toBe(200);
  });
});


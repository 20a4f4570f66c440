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


describe('Backoffs past its id cap', () => {
  it('does not scan every id on each failure while they are all still waiting (pruning is amortized)', () => {
    const b = new Backoffs(200, 5_000, 1_000);
    for (let i = 0; i < 1_000; i++) b.failed(`s${i}`, 0);
    const iterate = Map.prototype[Symbol.iterator];
    let scans = 0;
    Map.prototype[Symbol.iterator] = function (this: Map<unknown, unknown>) {
      scans++;
      return iterate.call(this);
    };
    try {
      // 5,000 more scopes fail within the wait: nothing can be dropped, so a scan per failure would be wasted.
      for (let i = 1_000; i < 6_000; i++) b.failed(`s${i}`, 100);
    } finally {
      Map.prototype[Symbol.iterator] = iterate;
    }
    expect(b.size).toBe(6_000);
    expect(scans).toBeLessThanOrEqual(4); // size doubling: scans at 1,001, 2,002 and 4,004 ids
    // Once their waits are long over, a later prune drops them: only the new ids are left.
    for (let i = 0; i < 8_010; i++) b.failed(`t${i}`, 60_000);
    expect(b.size).toBe(8_010);
  });
});

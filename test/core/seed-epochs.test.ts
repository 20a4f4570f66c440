/**
 * Seed versions (src/services/spend/seed-epochs.ts, docs/spend.md): which of an instance's unpushed settled spend a
 * seed of the shared counter already counts. Pure logic; the Redis side is test/services/spend-reseed.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { addSettled, inSeed, markStored, notInSeed, parseVersion, total, type Segment } from '../../src/services/spend/seed-epochs.js';
import { windowStarts } from '../../src/core/limits.js';

describe('seed epochs', () => {
  it('merges settles of one flush period and seed count, and splits when either changes or a segment is stored', () => {
    const segs: Segment[] = [];
    addSettled(segs, 0, 0, 5);
    addSettled(segs, 0, 0, 7);
    addSettled(segs, 0, 0, 0); // nothing billed: nothing kept
    expect(segs).toEqual([{ mark: 0, cut: 0, amount: 12, storedAt: null }]);
    addSettled(segs, 1, 0, 3); // after a flush started
    addSettled(segs, 1, 1, 4); // after this instance started a seed
    expect(segs.map((s) => s.amount)).toEqual([12, 3, 4]);
    markStored(segs, 1, 1_000); // flush 1 succeeded: what settled before it started is written
    expect(segs.map((s) => s.storedAt)).toEqual([1_000, null, null]);
    addSettled(segs, 1, 1, 2); // merges into the last (not stored) segment
    markStored(segs, 2, 2_000);
    expect(segs.map((s) => s.storedAt)).toEqual([1_000, 2_000, 2_000]);
    expect(total(segs)).toBe(21);
  });

  it("another instance's seed counts what was written before its time (with the clock offset's upper bound)", () => {
    const seg = (storedAt: number | null): Segment => ({ mark: 0, cut: 0, amount: 1, storedAt });
    const view = { me: 'b', mine: null, offset: 5 };
    expect(inSeed(seg(990), '1000:a', view)).toBe(true);
    expect(inSeed(seg(995), '1000:a', view)).toBe(false); // 995 + 5 is not before 1000: in doubt, pushed
    expect(inSeed(seg(null), '1000:a', view)).toBe(false); // not written yet
    expect(inSeed(seg(10), '1000:a', { ...view, offset: null })).toBe(false); // no offset known: pushed
    expect(inSeed(seg(10), 'legacy', view)).toBe(false); // an unreadable version counts nothing of it
  });

  it("this instance's own seed counts everything settled before it started reading, written or not", () => {
    const mine = { ver: '1000:b', cut: 2 };
    const segs: Segment[] = [
      { mark: 0, cut: 1, amount: 3, storedAt: null },
      { mark: 0, cut: 2, amount: 4, storedAt: null },
    ];
    expect(notInSeed(segs, '1000:b', { me: 'b', mine, offset: 0 })).toEqual([segs[1]]);
    // A seed of this instance it does not know the start of (another seed won meanwhile): nothing assumed counted.
    expect(notInSeed(segs, '2000:b', { me: 'b', mine, offset: 0 })).toEqual(segs);
    expect(parseVersion('1000:b')).toEqual({ at: 1000, by: 'b' });
    expect(parseVersion('')).toBeNull();
  });
});

describe('windowStarts', () => {
  it('answers each day its own starts (formatted once a day)', () => {
    const day = 86_400_000;
    const wed = Date.UTC(2026, 10, 25, 12);
    expect(windowStarts(wed)).toEqual({ day: '2026-11-25', week: '2026-11-23', month: '2026-11-01' });
    expect(windowStarts(wed + 1)).toBe(windowStarts(wed));
    expect(windowStarts(wed + 6 * day)).toEqual({ day: '2026-12-01', week: '2026-11-30', month: '2026-12-01' });
    expect(windowStarts(wed)).toEqual({ day: '2026-11-25', week: '2026-11-23', month: '2026-11-01' });
  });
});

/**
 * Seed versions (src/services/spend/seed-epochs.ts, docs/spend.md): which of an instance's unpushed settled spend a
 * seed of the shared counter already counts. Pure logic; the Redis side is test/services/spend-reseed.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { addSettled, compact, dropConfirmed, inSeed, markStored, MAX_SEGMENTS, notInSeed, parseVersion, total, unconfirmed, type Segment } from '../../src/services/spend/seed-epochs.js';
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
    // Still, like any seed, it read the store after its version time: what was written before is counted.
    const written: Segment = { mark: 0, cut: 3, amount: 5, storedAt: 1_500 };
    expect(inSeed(written, '2000:b', { me: 'b', mine, offset: 3 })).toBe(true);
    expect(inSeed(written, '1000:b', { me: 'b', mine, offset: 3 })).toBe(false); // settled after that seed started
    expect(parseVersion('1000:b')).toEqual({ at: 1000, by: 'b' });
    expect(parseVersion('')).toBeNull();
  });
});

describe('seed epochs during a long outage (nothing pushed)', () => {
  /** Every flush period settles something; flushes succeed (the store is up, Redis is not). */
  function outage(flushes: number, seedsEvery = 0): { segs: Segment[]; raw: Segment[] } {
    const segs: Segment[] = [];
    const raw: Segment[] = [];
    let cut = 0;
    for (let f = 0; f < flushes; f++) {
      if (seedsEvery > 0 && f % seedsEvery === seedsEvery - 1) cut++;
      const amount = 1 + (f % 7);
      addSettled(segs, f, cut, amount);
      raw.push({ mark: f, cut, amount, storedAt: null });
      markStored(segs, f + 1, 1_000 * (f + 1));
      compact(segs);
      markStored(raw, f + 1, 1_000 * (f + 1));
    }
    return { segs, raw };
  }

  it('keeps at most MAX_SEGMENTS segments over thousands of flushes, the amount whole', () => {
    const { segs, raw } = outage(5_000, 700);
    expect(raw.length).toBe(5_000);
    expect(segs.length).toBeLessThanOrEqual(MAX_SEGMENTS);
    expect(total(segs)).toBe(total(raw));
  });

  it('never pushes less than the segments unmerged would (in doubt, pushed), and the same for recent seeds', () => {
    const { segs, raw } = outage(3_000, 500);
    const left = (xs: Segment[], ver: string, mine: { ver: string; cut: number } | null) => total(notInSeed(xs, ver, { me: 'b', mine, offset: 3 }));
    for (let at = 0; at <= 3_002_000; at += 9_973) {
      // Another instance's seed at any time, and this instance's own seed at any seed count.
      expect(left(segs, `${at}:a`, null)).toBeGreaterThanOrEqual(left(raw, `${at}:a`, null));
      const cut = Math.floor(at / 500_000);
      expect(left(segs, `${at}:b`, { ver: `${at}:b`, cut })).toBeGreaterThanOrEqual(left(raw, `${at}:b`, { ver: `${at}:b`, cut }));
    }
    // A seed taken during the last MAX_SEGMENTS / 2 flushes, or after the outage: exactly what the segments unmerged say.
    for (let at = (3_000 - MAX_SEGMENTS / 2) * 1_000; at <= 3_010_000; at += 250) expect(left(segs, `${at}:a`, null)).toBe(left(raw, `${at}:a`, null));
  });

  it('merges for free the neighbours no seed can tell apart', () => {
    const segs: Segment[] = [];
    addSettled(segs, 0, 0, 1);
    addSettled(segs, 1, 0, 2);
    addSettled(segs, 2, 1, 4);
    addSettled(segs, 3, 1, 8);
    markStored(segs, 4, 5_000); // one flush's success stamps all four
    compact(segs);
    expect(segs).toEqual([
      { mark: 1, cut: 0, amount: 3, storedAt: 5_000 },
      { mark: 3, cut: 1, amount: 12, storedAt: 5_000 },
    ]);
  });
});

describe('pushed spend a later seed might miss', () => {
  it('is unconfirmed until an answer under the same seed came after its records were written', () => {
    const seg = (storedAt: number | null): Segment => ({ mark: 0, cut: 0, amount: 1, storedAt });
    expect(unconfirmed([], 5, 0)).toBe(false);
    expect(unconfirmed([seg(null)], 5, 10_000)).toBe(true); // not written yet
    expect(unconfirmed([seg(990)], null, 10_000)).toBe(true); // no clock offset known
    expect(unconfirmed([seg(990)], 5, 995)).toBe(true); // 990 + 5 is not before the answer's time
    expect(unconfirmed([seg(990), seg(1_000)], 5, 1_004)).toBe(true);
    expect(unconfirmed([seg(990), seg(1_000)], 5, 1_006)).toBe(false);
    // Once confirmed, a segment is dropped: any later seed reads it from the store.
    const pushed = [seg(990), seg(1_000), seg(null)];
    dropConfirmed(pushed, 5, 1_004);
    expect(pushed).toEqual([seg(1_000), seg(null)]);
    dropConfirmed(pushed, null, 10_000);
    expect(pushed).toHaveLength(2);
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

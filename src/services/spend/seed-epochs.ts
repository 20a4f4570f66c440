/**
 * Which of an instance's settled spend a re-seeded Redis counter already counts (docs/spend.md, "Seed versions").
 * When Redis loses a counter it is seeded again from the store; settled spend an instance had not pushed yet may then
 * be in the seed already (its records were written) or not (written later, or not yet). Each seed has a version,
 * `<redis time ms>:<seeding instance>`, taken before the store is read, and kept beside the counter. An instance keeps
 * its unpushed spend in segments: when each was settled (the recorder's flush count, and this instance's seed count),
 * and when its records were known to be in the store (the local time a later flush ended). A push made under an older
 * version is refused by the script; the instance then keeps only the segments the new seed cannot count:
 *  - its own seed counts everything it had settled before it started reading the store (written, or recorded and
 *    not written yet — both are part of the figure the seed reads);
 *  - another instance's seed counts what was in the store before its version's time: a segment whose records were
 *    written (the flush ended, local time, turned into Redis time with an upper bound of the clock offset) before it.
 * Every doubt keeps the segment (pushed again: the error, if any, is on the refusing side).
 *
 * Pure logic: no I/O.
 */

/** Settled spend (nano-dollars) not pushed yet, from the settles of one recorder flush period and seed count. */
export interface Segment {
  /** The recorder's started flushes when it settled: its records are in the store once a later flush succeeded. */
  mark: number;
  /** This instance's seeds started when it settled (its own seed counts the segments from before). */
  cut: number;
  amount: number;
  /** Local time (ms) by which its records were in the store; null: not known to be written yet. */
  storedAt: number | null;
}

/**
 * The most segments a lease keeps. While Redis cannot be reached nothing is pushed, and each recorder flush starts a
 * segment: past this many, the oldest two are merged (`compact`), so a long outage keeps memory and work bounded.
 */
export const MAX_SEGMENTS = 32;

/**
 * Adds settled spend to a lease's segments (merged into the last one while nothing tells them apart). `storedAt` 0:
 * a ledger-only scope's amount (types.ts `ledgerOnly`), taken as in every seed.
 */
export function addSettled(segs: Segment[], mark: number, cut: number, amount: number, storedAt: 0 | null = null): void {
  if (amount <= 0) return;
  const last = segs.length > 0 ? segs[segs.length - 1] : undefined;
  if (last && last.mark === mark && last.cut === cut && last.storedAt === storedAt) last.amount += amount;
  else {
    segs.push({ mark, cut, amount, storedAt });
    if (segs.length > MAX_SEGMENTS) compact(segs);
  }
}

/** A flush started as number `through` succeeded at `at` (local ms): every segment settled before it is written. */
export function markStored(segs: Segment[], through: number, at: number): void {
  for (const s of segs) if (s.storedAt === null && s.mark < through) s.storedAt = at;
}

/**
 * One segment standing for `a` then `b` (adjacent, `a` the older): the later of each tag — settled as late as `b`,
 * stored only when both were (and as late as the later). Every seed that counts the merged segment counts both parts
 * (`inSeed` only grows with an earlier `cut` or `storedAt`), so a merge can only make a part be pushed that a seed
 * already counts (refusing early), never leave out spend a seed does not count.
 */
function merged(a: Segment, b: Segment): Segment {
  const storedAt = a.storedAt === null || b.storedAt === null ? null : Math.max(a.storedAt, b.storedAt);
  return { mark: Math.max(a.mark, b.mark), cut: Math.max(a.cut, b.cut), amount: a.amount + b.amount, storedAt };
}

/**
 * Bounds a lease's segments (in place; they are in settling order). First, neighbours no seed can tell apart are merged
 * at no cost: the same seed count and stored at the same time (one flush's success stamps all it wrote), or both not
 * stored and settled in the same flush period. Then, while there are more than `cap`, the two oldest are merged:
 * precision is kept for the recent segments, the ones a seed taken during or after an outage may split — every
 * segment stored well before a seed's version time is in it, merged or not.
 */
export function compact(segs: Segment[], cap = MAX_SEGMENTS): void {
  let w = 0;
  for (let r = 0; r < segs.length; r++) {
    const s = segs[r];
    const prev = w > 0 ? segs[w - 1] : undefined;
    if (prev && prev.cut === s.cut && prev.storedAt === s.storedAt && (s.storedAt !== null || prev.mark === s.mark)) segs[w - 1] = merged(prev, s);
    else segs[w++] = s;
  }
  segs.length = w;
  if (segs.length <= cap) return;
  const extra = segs.length - cap;
  let head = segs[0];
  for (let i = 1; i <= extra; i++) head = merged(head, segs[i]);
  segs.splice(0, extra + 1, head);
}

/** The sum of the segments' amounts. */
export function total(segs: readonly Segment[]): number {
  let n = 0;
  for (const s of segs) n += s.amount;
  return n;
}

/** A seed version's time (Redis ms) and seeding instance; null when it cannot be read (an older gateway's counter). */
export function parseVersion(v: string): { at: number; by: string } | null {
  const i = v.indexOf(':');
  if (i <= 0) return null;
  const at = Number(v.slice(0, i));
  return Number.isFinite(at) ? { at, by: v.slice(i + 1) } : null;
}

export interface SeedView {
  /** This instance's id. */
  me: string;
  /** This instance's own seed of version `ver` (the one classified against), when it took it: the seed count it started at. */
  mine: { ver: string; cut: number } | null;
  /** An upper bound of (Redis time − local time), ms; null: unknown (nothing is then assumed written before a seed). */
  offset: number | null;
}

/**
 * Whether the seed of version `ver` already counts a segment (then it must not be pushed under that version). Any seed,
 * this instance's own included, read the store after its version time: a segment written before it is counted. This
 * instance's own seed (`view.mine`, when it is the one of `ver`) also counts every segment settled before it started.
 */
export function inSeed(seg: Segment, ver: string, view: SeedView): boolean {
  const v = parseVersion(ver);
  if (!v) return false;
  if (v.by === view.me && view.mine !== null && view.mine.ver === ver && seg.cut < view.mine.cut) return true;
  return seg.storedAt !== null && view.offset !== null && seg.storedAt + view.offset < v.at;
}

/** The segments a seed of version `ver` does not count: what is left to push under it. */
export function notInSeed(segs: readonly Segment[], ver: string, view: SeedView): Segment[] {
  return segs.filter((s) => !inSeed(s, ver, view));
}

/** Whether a pushed segment's records were certainly written before Redis time `confirmed` (see `unconfirmed`). */
function writtenBefore(s: Segment, offset: number | null, confirmed: number): boolean {
  return s.storedAt !== null && offset !== null && s.storedAt + offset < confirmed;
}

/**
 * Whether spend pushed and applied under a seed (`pushed`) may be missing from a seed taken since `confirmed` (the
 * Redis time of the last answer that found the counter under that seed): some of it not known to be written to the
 * store before then (`offset`: as in SeedView). Once none is, any later seed reads all of it from the store.
 */
export function unconfirmed(pushed: readonly Segment[], offset: number | null, confirmed: number): boolean {
  for (const s of pushed) if (!writtenBefore(s, offset, confirmed)) return true;
  return false;
}

/** Drops (in place) the pushed segments any seed taken after `confirmed` reads from the store. */
export function dropConfirmed(pushed: Segment[], offset: number | null, confirmed: number): void {
  let w = 0;
  for (const s of pushed) if (!writtenBefore(s, offset, confirmed)) pushed[w++] = s;
  pushed.length = w;
}

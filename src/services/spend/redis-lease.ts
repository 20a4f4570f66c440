/**
 * The state the Redis ledger keeps per scope (docs/spend.md, "Across instances"): leases, their pushes not
 * acknowledged yet, and how a lease's push is made and re-seeded.
 */
import { compact, notInSeed, total, type Segment } from './seed-epochs.js';
import type { Reservation, ReserveResult, ScopeSpec } from './types.js';

export interface Lease {
  spec: ScopeSpec;
  /** What this instance holds in Redis for the scope, as far as it knows. */
  granted: number;
  /** Reserved by requests in flight here. */
  held: number;
  /** Settled here and not pushed to the spent counter yet (still part of `granted`). */
  used: number;
  /** `used` by when it settled and when its records reached the store (seed-epochs.ts): Σ amounts = used. */
  segs: Segment[];
  /** The version of the seed the scope's counter started from, as last seen (null: not seen yet). */
  ver: string | null;
  /**
   * Settled spend pushed and applied under `ver` (bounded: seed-epochs.ts `compact`). Should the counter be seeded
   * again, what the new seed does not count (records written after its version time, or not yet) is pushed again.
   */
  pushed: Segment[];
  /** Of `pushed` under an older seed, what the current one does not count: added to the counter with the next push. */
  again: Segment[];
  /** Redis time (ms) of the last answer that found the counter under `ver`. */
  confirmed: number;
  /**
   * This instance's own recent seeds of the scope (the last MAX_OWN_SEEDS): version and the seed count each started at.
   * Two trips of this instance may both find the counter missing and both seed; the first to arrive wins, so the one
   * the counter started from is looked up by version (the last one taken may be the one Redis ignored).
   */
  mine: Array<{ ver: string; cut: number }>;
  /**
   * A push sent whose reply never came (unknown whether the script ran): no longer part of `granted` nor `used`, sent
   * again under the same sequence number until a reply comes — the script applies a number at most once. New settled
   * spend waits in `used` for the next push.
   */
  unacked: Push | null;
  lastUse: number;
  /** The heartbeat lapsed: the hold must be set again (to what is in flight), not adjusted. */
  reset: boolean;
  /** The scope is nearly spent and other instances need room: spare room goes back at once, no slack is taken. */
  squeezed: boolean;
  /** Room left in Redis and other instances' spare room, as of the last sync or refusal. */
  free: number;
  spare: number;
}

/** One push of a lease: settled spend and unused room given back, under this instance's sequence number `seq`. */
export interface Push {
  seq: number;
  push: number;
  give: number;
  /** The settled spend pushed, by segment (sent again under a new seed version: only what that seed does not count). */
  segs: Segment[];
  /** Spend pushed before under an older seed, pushed again (spent counter only, the hold untouched), by segment. */
  again: number;
  againSegs: Segment[];
  /** The seed version it was made under (the epoch sent with it). */
  ver: string;
}

/** A refusal, and the spare lease room other instances held then (room that may come back: worth another try). */
export type Refusal = Extract<ReserveResult, { ok: false }> & { spareNano?: number };

/** How many of its own seeds of a scope a lease remembers (seeds of one instance under way at once, and a margin). */
export const MAX_OWN_SEEDS = 4;

/** Remembers one more seed this instance took of a lease's scope (the oldest beyond MAX_OWN_SEEDS forgotten). */
export function ownSeed(l: Lease, ver: string, cut: number): void {
  l.mine.push({ ver, cut });
  if (l.mine.length > MAX_OWN_SEEDS) l.mine.shift();
}

/** A reservation from the leases: the one object a request's fast path allocates. Settled or released once. */
export class LeaseHold implements Reservation {
  private done = false;

  constructor(
    private readonly ledger: { settled(leases: Lease[], amount: number, actual: number): void },
    private readonly leases: Lease[],
    readonly amountNano: number,
  ) {}

  settle(actualNano: number): void {
    if (this.done) return;
    this.done = true;
    this.ledger.settled(this.leases, this.amountNano, Math.max(0, Math.round(actualNano)));
  }

  release(): void {
    if (this.done) return;
    this.done = true;
    for (const l of this.leases) l.held -= this.amountNano;
  }
}

/**
 * The push a SYNC_ACQUIRE carries for a lease: the one not acknowledged yet, as it was (same sequence number); else its
 * settled spend and (`giveBack`, unless a reset is due) its unused room, made a new push numbered `next()` — out of the
 * lease from now on. Null: nothing to push.
 */
export function pushOf(l: Lease, giveBack: boolean, next: () => number): Push | null {
  if (l.unacked) return l.unacked;
  const back = l.reset || !giveBack ? 0 : Math.max(0, l.granted - l.held - l.used);
  const again = total(l.again);
  if (l.used + back + again === 0) return null;
  l.unacked = { seq: next(), push: l.used, give: back, segs: l.segs, again, againSegs: l.again, ver: l.ver ?? '' };
  l.granted -= l.used + back;
  l.used = 0;
  l.segs = [];
  l.again = [];
  return l.unacked;
}

/**
 * The scope's counter started from seed `ver`, not the one this lease last saw: its settled spend not pushed yet
 * (and a push not acknowledged, never applied under `ver`) is kept only where that seed does not count it
 * (seed-epochs.ts); the room such a push gave back is not given again (at worst held until the lease is set again).
 */
export function reseedLease(l: Lease, ver: string, who: { me: string; offset: number | null }): void {
  if (l.ver === ver) return;
  const view = { me: who.me, mine: l.mine.find((m) => m.ver === ver) ?? null, offset: who.offset };
  const resent = l.unacked ? notInSeed(l.unacked.segs, ver, view) : [];
  // Spend applied under an older seed (pushed, or to be pushed again) that this seed does not count: pushed again.
  l.again = [...notInSeed(l.pushed, ver, view), ...(l.unacked ? notInSeed(l.unacked.againSegs, ver, view) : []), ...notInSeed(l.again, ver, view)];
  compact(l.again);
  l.pushed = [];
  l.unacked = null;
  l.segs = [...resent, ...notInSeed(l.segs, ver, view)];
  compact(l.segs);
  // What the seed counts stays in the lease as room to give back (its hold, when Redis still has it); what the
  // unacknowledged push carried and the seed does not count is settled spend of the lease again.
  l.granted += total(resent);
  l.used = total(l.segs);
  l.ver = ver;
}

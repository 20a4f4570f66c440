/**
 * Per-id back-off after failures (pure; the caller gives the clock): after a failure an id may be tried again only
 * once its wait is over; the wait starts at `minMs`, doubles with every failure up to `maxMs`, and a success clears it.
 * Spend control's seeds use it (docs/spend.md, "When the store cannot be read"): a store that cannot be read is asked
 * again at a bounded rate, not by every request and every sync.
 */
export class Backoffs {
  private readonly waits = new Map<string, { until: number; delay: number }>();
  /** Size past which the next failure prunes (`prune`). */
  private pruneAt: number;

  constructor(
    private readonly minMs = 200,
    private readonly maxMs = 5_000,
    /** Ids kept at most; past it, those whose wait is long over are dropped. */
    private readonly maxIds = 10_000,
  ) {
    this.pruneAt = maxIds;
  }

  /** Milliseconds before `id` may be tried again (0: now). */
  wait(id: string, now: number): number {
    const b = this.waits.get(id);
    return b ? Math.max(0, b.until - now) : 0;
  }

  /** A try of `id` failed at `now`: answers the wait before the next one. */
  failed(id: string, now: number): number {
    const b = this.waits.get(id);
    const delay = b ? Math.min(this.maxMs, b.delay * 2) : this.minMs;
    this.waits.set(id, { until: now + delay, delay });
    if (this.waits.size > this.pruneAt) this.prune(now);
    return delay;
  }

  /**
   * Drops the ids whose wait ended more than `maxMs` ago, then waits until there are twice as many ids as are left (at
   * least `maxIds`) before the next scan: with many ids failing at once, each failure costs O(1) amortized, not a scan.
   */
  private prune(now: number): void {
    for (const [k, w] of this.waits) if (w.until + this.maxMs < now) this.waits.delete(k);
    this.pruneAt = Math.max(this.maxIds, 2 * this.waits.size);
  }

  /** A try of `id` succeeded: no wait any more. */
  succeeded(id: string): void {
    this.waits.delete(id);
  }

  /** Ids waiting (diagnostics, tests). */
  get size(): number {
    return this.waits.size;
  }
}

/**
 * Values read from the store and kept in memory so the hot path does not read them per request: each is fresh for
 * `ttlMs` after it was read (by the injected clock), and dropped at once when one of `kinds` is announced for its key
 * on the invalidation bus (every instance hears it; without Redis, another instance's change is seen within the TTL).
 * Bounded: past `maxEntries` keys it starts over, so a stream of distinct keys cannot grow it without end.
 *
 * Used by the workspace, preset and workspace-budget services, which each kept the same map, clock check and
 * subscription before.
 */
import type { InvalidationBus } from './invalidation.js';

export interface FreshCacheOptions {
  ttlMs: number;
  now: () => number;
  bus?: InvalidationBus;
  /** Bus kinds whose id is this cache's key. */
  kinds?: readonly string[];
  maxEntries?: number;
}

export class FreshCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private readonly maxEntries: number;

  constructor(private readonly opts: FreshCacheOptions) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    const kinds = opts.kinds;
    if (opts.bus && kinds && kinds.length > 0) {
      opts.bus.subscribe((kind, id) => {
        if (kinds.includes(kind)) this.entries.delete(id);
      });
    }
  }

  /** The value when cached and fresh (no await); undefined: ask `get`. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    return hit !== undefined && this.opts.now() - hit.at < this.opts.ttlMs ? hit.value : undefined;
  }

  /** The value from memory when fresh; otherwise `load`ed, kept and returned (a failed load keeps nothing). */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined && this.opts.now() - hit.at < this.opts.ttlMs) return hit.value;
    const value = await load();
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, { value, at: this.opts.now() });
    return value;
  }

  /** Drops one key on this instance (a change made here; the caller publishes it for the others). */
  delete(key: string): void {
    this.entries.delete(key);
  }
}

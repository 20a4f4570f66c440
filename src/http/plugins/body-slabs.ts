/**
 * Large request bodies copied into reused slabs (issue 18: megabyte bodies). Node's HTTP parser hands every socket read
 * over as a fresh Buffer: ~1 MB of ArrayBuffer memory per 1 MB request. Kept until the request is answered (a fallback
 * may resend them), the reads of the requests in flight survive young collections, are promoted, and only a full
 * collection frees them; V8 counts that external memory against the old generation's limit, so it is what started the
 * gateway's full collections (each marking its whole ~35 MB heap; docs/benchmark.md). Copied into slabs at once, the
 * reads die young (a scavenge frees them) and the slabs, allocated once, are reused from one request to the next.
 *
 * A lease returns its slabs to the pool only when `release` is called (the route's handler is done: every attempt has
 * settled) and nothing may still read them: no holder asked to `keep` them (I/O logging, which reads the conversation
 * after the answer), and no upstream write of them may still be pending (`upstreamSettled`). Any other end — a lease
 * never released, a kept one, a client gone — lets the slabs go to the garbage collector instead: never reused while
 * something may read them. Core code checks `gone` before reading lent bytes (core/lazy-body.ts `BytesOwner`).
 */
import type { BytesOwner } from '../../core/lazy-body.js';

/** Bytes per slab: a body takes ceil(length / SLAB_BYTES) of them. */
export const SLAB_BYTES = 256 * 1024;

/** The most bytes of free slabs kept for reuse (64 MiB: 16 requests of 4 MiB in flight). */
export const POOL_MAX_BYTES = 64 * 1024 * 1024;

const free: Buffer[] = [];

/** Slabs in the pool now, and how many were made since start (tests and the benchmark read them). */
export const slabStats = { made: 0, reused: 0, recycled: 0, dropped: 0 };

export function freeSlabs(): number {
  return free.length;
}

function takeSlab(): Buffer {
  const s = free.pop();
  if (s) {
    slabStats.reused++;
    return s;
  }
  slabStats.made++;
  return Buffer.allocUnsafeSlow(SLAB_BYTES);
}

/** One request body's slabs: written in order, read as views (`parts`), given back once by `release`. */
export class BodyLease implements BytesOwner {
  private slabs: Buffer[] = [];
  /** Bytes written into the last slab. */
  private used = SLAB_BYTES;
  private views: Buffer[] | null = null;
  private released = false;
  /** The slabs went back to the pool: the views may hold another request's bytes (BytesOwner). */
  gone = false;
  private kept = false;
  /** Upstream writes of the lent bytes that may still be pending (see `lend`). */
  private pending = 0;

  /** Copies `chunk` after the bytes written so far. */
  write(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.used === SLAB_BYTES) {
        this.slabs.push(takeSlab());
        this.used = 0;
      }
      const n = Math.min(SLAB_BYTES - this.used, chunk.length - at);
      this.slabs[this.slabs.length - 1].set(chunk.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
    }
    this.views = null;
  }

  /** The bytes written, as one view per slab (valid until `release`). */
  parts(): Buffer[] {
    if (!this.views) this.views = this.slabs.map((s, i) => (i === this.slabs.length - 1 ? s.subarray(0, this.used) : s));
    return this.views;
  }

  /** Something reads the bytes after the handler is done: they are never given back to the pool. */
  keep(): void {
    this.kept = true;
  }

  /**
   * An upstream request is about to write the lent bytes: the returned function is called once that request can no
   * longer write them (its body sent and its answer begun, or it failed or was aborted). One that did not see its
   * body sent before its answer began passes false: its connection may still hold unsent bytes, so the slabs are kept.
   */
  lend(): (settledCleanly: boolean) => void {
    this.pending++;
    let done = false;
    return (clean) => {
      if (done) return;
      done = true;
      this.pending--;
      if (!clean) this.kept = true;
      if (this.pending === 0 && this.released) this.giveBack();
    };
  }

  /** The handler is done with the body: the slabs go back to the pool once no upstream write may read them. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.pending === 0) this.giveBack();
  }

  private giveBack(): void {
    const slabs = this.slabs;
    this.slabs = [];
    this.views = null;
    if (this.kept) {
      slabStats.dropped += slabs.length;
      return;
    }
    this.gone = true;
    for (const s of slabs) {
      if ((free.length + 1) * SLAB_BYTES > POOL_MAX_BYTES) slabStats.dropped++;
      else {
        free.push(s);
        slabStats.recycled++;
      }
    }
  }
}

/**
 * Large request bodies copied into reused slabs (issue 18: megabyte bodies). Node's HTTP parser hands every socket read
 * over as a fresh Buffer: ~1 MB of ArrayBuffer memory per 1 MB request. Kept until the request is answered (a fallback
 * may resend them), the reads of the requests in flight survive young collections, are promoted, and only a full
 * collection frees them; V8 counts that external memory against the old generation's limit, so it is what started the
 * gateway's full collections (each marking its whole ~35 MB heap; docs/benchmark.md). Copied into slabs at once, the
 * reads die young (a scavenge frees them) and the slabs, allocated once, are reused from one request to the next.
 *
 * A lease gives its slabs back to the pool only when `release` was called (the route's handler is done: every attempt
 * has settled) and nothing may still read them: no holder asked to `keep` them (I/O logging reads the conversation
 * after the answer), and every upstream request that wrote them finished handing them to the kernel (`lentBody`).
 * Any other end — a lease never released, a kept one, an upstream write cut short — leaves the slabs to the garbage
 * collector: never reused while something may read them. Code reading lent bytes checks `gone` first
 * (core/lazy-body.ts `BytesOwner`). No I/O here: memory only.
 */
import type { BytesOwner } from './lazy-body.js';

/** Bytes per slab: a body takes ceil(length / SLAB_BYTES) of them. */
export const SLAB_BYTES = 256 * 1024;

/** The most bytes of free slabs kept for reuse (64 MiB: e.g. 16 requests of 4 MiB in flight). */
export const POOL_MAX_BYTES = 64 * 1024 * 1024;

const free: Buffer[] = [];

/** Each slab in use → the lease holding it (`lentBody` finds a body's lease from its parts). */
const lenders = new WeakMap<ArrayBufferLike, BodyLease>();

/** Counters: slabs allocated, taken from the pool, given back to it, and left to the collector. */
export const slabStats = { made: 0, reused: 0, recycled: 0, dropped: 0 };

/** Free slabs in the pool now. */
export function freeSlabs(): number {
  return free.length;
}

/** One request body's slabs: written in order, read as views (`parts`), given back once (`release`). */
export class BodyLease implements BytesOwner {
  private slabs: Buffer[] = [];
  /** Bytes written into the last slab. */
  private used = SLAB_BYTES;
  private views: Buffer[] | null = null;
  private released = false;
  private kept = false;
  /** Upstream requests writing the bytes now (`lend`). */
  private pending = 0;
  /** The slabs went back to the pool: the views may hold another request's bytes. */
  gone = false;

  /** Copies `chunk` after the bytes written so far. */
  write(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.used === SLAB_BYTES) {
        const slab = free.pop() ?? null;
        if (slab) slabStats.reused++;
        else slabStats.made++;
        const s = slab ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
        lenders.set(s.buffer, this);
        this.slabs.push(s);
        this.used = 0;
      }
      const n = Math.min(SLAB_BYTES - this.used, chunk.length - at);
      this.slabs[this.slabs.length - 1].set(chunk.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
    }
    this.views = null;
  }

  /** The bytes written, one view per slab (valid until the slabs are given back). */
  parts(): Buffer[] {
    if (!this.views) this.views = this.slabs.map((s, i) => (i === this.slabs.length - 1 ? s.subarray(0, this.used) : s));
    return this.views;
  }

  /** Something reads the bytes after the handler is done: they are never given back to the pool. */
  keep(): void {
    this.kept = true;
  }

  /**
   * An upstream request is about to write the bytes: the returned function is called once, when it can no longer read
   * them — `true` when every byte reached the kernel, `false` when the write was cut short (the slabs are then kept:
   * a connection might still hold a pointer into them).
   */
  lend(): (handedOver: boolean) => void {
    this.pending++;
    let settled = false;
    return (handedOver) => {
      if (settled) return;
      settled = true;
      this.pending--;
      if (!handedOver) this.kept = true;
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
    for (const s of slabs) lenders.delete(s.buffer);
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

/** The lease whose slabs `parts` include, if any. */
function leaseOf(parts: Buffer[]): BodyLease | null {
  for (const p of parts) {
    const lease = lenders.get(p.buffer);
    if (lease) return lease;
  }
  return null;
}

/**
 * The high-water mark of every upstream socket: providers/http.ts passes it to undici's connector, which otherwise
 * picks its own (64 KiB plain, 16 KiB TLS) and an upgrade could change it. The tail copy below is sized from it.
 */
export const SOCKET_HIGH_WATER_MARK = 64 * 1024;

/**
 * The end of a lent body written as a copy of at least the socket's high-water mark. undici asks for the next part
 * only once the last write returned true (then what is still queued is below the mark) or the socket drained; a copy
 * of at least the mark, written and not waited for, was written at once, and with it every byte before it. So when
 * undici asks past the copy, no slab byte is left in the socket's queue.
 */
const TAIL_BYTES = SOCKET_HIGH_WATER_MARK;

/**
 * An upstream body of `parts` (undici writes an iterable part by part) when some of them are a lease's slabs: the same
 * bytes, lent for the write (`BodyLease.lend`), the last TAIL_BYTES as a copy; null when no part is in a slab.
 * `streamsShareConnection` (HTTP/2): the session may still hold a pointer into written parts after the stream is
 * done, so the slabs are kept (never reused) and the parts go as they are.
 */
export function lentBody(parts: Buffer[], streamsShareConnection: boolean): Iterable<Buffer> | null {
  const lease = leaseOf(parts);
  if (!lease) return null;
  if (streamsShareConnection) {
    lease.keep();
    return null;
  }
  return handOver(parts, lease.lend());
}

function* handOver(parts: Buffer[], settle: (handedOver: boolean) => void): Generator<Buffer> {
  let tailFrom = parts.length;
  let tail = 0;
  while (tailFrom > 0 && tail < TAIL_BYTES) tail += parts[--tailFrom].length;
  let handedOver = false;
  try {
    for (let i = 0; i < tailFrom; i++) yield parts[i];
    yield Buffer.concat(parts.slice(tailFrom), tail);
    handedOver = true;
  } finally {
    settle(handedOver);
  }
}

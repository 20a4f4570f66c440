/**
 * Young-generation collections paced by the request-body bytes read (issue 18; docs/operations.md, "Young collections
 * paced by request bodies").
 *
 * Node's HTTP parser copies every socket read of a body into a fresh Buffer: memory outside V8's heap (ArrayBuffer
 * backing stores) that V8 counts as external memory. V8 starts a full (mark-compact) collection each time external
 * memory has grown 64 MB since the last one, and a full collection marks the whole live heap — the gateway's is ~35 MB
 * of loaded code and data, ~50 ms of CPU a time, four times the bare proxy's. A young-generation collection
 * (scavenge) frees the dead reads just as well (their small JSArrayBuffer objects die young) and costs only what is
 * alive in the young generation; but with the large young generation production runs (`--max-semi-space-size=64`)
 * scavenges are rare, since the reads' bytes are not on the heap and do not fill it. So the gateway asks V8 for one
 * itself: each time `everyBytes` of request bodies have been read since the last, one minor collection, which keeps
 * external memory from ever growing 64 MB and the full collections it would start from happening.
 *
 * The collection is V8's own `gc({ type: 'minor' })`, taken without exposing `gc` to the program: `--expose-gc` is
 * set for the creation of one new context, whose global `gc` is kept, and unset again.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Runs one young-generation collection. */
export type MinorCollection = () => void;

/** Counts request-body bytes and runs a minor collection each time `everyBytes` have been read since the last. */
export class BodyCollections {
  private since = 0;
  /** Minor collections run so far. */
  collections = 0;

  /** `everyBytes` 0 (or no collection function) turns it off: `note` then only returns. */
  constructor(
    readonly everyBytes: number,
    private readonly collect: MinorCollection | null,
  ) {}

  get enabled(): boolean {
    return this.everyBytes > 0 && this.collect !== null;
  }

  /** `bytes` of a request body were read (one call per body, with its length). */
  note(bytes: number): void {
    if (this.everyBytes <= 0 || this.collect === null) return;
    this.since += bytes;
    if (this.since < this.everyBytes) return;
    this.since = 0;
    this.collections++;
    this.collect();
  }
}

let cached: MinorCollection | null | undefined;

/**
 * V8's minor collection as a function, or null where it cannot be had. The process's own `gc` is used when it was
 * started with `--expose-gc`; otherwise the flag is set only while one new context is made, then unset (the flag is read
 * when a context is created, so no other context, and not the program's global, gets `gc`).
 */
export function minorCollection(): MinorCollection | null {
  if (cached !== undefined) return cached;
  let gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc');
    } catch {
      gc = undefined;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  const run = typeof gc === 'function' ? (gc as (options: { type: 'minor' }) => void) : null;
  cached = run ? () => run({ type: 'minor' }) : null;
  return cached;
}

/** The pacer the gateway runs: `everyBytes` from GATEWAY_BODY_GC_BYTES (0 = off); `collect` injectable for tests. */
export function bodyCollections(everyBytes: number, collect?: MinorCollection | null): BodyCollections {
  return new BodyCollections(everyBytes, everyBytes > 0 ? (collect === undefined ? minorCollection() : collect) : null);
}

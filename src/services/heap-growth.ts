/**
 * How far V8 lets the old generation grow past its live size before it starts the next full (mark-compact) collection
 * (issue 18; docs/operations.md, "Old-generation growth").
 *
 * V8 starts marking when the room left under the old generation's limit falls below the young generation's capacity,
 * and in that room it counts the external memory (ArrayBuffer backing stores) allocated since the last full
 * collection. The limit is the live size times a growing factor that V8 derives from how fast the program allocates
 * in the old generation; the gateway's objects die young, so the factor sits near its minimum (×1.1–1.3) and a few MB
 * of external memory are enough to start a collection. A megabyte body is twenty such reads (Node's HTTP parser copies
 * every socket read into a fresh Buffer), so at 1 MB a request the gateway ran a full collection every ~16–20 MB of
 * bodies, each marking its ~35 MB of live code and data (~50 ms of CPU). A fixed factor (`--heap-growing-percent`)
 * gives that room back: at 100 (the limit twice the live size) a third to half as many full collections, for at most
 * one more live size of heap (~35 MB) before the next.
 *
 * Young-generation collections paced by body bytes were tried first and did not help: the reads of requests in flight
 * survive them and are promoted, where only a full collection frees them (docs/benchmark.md).
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flag to set for `percent` (0 = V8's own dynamic factor), or null when nothing is to be set: 0, or the operator
 * chose the flag on node's command line (theirs wins; Node refuses it in NODE_OPTIONS). */
export function heapGrowthFlag(percent: number, execArgv: readonly string[]): string | null {
  if (percent <= 0) return null;
  const chosen = execArgv.some((a) => /--heap[-_]growing[-_]percent/.test(a));
  return chosen ? null : `--heap-growing-percent=${percent}`;
}

/**
 * Sets V8's old-generation growing factor for this process to 1 + `percent`/100 (GATEWAY_HEAP_GROWING_PERCENT), unless
 * 0 or chosen by the operator; takes effect from the next full collection. Returns the flag set, or null.
 */
export function applyHeapGrowth(
  percent: number,
  set: (flag: string) => void = setFlagsFromString,
  execArgv: readonly string[] = process.execArgv,
): string | null {
  const flag = heapGrowthFlag(percent, execArgv);
  if (flag) set(flag);
  return flag;
}

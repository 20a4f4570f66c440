/**
 * Finding the bytes that end or interrupt a JSON string — `"`, `\` and the control characters below 0x20 — in a
 * buffer, 16 bytes at a time (WebAssembly SIMD, built into V8: no binary is downloaded or compiled at install), with a
 * plain loop where WebAssembly SIMD is not available. Used by core/lazy-body.ts to validate large message texts
 * without decoding them to a string. Pure: no I/O.
 */

/**
 * The module, assembled by hand (the WebAssembly binary format; the text form is beside each line). It exports its
 * memory `m` and `find(from, to)`: the index of the first byte in [from, to) that is below 0x20, `"` or `\`, else
 * `to`. Sixty-four bytes are compared a turn; in the turn that holds a hit, the four blocks' bit masks give its index
 * at once (`i64.ctz`), with no byte loop (issue 18: a 1,000-message body meets two hits per message, and a loop of up
 * to 64 bytes after each cost as much as the SIMD pass over the whole megabyte). The last turn may read up to 63 bytes
 * past `to`: the memory keeps 64 bytes beyond the data (`scanner`, `scannerOfParts`), and a hit past `to` gives `to`.
 */
const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const splat = (b: number) => new Array<number>(16).fill(b);
/** The test of 16 bytes at `offset` from $i, set to local `out`: a v128 with 0xff where a byte is special. */
const block16 = (offset: number, out: number) => [
  0x20, 0x00, 0xfd, 0x00, 0x00, ...leb(offset), 0x22, 0x02, // v = v128.load offset=`offset` ($i)
  0x20, 0x04, 0xfd, 0x26, // i8x16.lt_u(v, 0x20…)
  0x20, 0x02, 0x20, 0x05, 0xfd, 0x23, 0xfd, 0x50, // | i8x16.eq(v, '"'…)
  0x20, 0x02, 0x20, 0x06, 0xfd, 0x23, 0xfd, 0x50, // | i8x16.eq(v, backslash…)
  0x21, out, // local.set `out`
];
/** i64 of the bit mask of block local `k` (one bit a byte), shifted left by `shift` bits and or-ed in when `or`. */
const mask = (k: number, shift: number) => [
  0x20, k, 0xfd, 0x64, 0xad, // i64.extend_i32_u(i8x16.bitmask(local k))
  ...(shift ? [0x42, shift, 0x86, 0x84] : []), // << shift, |
];
const CODE = [
  // locals: $v v128 (2), $r i32 (3), the constants (4–6), the four blocks' tests (7–10); params $i = 0, $end = 1
  0x06, 0x01, 0x7b, 0x01, 0x7f, 0x01, 0x7b, 0x01, 0x7b, 0x01, 0x7b, 0x04, 0x7b,
  0xfd, 0x0c, ...splat(0x20), 0x21, 0x04, 0xfd, 0x0c, ...splat(0x22), 0x21, 0x05, 0xfd, 0x0c, ...splat(0x5c), 0x21, 0x06,
  0x20, 0x00, 0x20, 0x01, 0x4f, 0x04, 0x40, 0x20, 0x01, 0x0f, 0x0b, // if (i >= end) return end
  0x03, 0x40, // loop $L: 64 bytes a turn
  ...block16(0, 7), ...block16(16, 8), ...block16(32, 9), ...block16(48, 10),
  0x20, 0x07, 0x20, 0x08, 0xfd, 0x50, 0x20, 0x09, 0xfd, 0x50, 0x20, 0x0a, 0xfd, 0x50, 0xfd, 0x53, // v128.any_true(b7 | b8 | b9 | b10)
  0x04, 0x40, // if: a hit in this turn
  ...mask(7, 0), ...mask(8, 16), ...mask(9, 32), ...mask(10, 48),
  0x7a, 0xa7, 0x20, 0x00, 0x6a, 0x22, 0x03, // r = i + i32.wrap(i64.ctz(mask))
  0x20, 0x01, 0x20, 0x03, 0x20, 0x01, 0x49, 0x1b, 0x0f, // return r < end ? r : end
  0x0b, // end if
  0x20, 0x00, 0x41, 0xc0, 0x00, 0x6a, 0x22, 0x00, 0x20, 0x01, 0x49, 0x0d, 0x00, // br_if $L ((i += 64) < end)
  0x0b, // end loop
  0x20, 0x01, // end
  0x0b, // end function
];

/**
 * `count(from, to)`: the UTF-16 code units that the (valid UTF-8) bytes [from, to) decode to — each byte that is not
 * a continuation byte (10xxxxxx) is one, and a four-byte sequence's lead (11110xxx) one more (a surrogate pair) —
 * 16 bytes a turn (`i8x16.bitmask`, `i32.popcnt`), the last fewer than 16 one by one (reads nothing past `to`).
 */
const COUNT = [
  // locals: $n i32 (2), $c i32 (3), $v v128 (4); params $i = 0, $end = 1
  0x02, 0x02, 0x7f, 0x01, 0x7b,
  0x02, 0x40, 0x03, 0x40, // block $B loop $L
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x20, 0x01, 0x4b, 0x0d, 0x01, // br_if $B (i + 16 > end)
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x04, // v = v128.load ($i)
  0x20, 0x04, 0xfd, 0x0c, ...splat(0xc0), 0xfd, 0x4e, 0xfd, 0x0c, ...splat(0x80), 0xfd, 0x23, 0xfd, 0x64, 0x69, // popcnt(bitmask((v & 0xc0) == 0x80))
  0x20, 0x04, 0xfd, 0x0c, ...splat(0xf0), 0xfd, 0x2c, 0xfd, 0x64, 0x69, // popcnt(bitmask(v >= 0xf0))
  0x6b, 0x21, 0x03, // c = continuations - leads of four
  0x20, 0x02, 0x41, 0x10, 0x6a, 0x20, 0x03, 0x6b, 0x21, 0x02, // n += 16 - c
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x21, 0x00, 0x0c, 0x00, // i += 16; br $L
  0x0b, 0x0b, // end loop, end block
  0x02, 0x40, 0x03, 0x40, // block $B2 loop $L2
  0x20, 0x00, 0x20, 0x01, 0x4f, 0x0d, 0x01, // br_if $B2 (i >= end)
  0x20, 0x00, 0x2d, 0x00, 0x00, 0x21, 0x03, // c = i32.load8_u ($i)
  0x20, 0x02, 0x20, 0x03, 0x41, 0xc0, 0x01, 0x71, 0x41, 0x80, 0x01, 0x47, 0x6a, // n + ((c & 0xc0) != 0x80)
  0x20, 0x03, 0x41, 0xf0, 0x01, 0x4f, 0x6a, 0x21, 0x02, // + (c >= 0xf0) → n
  0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, 0x0c, 0x00, // i += 1; br $L2
  0x0b, 0x0b, // end loop, end block
  0x20, 0x02, // n
  0x0b, // end function
];

const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const name = (s: string) => [s.length, ...Buffer.from(s)];

const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // type 0: (i32, i32) -> i32
  ...section(3, [0x02, 0x00, 0x00]), // functions 0 and 1: type 0
  ...section(5, [0x01, 0x00, 0x01]), // memory 0: 1 page at first, grown as needed
  ...section(7, [0x03, ...name('m'), 0x02, 0x00, ...name('find'), 0x00, 0x00, ...name('count'), 0x00, 0x01]),
  ...section(10, [0x02, ...leb(CODE.length), ...CODE, ...leb(COUNT.length), ...COUNT]),
]);

/** The part of the WebAssembly API used here (the project's `lib` has no DOM types). */
interface WasmMemory {
  buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

interface Finder {
  memory: WasmMemory;
  find: (from: number, to: number) => number;
  count: (from: number, to: number) => number;
}

type Compiled = { api: WasmApi; module: object };

/** An instance of the compiled module (one page of memory), or null when it cannot be made. */
function instantiate(c: Compiled | null): Finder | null {
  try {
    if (!c) return null;
    const { exports } = new c.api.Instance(c.module);
    return { memory: exports.m as WasmMemory, find: exports.find as Finder['find'], count: exports.count as Finder['count'] };
  } catch {
    return null;
  }
}

/** The compiled module, or null where WebAssembly SIMD is not available. */
function compile(): Compiled | null {
  const api = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  try {
    return api && api.validate(MODULE) ? { api, module: new api.Module(MODULE) } : null;
  } catch {
    return null;
  }
}

const compiled = compile();

/** The instance in use: its memory has grown to the largest body it held since it was made (releaseScanMemory). */
let wasm: Finder | null = instantiate(compiled);

/** Whether the SIMD finder is in use (else the plain loop). */
export const simdScan = wasm !== null;

/**
 * The most module memory kept from one body to the next (4 MiB). A WebAssembly memory only grows: after a larger body
 * (`scan`), the instance is replaced by a fresh one of one page, which the next body grows to its own size.
 */
export const KEEP_MEMORY_BYTES = 4 * 1024 * 1024;

/** Bytes of module memory held now (0: no instance). */
export function scannerMemoryBytes(): number {
  return wasm ? wasm.memory.buffer.byteLength : 0;
}

/**
 * After a body was scanned: an instance whose memory grew beyond KEEP_MEMORY_BYTES is replaced by a fresh one of one
 * page (a WebAssembly memory cannot shrink), so one large body does not hold its size for the process's life. Any
 * finder or view of the memory handed out before is invalid afterwards.
 */
export function releaseScanMemory(): void {
  if (wasm && wasm.memory.buffer.byteLength > KEEP_MEMORY_BYTES) wasm = instantiate(compiled);
}

/** The first index in [from, to) of `b` whose byte is below 0x20, `"` or `\`, else `to`. Plain JavaScript. */
export function findSpecialLoop(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = b[i];
    if (c < 0x20 || c === 0x22 || c === 0x5c) return i;
  }
  return to;
}

/** The UTF-16 code units that the valid UTF-8 bytes [from, to) of `b` decode to. Plain JavaScript. */
export function utf16UnitsLoop(b: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = b[i];
    if ((c & 0xc0) !== 0x80) n++;
    if (c >= 0xf0) n++;
  }
  return n;
}

/**
 * The UTF-16 code units that the valid UTF-8 bytes [from, to) of `b` decode to (what `string.length` gives once
 * decoded), without decoding them: through the SIMD module when `b` is the view of its memory that `scannerOfParts`
 * handed out, else a plain loop.
 */
export function utf16Units(b: Uint8Array, from: number, to: number): number {
  if (wasm && b.buffer === wasm.memory.buffer && b.byteOffset === 0) return wasm.count(from, to);
  return utf16UnitsLoop(b, from, to);
}

/**
 * A buffer's bytes made searchable: `find(from, to)` as findSpecialLoop over `bytes`, through the SIMD module when it
 * loaded. The bytes are copied once into the module's memory (a memcpy: far cheaper than decoding them); the copy is
 * valid until the next `scanner` call (one request is scanned at a time: the scan is synchronous).
 */
export function scanner(bytes: Uint8Array): (from: number, to: number) => number {
  const w = bytes.length < 256 ? null : wasm;
  if (!w) return (from, to) => findSpecialLoop(bytes, from, to);
  const need = bytes.length + 64;
  const have = w.memory.buffer.byteLength;
  if (need > have) w.memory.grow(Math.ceil((need - have) / 65536));
  new Uint8Array(w.memory.buffer, 0, bytes.length).set(bytes);
  return w.find;
}

/** `use` with `scanner(bytes)`'s finder (valid only during the call), then releaseScanMemory. */
export function scan<T>(bytes: Uint8Array, use: (find: (from: number, to: number) => number) => T): T {
  try {
    return use(scanner(bytes));
  } finally {
    releaseScanMemory();
  }
}

/**
 * `scanner` of bytes that arrived in parts (a request body's reads): the parts are copied one after the other into the
 * module's memory, so the whole is never assembled in a buffer of its own (issue 18: a second copy of a 1 MB body per
 * request drove the garbage collector). Returns that copy — a view, valid until the next `scanner` or
 * `scannerOfParts` call — with its finder; null where the SIMD module did not load.
 */
export function scannerOfParts(parts: Uint8Array[], length: number): { view: Buffer; find: (from: number, to: number) => number } | null {
  if (!wasm || length < 256) return null;
  const need = length + 64;
  const have = wasm.memory.buffer.byteLength;
  if (need > have) wasm.memory.grow(Math.ceil((need - have) / 65536));
  const view = Buffer.from(wasm.memory.buffer, 0, length);
  let at = 0;
  for (const p of parts) {
    view.set(p, at);
    at += p.length;
  }
  return { view, find: wasm.find };
}

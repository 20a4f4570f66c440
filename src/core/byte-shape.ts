/**
 * The fixed parts of a stream's events, remembered in their bytes (issue 18): an upstream writes its common event — a
 * chat chunk, a Responses delta — with the same bytes around the parts that change (the id, created, model and inert
 * fields; the event and type lines; the closing braces). Once a strict pattern has recognized one such event, its
 * bytes are learned as a `ByteShape`: runs of fixed bytes and, between them, holes of a known kind (a JSON string's
 * characters, a number). A later event is the same kind of event when its bytes have every run exactly and valid
 * holes between them: a comparison of the runs and a scan of the holes' bytes, no pattern. The translated sessions'
 * decoders (the chat, Anthropic and Responses upstreams' `rawDelta`; core/delta-memo.ts) remember their events so; the
 * same-protocol relay's template (providers/openai/chunk-template.ts) compares the same way, with `stringEnd`, over
 * runs of chunks. A shape of one string between two runs — the
 * common case — is matched by `matchText`, which compares the runs as the read's Latin-1 text (fewer instructions on
 * this V8); any other (a Responses delta: sequence numbers, the obfuscation string) by `match`, 8 bytes at a time.
 *
 * The bytes must be valid UTF-8 (the callers check each read): a hole's string bytes are then relayed as they are.
 */
import { hasAt } from './json-scan.js';

/** A hole's kind: the characters of a JSON string (its quotes are in the runs), possibly none, or at least one. */
export const STRING = 0;
export const NONEMPTY_STRING = 1;
/** A JSON number of the form `0|[1-9][0-9]{0,15}` (a sequence number). */
export const COUNT = 2;

/** Whether `b` is one of the characters a JSON string may escape with a backslash alone: `"` `\` `/` b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;
/** Hexadecimal digits (a `\u` escape's four). */
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** A read's bytes as the fast paths scan them: the bytes, a DataView of them, and their Latin-1 text (a char a byte). */
export interface ReadBytes {
  bytes: Buffer;
  view: DataView;
  text: string;
}

/** `bytes` as ReadBytes (its text made now: the patterns run on it). */
export function readBytes(bytes: Buffer): ReadBytes {
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), text: bytes.toString('latin1') };
}

/**
 * A run of bytes as the 8-byte words that `sameRun` compares: each 8 bytes from the start, and the last 8
 * (overlapping the one before when the length is not a multiple of 8). A run shorter than 8 bytes keeps its bytes.
 */
function words(run: Buffer): Float64Array | Uint8Array {
  if (run.length < 8) return Uint8Array.from(run);
  const view = new DataView(run.buffer, run.byteOffset, run.length);
  const n = Math.ceil(run.length / 8);
  const w = new Float64Array(n);
  for (let k = 0; k < n - 1; k++) w[k] = view.getFloat64(8 * k, true);
  w[n - 1] = view.getFloat64(run.length - 8, true);
  return w;
}

/**
 * Whether the `len` bytes at `at` (in bounds) are those of `w` (see `words`), compared 8 at a time as doubles — the
 * widest load JavaScript has. Equal doubles are equal bytes here: the only equal doubles of other bytes are 0 and -0,
 * which need seven zero bytes (JSON text has none); a word that reads as NaN (its last two bytes 0xf0–0xff then 0x7f
 * or 0xff: not in valid UTF-8) equals nothing, so a shape holding one would never match and its events take the patterns.
 */
function sameRun(bytes: Buffer, view: DataView, at: number, w: Float64Array | Uint8Array, len: number): boolean {
  if (len < 8) {
    for (let k = 0; k < len; k++) if (bytes[at + k] !== w[k]) return false;
    return true;
  }
  const last = w.length - 1;
  for (let k = 0; k < last; k++) if (view.getFloat64(at + 8 * k, true) !== w[k]) return false;
  return view.getFloat64(at + len - 8, true) === w[last];
}

/**
 * Where the JSON string's characters from `i` end (its closing quote), -1 when they are not valid (a control byte, an
 * escape that is not JSON) or reach `n`. `counted.chars` is set to the characters the string decodes to, as
 * String.length counts them (core/json-scan.ts jsonStringLength): an escape is one, a 4-byte sequence two (a surrogate
 * pair), a continuation byte none.
 */
export function stringEnd(bytes: Buffer, i: number, n: number, counted: { chars: number }): number {
  let chars = 0;
  for (;;) {
    if (i >= n) return -1;
    const c = bytes[i];
    if (c === 0x22) break;
    if (c === 0x5c) {
      const e = i + 1 < n ? bytes[i + 1] : 0;
      if (e === 0x75) {
        if (i + 5 >= n || HEX[bytes[i + 2]] !== 1 || HEX[bytes[i + 3]] !== 1 || HEX[bytes[i + 4]] !== 1 || HEX[bytes[i + 5]] !== 1) return -1;
        i += 6;
      } else if (SIMPLE_ESCAPE[e] === 1) i += 2;
      else return -1;
      chars++;
      continue;
    }
    if (c < 0x20) return -1;
    if (c < 0x80 || c >= 0xc0) chars += c >= 0xf0 ? 2 : 1;
    i++;
  }
  counted.chars = chars;
  return i;
}

/** Where the number `0|[1-9][0-9]{0,15}` from `i` ends, -1 when there is none (before `n`). */
function countEnd(bytes: Buffer, i: number, n: number): number {
  if (i >= n) return -1;
  const c = bytes[i];
  if (c === 0x30) return i + 1;
  if (c < 0x31 || c > 0x39) return -1;
  const limit = Math.min(i + 16, n);
  for (i++; i < limit; i++) {
    const x = bytes[i];
    if (x < 0x30 || x > 0x39) break;
  }
  return i;
}

/** An event's fixed parts, learned (see the file comment). */
export class ByteShape {
  private readonly runs: Array<Float64Array | Uint8Array>;
  /** The runs as Latin-1 text of their bytes (see `matchText`). */
  private readonly texts: string[];
  private readonly lengths: Int32Array;
  private readonly kinds: Uint8Array;
  /** After a match: where each hole starts and ends (`holes[2k]`, `holes[2k + 1]`), in the matched bytes. */
  readonly holes: Int32Array;
  /** After a match: the characters of the first string hole (see `stringEnd`). */
  chars = 0;
  private readonly counted = { chars: 0 };

  /**
   * From the event of `bytes` from `cuts[0]` to `cuts[cuts.length - 1]` whose holes are `cuts[1]`–`cuts[2]`,
   * `cuts[3]`–`cuts[4]`, …, of the `kinds` given (one a hole): the bytes between them are the runs (any may be empty).
   */
  constructor(bytes: Buffer, cuts: readonly number[], kinds: readonly number[]) {
    const n = kinds.length;
    if (cuts.length !== 2 * n + 2) throw new Error('ByteShape: a hole needs its start and end');
    this.runs = [];
    this.texts = [];
    this.lengths = new Int32Array(n + 1);
    for (let k = 0; k <= n; k++) {
      // A copy: a run does not keep the read alive.
      const run = Buffer.from(bytes.subarray(cuts[2 * k], cuts[2 * k + 1]));
      this.runs.push(words(run));
      this.texts.push(run.toString('latin1'));
      this.lengths[k] = cuts[2 * k + 1] - cuts[2 * k];
    }
    this.kinds = Uint8Array.from(kinds);
    this.holes = new Int32Array(2 * n);
  }

  /**
   * Whether the bytes from `s` (not beyond `n`) are this shape with valid holes: then `holes` and `chars` are set and
   * the end of its last run is returned; else -1.
   */
  match(bytes: Buffer, view: DataView, s: number, n: number): number {
    const runs = this.runs;
    const lengths = this.lengths;
    const kinds = this.kinds;
    const holes = this.holes;
    const last = kinds.length;
    let p = s;
    let first = true;
    for (let k = 0; ; k++) {
      const len = lengths[k];
      if (p + len > n || !sameRun(bytes, view, p, runs[k], len)) return -1;
      p += len;
      if (k === last) return p;
      const kind = kinds[k];
      let e: number;
      if (kind === COUNT) e = countEnd(bytes, p, n);
      else {
        e = stringEnd(bytes, p, n, this.counted);
        if (e === p && kind === NONEMPTY_STRING) return -1;
        if (first) {
          this.chars = this.counted.chars;
          first = false;
        }
      }
      if (e === -1) return -1;
      holes[2 * k] = p;
      holes[2 * k + 1] = e;
      p = e;
    }
  }

  /**
   * `match` of the usual shape — one string between two runs (a chat chunk, an Anthropic delta) — in the read's bytes
   * and their Latin-1 text: the runs are compared as that text, which V8 compares in native code in about half the
   * instructions that `sameRun`'s 8-byte loads take (a chat chunk's 200-byte head: ~570 against ~600–1,100, counted
   * with callgrind), and the string is scanned in the bytes by `stringEnd`, as `match` does (inlined here or called,
   * the relay read 2,860 and 2,883 instructions per chunk: within its run-to-run spread).
   */
  matchText(bytes: Buffer, text: string, s: number, n: number): number {
    const lengths = this.lengths;
    const texts = this.texts;
    const from = s + lengths[0];
    if (from > n || !hasAt(text, s, texts[0])) return -1;
    const i = stringEnd(bytes, from, n, this.counted);
    if (i === -1) return -1;
    if (i === from && this.kinds[0] === NONEMPTY_STRING) return -1;
    const end = i + lengths[1];
    if (end > n || !hasAt(text, i, texts[1])) return -1;
    this.holes[0] = from;
    this.holes[1] = i;
    this.chars = this.counted.chars;
    return end;
  }
}

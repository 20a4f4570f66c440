/**
 * The same-protocol relay's cheapest path (services/chat-relay.ts): once a stream's first plain content chunk has been
 * recognized by the strict patterns of chunk-scan.ts, the chunks after it usually repeat its bytes exactly up to the
 * delta's string and after it (the same id, object, created, model, inert fields, choice head; the same tail). The
 * chunk is learned as a template — its bytes before the string's opening quote and from its closing quote to the
 * event's end — and a later event is relayed when it has both exactly and a valid JSON string between them: two
 * comparisons and a scan of the string's bytes, no pattern, no search for the event's end. Its output is built into a
 * Buffer: our head (`data: `, our prefix, the upstream's bytes up to the quote), the string's bytes, our tail.
 *
 * Anything else (another layout, a change of an inert field, an escape that is not JSON, a control byte, an event
 * cut by the end of the read) is not a match, and the relay's general path reads the event.
 */
import type { PlainChunk } from './chunk-scan.js';

/** Whether `b` is one of the characters a JSON string may escape with a backslash alone: `"` `\` `/` b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;
/** Hexadecimal digits (a `\u` escape's four). */
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

const EMPTY = Buffer.alloc(0);

/**
 * Bytes `from`–`to` of `view` (at least 8) as the 8-byte words that `sameBytes` compares: each 8 bytes from the start,
 * and the last 8 (overlapping the one before when the length is not a multiple of 8). A plain array of doubles, kept
 * in the JavaScript heap: a Float64Array of more than 64 bytes would allocate a backing store of its own, for every
 * stream (its first plain chunk), and the collector would track and free it.
 */
function words(view: DataView, from: number, to: number): number[] {
  const n = Math.ceil((to - from) / 8);
  const w: number[] = [];
  for (let k = 0; k < n - 1; k++) w.push(view.getFloat64(from + 8 * k, true));
  w.push(view.getFloat64(to - 8, true));
  return w;
}

/**
 * Whether the `len` bytes of `view` at `at` (in its bounds) are those of `w` (see `words`), compared 8 at a time as
 * doubles — the widest load JavaScript has. Equal doubles are equal bytes here: the only equal doubles of other bytes
 * are 0 and -0, which need seven zero bytes (JSON text has none); a word that reads as NaN equals nothing, so a
 * template holding one (a byte 0x7f or 0xff in place) never matches and its chunks take the general path.
 */
function sameBytes(view: DataView, at: number, w: number[], len: number): boolean {
  const last = w.length - 1;
  for (let k = 0; k < last; k++) if (view.getFloat64(at + 8 * k, true) !== w[k]) return false;
  return view.getFloat64(at + len - 8, true) === w[last];
}

/**
 * The Buffer a read's output is written into (one per read: the socket keeps what it is given). Grown by doubling
 * when a write would not fit.
 */
export class OutBytes {
  buf: Buffer = EMPTY;
  pos = 0;

  /** `capacity`: the size to allocate at the first write (the read's expected output). */
  constructor(private readonly capacity: number) {}

  /** Room for `n` more bytes. */
  room(n: number): Buffer {
    const need = this.pos + n;
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2, this.capacity));
      this.buf.copy(grown, 0, 0, this.pos);
      this.buf = grown;
    }
    return this.buf;
  }

  /** Text (its UTF-8 bytes). */
  text(s: string): void {
    if (s === '') return;
    this.room(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos);
  }

  /** Bytes `from`–`to` of `src`. */
  bytes(src: Buffer, from: number, to: number): void {
    this.room(to - from);
    this.pos += src.copy(this.buf, this.pos, from, to);
  }

  /** What was written (empty: ''). */
  result(): Buffer | '' {
    return this.pos === 0 ? '' : this.buf.subarray(0, this.pos);
  }
}

/** The result of `ChunkTemplate.match`: the output characters of the chunk (its tokens' estimate). */
export interface TemplateMatch {
  chars: number;
}

/** A stream's plain content chunk, learned (see the file comment). */
export class ChunkTemplate {
  /** The upstream's bytes from the event's start to the string's opening quote, included (as `words`), and their length. */
  private readonly head: number[];
  private readonly headLength: number;
  /** From the string's closing quote to the event's end, its blank line included. */
  private readonly tail: number[];
  private readonly tailLength: number;
  /** What the client gets before the string's characters: `data: `, our prefix, the rest of `head`. */
  private readonly outHead: Buffer;
  /** What the client gets from the closing quote on: the tail without `,"usage":null`, and `}\n\n`. */
  private readonly outTail: Buffer;
  /** The most output bytes per input byte of a matching event (when our bytes are longer than the upstream's). */
  readonly growth: number;
  /** Characters that `plainChunkChars` counts besides the string's (a tool call's framing). */
  private readonly framing: number;
  /** A content string must have a character (an empty one carries no output); a tool call's arguments need not. */
  private readonly nonEmpty: boolean;

  /**
   * From the plain chunk that `plainChunkAt` matched in `buf` (Latin-1 text of the read `bytes`: the same positions),
   * its event from `s` to `end` (after its blank line); `ourData` is `data: ` and our prefix (its bytes), `upLength`
   * the length of `data: ` and the upstream's prefix that it replaces. Built from the read's bytes, without copying
   * any of them to text and back.
   */
  constructor(bytes: Buffer, buf: string, s: number, end: number, at: PlainChunk, ourData: Buffer, upLength: number) {
    // The string token: `{"content":"…"}`, or `{"tool_calls":[{"index":N,"function":{"arguments":"…"}}]}`.
    this.nonEmpty = buf.charCodeAt(at.delta + 2) === 0x63;
    const q0 = this.nonEmpty ? at.delta + 11 : buf.indexOf('"arguments":', at.delta) + 12;
    const q1 = at.deltaEnd - (this.nonEmpty ? 2 : 5);
    // Both are longer than 8 bytes (`words`): `data: {"id":…` and at least `"},"finish_reason":null}]}` and a blank line.
    this.headLength = q0 + 1 - s;
    this.tailLength = end - q1;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.head = words(view, s, q0 + 1);
    this.tail = words(view, q1, end);
    const oh = Buffer.allocUnsafe(ourData.length + q0 + 1 - (s + upLength));
    ourData.copy(oh, 0);
    bytes.copy(oh, ourData.length, s + upLength, q0 + 1);
    this.outHead = oh;
    const t = at.tail - q1;
    const ot = Buffer.allocUnsafe(t + 3);
    bytes.copy(ot, 0, q1, at.tail);
    ot[t] = 0x7d; // }
    ot[t + 1] = 0x0a;
    ot[t + 2] = 0x0a;
    this.outTail = ot;
    this.growth = Math.max(1, (this.outHead.length + this.outTail.length) / (this.headLength + this.tailLength));
    // plainChunkChars counts from 12 characters into the delta to 2 before its end.
    this.framing = q0 + 1 - (at.delta + 12) + (at.deltaEnd - 2 - q1);
  }

  /**
   * Whether the event at `s` of the read (`bytes`; `view`, a DataView of them) is this template with another valid
   * string: then its output is written to `out`, `m.chars` set, and the event's end returned; else -1 (nothing
   * written). The read's bytes must be valid UTF-8 (the caller checks).
   */
  match(bytes: Buffer, view: DataView, s: number, out: OutBytes, m: TemplateMatch): number {
    const n = bytes.length;
    const start = s + this.headLength;
    if (start > n || !sameBytes(view, s, this.head, this.headLength)) return -1;
    let i = start;
    // Characters the string decodes to, as String.length counts them (core/json-scan.ts jsonStringLength): an escape
    // is one, a 4-byte sequence two (a surrogate pair), a continuation byte none.
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
    const end = i + this.tailLength;
    if ((this.nonEmpty && i === start) || end > n || !sameBytes(view, i, this.tail, this.tailLength)) return -1;
    const oh = this.outHead;
    const ot = this.outTail;
    const len = i - start;
    const dst = out.room(oh.length + len + ot.length);
    let p = out.pos;
    dst.set(oh, p);
    p += oh.length;
    if (len > 64) p += bytes.copy(dst, p, start, i);
    else for (let k = start; k < i; k++) dst[p++] = bytes[k];
    dst.set(ot, p);
    out.pos = p + ot.length;
    m.chars = chars + this.framing;
    return end;
  }
}

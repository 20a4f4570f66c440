/**
 * The same-protocol relay's cheapest path (services/chat-relay.ts): once a stream's first plain content chunk has been
 * recognized by the strict patterns of chunk-scan.ts, the chunks after it usually repeat its bytes exactly up to the
 * delta's string and after it (the same id, object, created, model, inert fields, choice head; the same tail). The
 * chunk is learned as a template — its bytes before the string's opening quote and from its closing quote to the
 * event's end, a `ByteShape` (core/byte-shape.ts, the memo the translated decoders keep too) — and a later event is
 * relayed when it has both exactly and a valid JSON string between them: two comparisons and a scan of the string's
 * bytes, no pattern, no search for the event's end. Its output is built into a
 * Buffer: our head (`data: `, our prefix, the upstream's bytes up to the quote), the string's bytes, our tail.
 *
 * Anything else (another layout, a change of an inert field, an escape that is not JSON, a control byte, an event
 * cut by the end of the read) is not a match, and the relay's general path reads the event.
 */
import { ByteShape, NONEMPTY_STRING, STRING } from '../../core/byte-shape.js';
import type { PlainChunk } from './chunk-scan.js';

const EMPTY = Buffer.alloc(0);

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
  /** The upstream's bytes from the event's start to the string's opening quote, the string, the rest (core/byte-shape.ts). */
  private readonly shape: ByteShape;
  /** What the client gets before the string's characters: `data: `, our prefix, the upstream's bytes to the quote. */
  private readonly outHead: Buffer;
  /** What the client gets from the closing quote on: the tail without `,"usage":null`, and `}\n\n`. */
  private readonly outTail: Buffer;
  /** The most output bytes per input byte of a matching event (when our bytes are longer than the upstream's). */
  readonly growth: number;
  /** Characters that `plainChunkChars` counts besides the string's (a tool call's framing). */
  private readonly framing: number;

  /**
   * From the plain chunk that `plainChunkAt` matched in `buf` (Latin-1 text of the read `bytes`), its event from `s`
   * to `end` (after its blank line); `ourData` is `data: ` and our prefix (its bytes), `upLength` the length of
   * `data: ` and the upstream's prefix that it replaces.
   */
  constructor(bytes: Buffer, buf: string, s: number, end: number, at: PlainChunk, ourData: Buffer, upLength: number) {
    // The string token: `{"content":"…"}`, or `{"tool_calls":[{"index":N,"function":{"arguments":"…"}}]}`. A content
    // string must have a character (an empty one carries no output); a tool call's arguments need not.
    const content = buf.charCodeAt(at.delta + 2) === 0x63;
    const q0 = content ? at.delta + 11 : buf.indexOf('"arguments":', at.delta) + 12;
    const q1 = at.deltaEnd - (content ? 2 : 5);
    this.shape = new ByteShape(bytes, [s, q0 + 1, q1, end], [content ? NONEMPTY_STRING : STRING]);
    this.outHead = Buffer.concat([ourData, bytes.subarray(s + upLength, q0 + 1)]);
    this.outTail = Buffer.concat([bytes.subarray(q1, at.tail), Buffer.from('}\n\n')]);
    this.growth = Math.max(1, (this.outHead.length + this.outTail.length) / (q0 + 1 - s + end - q1));
    // plainChunkChars counts from 12 characters into the delta to 2 before its end.
    this.framing = q0 + 1 - (at.delta + 12) + (at.deltaEnd - 2 - q1);
  }

  /**
   * Whether the event at `s` of the read (`bytes`; `text`, their Latin-1 text) is this template with another valid
   * string: then its output is written to `out`, `m.chars` set, and the event's end returned; else -1 (nothing
   * written). The read's bytes must be valid UTF-8 (the caller checks).
   */
  match(bytes: Buffer, text: string, s: number, out: OutBytes, m: TemplateMatch): number {
    const shape = this.shape;
    const end = shape.matchText(bytes, text, s, bytes.length);
    if (end === -1) return -1;
    const start = shape.holes[0];
    const i = shape.holes[1];
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
    m.chars = shape.chars + this.framing;
    return end;
  }
}

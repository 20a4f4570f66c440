/**
 * The same-protocol relay's cheapest path (services/chat-relay.ts): once a stream's first plain content chunk has been
 * recognized by the strict patterns of chunk-scan.ts, the chunks after it usually repeat its bytes exactly up to the
 * delta's string and after it (the same id, object, created, model, inert fields, choice head; the same tail). The
 * chunk is learned as a template — its bytes before the string's opening quote and from its closing quote to the
 * event's end, as Latin-1 text (one character a byte: V8 compares such strings natively) — and a later event is
 * relayed when it has both exactly and a valid JSON string between them (the string scanned in the bytes, as
 * core/byte-shape.ts scans a hole): no pattern, no search for the event's end. Chunks like it that follow each other
 * are relayed as a run: between two strings one comparison of the template's tail and head together, and one copy of
 * our tail and head. The output is built into a Buffer: our head (`data: `, our prefix, the upstream's bytes up to the
 * quote), the string's bytes, our tail.
 *
 * Anything else (another layout, a change of an inert field, an escape that is not JSON, a control byte, an event
 * cut by the end of the read) is not a match, and the relay's general path reads the event.
 */
import { stringEnd } from '../../core/byte-shape.js';
import { hasAt } from '../../core/json-scan.js';
import type { PlainChunk } from './chunk-scan.js';

const EMPTY = Buffer.alloc(0);
/** TypedArray `set`, called as a known function (a per-chunk `dst.set` was a generic property load on this V8). */
const setBytes = Uint8Array.prototype.set;

/**
 * Reads' output is cut from shared slabs (as Buffer.allocUnsafe cuts allocations under 4 KiB from its 8 KiB pool): a
 * paced upstream's reads give outputs of 4–16 KiB, each of which was its own ArrayBuffer — a malloc, a free and the
 * collector's tracking of it, per read. A slab is never written twice: an output is a view the socket may keep until
 * it is written, and a full slab is left to the collector with its views. The part of a cut that the output did not
 * use goes back to the slab (`OutBytes.result`). A stalled client keeps at most its last output's slab alive: slabs
 * of 16 KiB (twice Node's own pool), so that many stalled clients hold a few times their outputs, not 64 KiB each (a
 * review measured 200 stalled relays holding 12.8 MB with 64 KiB slabs, against 1.6 MB before slabs).
 */
const SLAB_BYTES = 16 * 1024;
/** Outputs larger than this get their own Buffer. */
const SLAB_MAX_CUT = 8 * 1024;
let slab: Buffer = EMPTY;
/** Bytes of `slab` handed out. */
let slabUsed = 0;

/** `n` bytes (at most SLAB_MAX_CUT) cut from the slab, a new one when it has no room. */
function cut(n: number): Buffer {
  if (slabUsed + n > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const b = slab.subarray(slabUsed, slabUsed + n);
  slabUsed += n;
  return b;
}

/**
 * The Buffer a read's output is written into (one per read: the socket keeps what it is given). Grown by doubling
 * when a write would not fit.
 */
export class OutBytes {
  buf: Buffer = EMPTY;
  pos = 0;
  /** The slab `buf` was cut from (null: a Buffer of its own), and where the cut started in it. */
  private from: Buffer | null = null;
  private cutAt = 0;

  /** `capacity`: the size to allocate at the first write (the read's expected output). */
  constructor(private readonly capacity: number) {}

  /** Room for `n` more bytes. */
  room(n: number): Buffer {
    const need = this.pos + n;
    if (need > this.buf.length) {
      const size = Math.max(need, this.buf.length * 2, this.capacity);
      let grown: Buffer;
      if (size <= SLAB_MAX_CUT) {
        grown = cut(size);
        this.from = slab;
        this.cutAt = slabUsed - size;
      } else {
        grown = Buffer.allocUnsafe(size);
        this.from = null;
      }
      if (this.pos > 0) this.buf.copy(grown, 0, 0, this.pos);
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

  /**
   * What was written (empty: ''). The rest of the Buffer, when it is the slab's last cut, goes back to the slab (to a
   * multiple of 8 bytes: the next output starts aligned).
   */
  result(): Buffer | '' {
    const at = this.cutAt;
    if (this.from === slab && at + this.buf.length === slabUsed) slabUsed = Math.min(slabUsed, at + ((this.pos + 7) & ~7));
    return this.pos === 0 ? '' : this.buf.subarray(0, this.pos);
  }
}

/** The result of `ChunkTemplate.run`: the chunks relayed and their tokens (the sum of each one's estimate). */
export interface TemplateRun {
  chunks: number;
  tokens: number;
}

/** Tokens of a delta of `chars` characters: a quarter, at least one (services/chat-relay.ts `deltaTokens`). */
const tokensOf = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/** A stream's plain content chunk, learned (see the file comment). */
export class ChunkTemplate {
  /** The upstream's bytes from the event's start to the string's opening quote, as Latin-1 text (one char a byte). */
  private readonly headText: string;
  /** The upstream's bytes from the string's closing quote to the event's end (its blank line), the same. */
  private readonly tailText: string;
  /** The tail, then the head: what lies between two strings when chunks like this one follow each other. */
  private readonly midText: string;
  /** What the client gets before the string's characters: `data: `, our prefix, the upstream's bytes to the quote. */
  private readonly outHead: Buffer;
  /** What the client gets from the closing quote on: the tail without `,"usage":null`, and `}\n\n`. */
  private readonly outTail: Buffer;
  /** Our tail, then our head (between two relayed strings). */
  private readonly outMid: Buffer;
  /** The most output bytes per input byte of a matching event (when our bytes are longer than the upstream's). */
  readonly growth: number;
  /** Output bytes a run may write beyond what it keeps (the head of a next chunk that does not match): room to add. */
  readonly slack: number;
  /** Characters that `plainChunkChars` counts besides the string's (a tool call's framing). */
  private readonly framing: number;
  /** Whether the string must have a character (a content delta; a tool call's arguments may be empty). */
  private readonly nonEmpty: boolean;
  private readonly counted = { chars: 0 };

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
    this.nonEmpty = content;
    // Copies (Buffer.from, then flat Latin-1 strings): the template does not keep the read alive.
    const head = Buffer.from(bytes.subarray(s, q0 + 1));
    const tail = Buffer.from(bytes.subarray(q1, end));
    this.headText = head.toString('latin1');
    this.tailText = tail.toString('latin1');
    this.midText = Buffer.concat([tail, head]).toString('latin1');
    this.outHead = Buffer.concat([ourData, bytes.subarray(s + upLength, q0 + 1)]);
    this.outTail = Buffer.concat([bytes.subarray(q1, at.tail), Buffer.from('}\n\n')]);
    this.outMid = Buffer.concat([this.outTail, this.outHead]);
    this.slack = this.outMid.length;
    this.growth = Math.max(1, (this.outHead.length + this.outTail.length) / (q0 + 1 - s + end - q1));
    // plainChunkChars counts from 12 characters into the delta to 2 before its end.
    this.framing = q0 + 1 - (at.delta + 12) + (at.deltaEnd - 2 - q1);
  }

  /**
   * The events from `s` of the read (`bytes`; `text`, their Latin-1 text) that are this template with another valid
   * string, one after the other: their output is written to `out`, `r` set (chunks, tokens), and the end of the last
   * returned; -1 when the event at `s` is not one (nothing written). The read's bytes must be valid UTF-8 (the caller
   * checks).
   *
   * Between two such chunks lie the template's tail and head: one comparison of both (`midText`) and one copy of our
   * tail and head (`outMid`) a chunk, instead of two each. A chunk that turns out not to match after its head went out
   * (its string is not valid, its tail differs) is taken back: `out` ends after the last whole chunk.
   */
  run(bytes: Buffer, text: string, s: number, out: OutBytes, r: TemplateRun): number {
    const n = bytes.length;
    const headText = this.headText;
    if (s + headText.length > n || !hasAt(text, s, headText)) return -1;
    const tailText = this.tailText;
    const midText = this.midText;
    const outHead = this.outHead;
    const outMid = this.outMid;
    const counted = this.counted;
    const nonEmpty = this.nonEmpty;
    const framing = this.framing;
    let chunks = 0;
    let tokens = 0;
    // The end of the last whole chunk in the read, and in `out` (before our head of the next one).
    let end = -1;
    let kept = out.pos;
    let dst = out.room(outHead.length);
    let p = out.pos;
    setBytes.call(dst, outHead, p);
    p += outHead.length;
    let from = s + headText.length;
    for (;;) {
      const i = stringEnd(bytes, from, n, counted);
      if (i === -1 || (nonEmpty && i === from)) break;
      const len = i - from;
      out.pos = p;
      dst = out.room(len + outMid.length);
      if (len > 64) p += bytes.copy(dst, p, from, i);
      else for (let k = from; k < i; k++) dst[p++] = bytes[k];
      if (i + midText.length <= n && hasAt(text, i, midText)) {
        // This chunk is whole, and the next one's head is there: our tail and head, then its string.
        chunks++;
        tokens += tokensOf(counted.chars + framing);
        setBytes.call(dst, outMid, p);
        p += outMid.length;
        end = i + tailText.length;
        kept = p - outHead.length;
        from = i + midText.length;
        continue;
      }
      if (i + tailText.length <= n && hasAt(text, i, tailText)) {
        chunks++;
        tokens += tokensOf(counted.chars + framing);
        setBytes.call(dst, this.outTail, p);
        end = i + tailText.length;
        kept = p + this.outTail.length;
      }
      break;
    }
    out.pos = kept;
    r.chunks = chunks;
    r.tokens = tokens;
    return end;
  }
}

/**
 * The last common delta event of a stream that a decoder's patterns recognized, remembered as its fixed bytes
 * (core/byte-shape.ts: from the event's start to the delta string's opening quote, and from its closing quote to the
 * event's end) with what they fix — the kind and the index. A stream's next delta of the same part has the same bytes
 * around its string, so it is recognized by comparing them and scanning the string, without the patterns. Used by the
 * chat and Anthropic decoders' `rawDelta` (the Responses decoder's events hold more holes: its own shape).
 */
import type { RawDelta } from './adapters.js';
import { ByteShape, NONEMPTY_STRING, type ReadBytes } from './byte-shape.js';

export class DeltaMemo {
  private shape: ByteShape | null = null;
  private kind: RawDelta['kind'] = 'text_delta';
  private index = 0;

  /** Whether the event of `read` from `start` to `end` is the one remembered with another non-empty string: `d` is filled in. */
  recall(read: ReadBytes, start: number, end: number, d: RawDelta): boolean {
    const shape = this.shape;
    if (shape === null || shape.matchText(read.bytes, read.text, start, end) !== end) return false;
    d.kind = this.kind;
    d.index = this.index;
    d.buf = read.text;
    d.from = shape.holes[0] - 1;
    d.to = shape.holes[1] + 1;
    return true;
  }

  /** Remembers the event from `start` to `end` whose delta the patterns found (`d`). */
  learn(read: ReadBytes, start: number, end: number, d: RawDelta): void {
    this.shape = new ByteShape(read.bytes, [start, d.from + 1, d.to - 1, end], [NONEMPTY_STRING]);
    this.kind = d.kind;
    this.index = d.index;
  }
}

/**
 * An event stream's reads cut at their events, in bytes (the stream fast paths: services/chat-relay.ts and
 * services/codec-ir-bytes.ts): each read gives the event that the last read cut, completed by its first bytes
 * (`head`), and its own complete events (`body`, up to the end of its last blank line); what follows is carried to the
 * next read. Events are cut only at a blank line (`\n\n`), so a UTF-8 sequence is never split between two of them, and
 * `\n\n\n` runs are blank lines (the last read's final `\n` and this one's first complete one).
 *
 * A read shorter than `joinBelow` bytes is joined to the carried bytes instead (one copy of a few KB, cheaper than a
 * second pass over a small read): then `head` is null and `body` holds the carried event too. The bytes carried are
 * bounded by `sseLimits.eventChars`: past it `tooLarge` is set (nothing is carried) and the caller fails the stream
 * (502, `eventTooLarge`) — after relaying the read's complete events, as the relay did before these reads were shared.
 */
import { sseLimits } from './sse.js';

const LFLF = Buffer.from('\n\n');
const EMPTY = Buffer.alloc(0);

/**
 * `a` and the first `n` bytes of `b` in one new Buffer (as Buffer.concat, by TypedArray `set`, a builtin: Buffer.concat
 * is JavaScript that the optimizing compiler takes up only after some streams, ~26 M instructions once).
 */
function joined(a: Buffer, b: Buffer, n: number): Buffer {
  const out = Buffer.allocUnsafe(a.length + n);
  out.set(a, 0);
  out.set(n === b.length ? b : b.subarray(0, n), a.length);
  return out;
}

export class SseReads {
  /** The event the last read cut, completed (null: none). */
  head: Buffer | null = null;
  /** The read's complete events after `head`, from an event's start (or a blank line's) to a blank line's end. */
  body: Buffer = EMPTY;
  /** The bytes of an event not yet complete at the end of the last read. */
  private carry: Buffer | null = null;
  /** The event not yet complete passed the bound (`sseLimits.eventChars`): the stream must fail. */
  tooLarge = false;

  constructor(private readonly joinBelow: number) {}

  /** Sets `head` and `body` from the next read (and `tooLarge` when the bytes to carry would pass the bound). */
  cut(read: Buffer): void {
    this.head = null;
    this.body = EMPTY;
    const carried = this.carry;
    this.carry = null;
    let from = 0;
    if (carried !== null) {
      if (read.length < this.joinBelow) read = joined(carried, read, read.length);
      else {
        // The carry holds no blank line: its event ends across the boundary (`\n` | `\n`) or at the read's first.
        if (carried[carried.length - 1] === 0x0a && read.length > 0 && read[0] === 0x0a) from = 1;
        else {
          const lf = read.indexOf(LFLF);
          from = lf === -1 ? 0 : lf + 2;
        }
        if (from === 0) {
          this.keep(joined(carried, read, read.length));
          return;
        }
        this.head = joined(carried, read, from);
      }
    }
    const last = read.lastIndexOf(LFLF);
    const done = last === -1 ? from : Math.max(from, last + 2);
    if (done < read.length) this.keep(read.subarray(done));
    this.body = read.subarray(from, done);
  }

  /** The bytes carried (an event not complete), taken: null when none. */
  take(): Buffer | null {
    const c = this.carry;
    this.carry = null;
    return c;
  }

  private keep(bytes: Buffer): void {
    if (bytes.length > sseLimits.eventChars) this.tooLarge = true;
    else this.carry = bytes;
  }
}

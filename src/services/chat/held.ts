/**
 * The output a streamed answer holds back once the upstream body is complete: the last read's output, written with
 * the final (or error) event in one socket write. The chat relay's output is bytes (services/chat-relay.ts): they stay
 * bytes and go out as one Buffer, instead of being decoded to text and encoded back. A short stream arrives whole in
 * one read, so that was the whole answer (~4 KB for 14 chunks) through a UTF-8 decode, a string flatten and two UTF-8
 * scans on every streamed request. Text output (the translating sessions) is held as text, as before.
 */
export type Held = string | Buffer;

/** `held` followed by `out`. */
export function hold(held: Held, out: string | Buffer): Held {
  if (held.length === 0) return out;
  if (out.length === 0) return held;
  if (typeof held === 'string' && typeof out === 'string') return held + out;
  return Buffer.concat([bytesOf(held), bytesOf(out)]);
}

/** `held` followed by the final event `last`: what the response ends with (the same bytes either way). */
export function withLast(held: Held, last: string): Held {
  if (typeof held === 'string') return held + last;
  if (last.length === 0) return held;
  const out = Buffer.allocUnsafe(held.length + Buffer.byteLength(last));
  held.copy(out, 0);
  out.write(last, held.length);
  return out;
}

function bytesOf(x: Held): Buffer {
  return typeof x === 'string' ? Buffer.from(x) : x;
}

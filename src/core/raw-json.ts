/**
 * The raw bytes of a JSON body, kept beside its parse so that a same-protocol upstream body can reuse them instead of
 * re-serializing what the gateway does not change (issue 18: a 1 MB prompt was decoded, parsed, stringified and
 * encoded again — three copies). Only bodies the JSON body parser checked are recorded, so every byte reused has
 * passed its rules (NUL, lone surrogates, non-finite numbers, depth). Pure: no I/O.
 */

/** Parsed bodies → the raw bytes they were parsed from, and the `messages` array as parsed (identity check). */
const raws = new WeakMap<object, { bytes: Buffer; messages: unknown }>();

export function rememberRaw(parsed: object, bytes: Buffer): void {
  raws.set(parsed, { bytes, messages: (parsed as { messages?: unknown }).messages });
}

/**
 * Forgets `body`'s raw bytes: for code that changes a body in place (its raw bytes would no longer say what it holds).
 * Code that builds a new body object needs nothing: a new object has no raw bytes.
 */
export function forgetRaw(body: object): void {
  raws.delete(body);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index after the string starting at `i` (its opening quote). Valid JSON assumed. */
function skipString(b: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0) return b.length;
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** The index after the value starting at `i`. Valid JSON assumed: strings are jumped over by indexOf. */
function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    let j = i;
    while (j < b.length) {
      const x = b[j];
      if (x === QUOTE) {
        j = skipString(b, j);
        continue;
      }
      if (x === 0x7b || x === 0x5b) depth++;
      else if (x === 0x7d || x === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return b.length;
  }
  let j = i;
  while (j < b.length && b[j] !== 0x2c && b[j] !== 0x7d && b[j] !== 0x5d && !isSpace(b[j])) j++;
  return j;
}

/**
 * The raw bytes of the top-level `key`'s value in a JSON object (the last one, as JSON.parse keeps the last of
 * duplicate keys), or null. Valid JSON assumed (the body was parsed before).
 */
export function topLevelValue(b: Buffer, key: string): Buffer | null {
  let i = skipSpace(b, 0);
  if (b[i] !== 0x7b) return null;
  i++;
  let found: Buffer | null = null;
  for (;;) {
    i = skipSpace(b, i);
    if (i >= b.length || b[i] === 0x7d || b[i] !== QUOTE) return found;
    const keyEnd = skipString(b, i);
    const rawKey = b.toString('utf8', i + 1, keyEnd - 1);
    const name = rawKey.includes('\\') ? (JSON.parse(`"${rawKey}"`) as string) : rawKey;
    i = skipSpace(b, keyEnd);
    if (b[i] !== 0x3a) return null;
    const start = skipSpace(b, i + 1);
    const end = skipValue(b, start);
    if (name === key) found = b.subarray(start, end);
    i = skipSpace(b, end);
    if (b[i] === 0x2c) i++;
  }
}

/**
 * The raw bytes of `body.messages` when `body` is a body the JSON parser checked, unchanged in the ways the gateway
 * changes bodies (the same `messages` array; in-place changes call forgetRaw), or null.
 */
export function rawMessages(body: object): Buffer | null {
  const r = raws.get(body);
  if (!r || r.messages !== (body as { messages?: unknown }).messages || !Array.isArray(r.messages)) return null;
  return topLevelValue(r.bytes, 'messages');
}

/**
 * The client's bytes of `body` when it is a body the JSON parser checked and its `messages` is still the parsed array
 * (for hashing what the client sent instead of serializing it again), or null.
 */
export function rawBody(body: object): Buffer | null {
  const r = raws.get(body);
  return r && r.messages === (body as { messages?: unknown }).messages ? r.bytes : null;
}

/**
 * A JSON object's bytes, in three parts: `fields` serialized, then `"messages":` with `messages` as they are (not
 * re-serialized, not copied: the upstream request writes the parts one after the other), then the closing brace.
 */
export function withRawMessages(fields: Record<string, unknown>, messages: Buffer): Buffer[] {
  const head = JSON.stringify(fields);
  const open = head === '{}' ? '{"messages":' : `${head.slice(0, -1)},"messages":`;
  return [Buffer.from(open), messages, Buffer.from('}')];
}

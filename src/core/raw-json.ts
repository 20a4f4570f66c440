/**
 * The raw bytes of a JSON body, kept beside its parse so that a same-protocol upstream body can reuse them instead of
 * re-serializing what the gateway does not change (issue 18: a 1 MB prompt was decoded, parsed, stringified and
 * encoded again — three copies). Only bodies the JSON body parser checked are recorded, so every byte reused has
 * passed its rules (NUL, lone surrogates, non-finite numbers, depth). Pure: no I/O.
 */
import { conversationBytes, forgetLazy, sameConversation, type LazyKey } from './lazy-body.js';
import { QUOTE, skipSpace, skipString, skipValue } from './json-skip.js';

/** The large fields whose bytes are reused: chat's and Messages' `messages`, Responses' `input`, Gemini's `contents`. */
export type RawField = LazyKey;

/** Parsed bodies → the raw bytes they were parsed from, and `messages` and `input` as parsed (identity checks). */
const raws = new WeakMap<object, { bytes: Buffer | Buffer[]; messages: unknown; input: unknown; contents: unknown }>();

/** Stands for a lazy conversation (core/lazy-body.ts) in `raws`: its identity is checked there, without reading it. */
const LAZY = Symbol('lazy');

/** `bytes`: the body, whole or in the parts it arrived in (a lazy body's; core/lazy-body.ts). */
export function rememberRaw(parsed: object, bytes: Buffer | Buffer[]): void {
  const p = parsed as { messages?: unknown; input?: unknown; contents?: unknown };
  const lazy = lazyKey(parsed);
  raws.set(parsed, { bytes, messages: lazy === 'messages' ? LAZY : p.messages, input: lazy === 'input' ? LAZY : p.input, contents: lazy === 'contents' ? LAZY : p.contents });
}

/** The key of `body`'s lazy conversation, if it was parsed with one. */
function lazyKey(body: object): LazyKey | null {
  return conversationBytes(body, 'messages') ? 'messages' : conversationBytes(body, 'input') ? 'input' : conversationBytes(body, 'contents') ? 'contents' : null;
}

/** Whether `body[key]` is what was recorded for it, reading nothing lazy. */
function unchanged(body: object, key: LazyKey, recorded: unknown): boolean {
  return recorded === LAZY ? conversationBytes(body, key) !== null : recorded === (body as Record<string, unknown>)[key];
}

/**
 * Forgets `body`'s raw bytes: for code that changes a body in place (its raw bytes would no longer say what it holds).
 * Code that builds a new body object needs nothing: a new object has no raw bytes.
 */
export function forgetRaw(body: object): void {
  raws.delete(body);
  forgetLazy(body);
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
export function rawMessages(body: object): Buffer | Buffer[] | null {
  return rawField(body, 'messages');
}

/**
 * The raw bytes of `body[key]` (`messages` or `input`) when `body` is a body the JSON parser checked and `body[key]`
 * is still the array it parsed (in-place changes call forgetRaw), or null.
 */
export function rawField(body: object, key: RawField): Buffer | Buffer[] | null {
  const lazy = conversationBytes(body, key);
  if (lazy) return lazy;
  // Gemini `contents` are reused only while lazy (codec-ir.ts).
  if (key === 'contents') return null;
  const r = raws.get(body);
  if (!r || r[key] !== (body as Record<string, unknown>)[key] || !Array.isArray(r[key])) return null;
  return topLevelValue(wholeOf(r), key);
}

/**
 * A same-protocol upstream body: `out` serialized, except that when `out[key]` is still the parsed value of `body`
 * (the client's), its bytes as received are spliced in (parts for the upstream request to write in turn; their total
 * is the content-length). A string when nothing could be reused.
 */
export function spliceRaw(body: object, out: Record<string, unknown>, key: RawField): string | Buffer[] {
  const raw = sameConversation(out, body, key) ? rawField(body, key) : null;
  if (!raw) return JSON.stringify(out);
  const fields = without(out, key);
  return withRawField(fields, key, raw);
}

/** The byte length of a body's parts. */
export const partsLength = (parts: Buffer[]): number => parts.reduce((n, b) => n + b.length, 0);

/**
 * The client's bytes of `body` when it is a body the JSON parser checked and its `messages` is still the parsed array
 * (for hashing what the client sent instead of serializing it again), or null.
 */
export function rawBody(body: object): Buffer | null {
  const r = raws.get(body);
  return r && unchanged(body, 'messages', r.messages) && unchanged(body, 'input', r.input) && unchanged(body, 'contents', r.contents) ? wholeOf(r) : null;
}

/** The recorded bytes in one Buffer (parts are joined once, when some code asks: the response cache's hash). */
function wholeOf(r: { bytes: Buffer | Buffer[] }): Buffer {
  if (Array.isArray(r.bytes)) r.bytes = r.bytes.length === 1 ? r.bytes[0] : Buffer.concat(r.bytes);
  return r.bytes;
}

/** `out`'s fields but `key`, reading nothing lazy (`out[key]` may be a lazy conversation). */
export function without(out: Record<string, unknown>, key: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const k in out) if (k !== key) fields[k] = out[k];
  return fields;
}

/**
 * A JSON object's bytes, in parts: `fields` serialized, then `"messages":` with `messages` as they are (not
 * re-serialized, not copied: the upstream request writes the parts one after the other), then the closing brace.
 */
export function withRawMessages(fields: Record<string, unknown>, messages: Buffer | Buffer[]): Buffer[] {
  return withRawField(fields, 'messages', messages);
}

/** `withRawMessages` for any top-level key (`input` of a Responses body). */
export function withRawField(fields: Record<string, unknown>, key: RawField, value: Buffer | Buffer[]): Buffer[] {
  const head = JSON.stringify(fields);
  const open = head === '{}' ? `{"${key}":` : `${head.slice(0, -1)},"${key}":`;
  return Array.isArray(value) ? [Buffer.from(open), ...value, CLOSE] : [Buffer.from(open), value, CLOSE];
}

const CLOSE = Buffer.from('}');

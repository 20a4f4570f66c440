/**
 * Large JSON bodies parsed lazily (issue 18): the conversation — chat's and Messages' `messages`, Responses' `input` —
 * is validated from the bytes and kept as bytes; the rest of the body is parsed as usual. `body.messages` is an
 * accessor that parses the bytes the first time some code reads it (a translation to another protocol, a guardrail, a
 * plugin, I/O logging), so every consumer still sees an ordinary array; the same-protocol path never reads it and
 * forwards the client's bytes (core/raw-json.ts).
 *
 * Only a conversation of the common shape is taken this way: an array of objects with exactly `role` and `content`,
 * both strings, with no `\u` escape, the roles ASCII, in a body of well-formed UTF-8 (raw UTF-8 cannot hold a lone
 * surrogate, and a NUL is a control byte the scan refuses: what core/untrusted.ts checks in strings holds). Anything
 * else — and any byte the strict scan does not expect —
 * is parsed eagerly as before, so every error message is the one the eager path gives. Pure: no I/O.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { scan, utf16Units } from './json-simd.js';
import { BACKSLASH, QUOTE, skipSpace, skipString, skipValue } from './json-skip.js';
import { scanContents, scanConversation } from './lazy-scan.js';

export type LazyKey = 'messages' | 'input' | 'contents';

/**
 * Who lends a lazy conversation its bytes when they are not the conversation's own (core/body-slabs.ts: reused
 * slabs). `gone`: the bytes were given back and may now hold another request's (reading them is refused); `keep`: some
 * holder reads the conversation after the request is done, so the bytes must never be given back.
 */
export interface BytesOwner {
  readonly gone: boolean;
  keep(): void;
}

/** What the scan learned of a lazy conversation: enough to validate it and estimate its tokens without parsing it. */
export interface LazyConversation {
  key: LazyKey;
  /** The body's bytes, in the parts they arrived in: bytes [start, end) of their concatenation are the JSON array. */
  parts: Buffer[];
  start: number;
  end: number;
  /** Number of messages. */
  count: number;
  /** Each role that occurs, in order of first occurrence. */
  roles: string[];
  /** Total length of the `content` strings, in UTF-16 code units (what `string.length` gives once parsed). */
  chars: number;
  /**
   * Total UTF-8 bytes of the `content` strings once parsed (only the one-character escapes are taken, so the bytes
   * between the quotes, an escape counting one). Equal to `chars` in an ASCII body.
   */
  contentBytes: number;
  /** Gemini `contents`: the number of text parts (each an object of its own). */
  texts?: number;
  /** Gemini `contents`: two neighbours have the same role (the IR merges them; a passthrough would not). */
  repeats?: boolean;
  /** The body is not ASCII (UTF-8 throughout): the conversation is decoded as UTF-8, else as Latin-1 (the same, cheaper). */
  utf8?: boolean;
  /** Total length of the `role` strings, in bytes (ASCII, no escapes: also their length once parsed). */
  roleBytes: number;
  /** The parsed array once some code read it. */
  value?: unknown[];
  /** The lender of `parts`, when they are lent (checked before every read of them). */
  owner?: BytesOwner;
}

const states = new WeakMap<object, LazyConversation>();

/** Bodies below this size are parsed eagerly (the scan's fixed costs are not worth it). */
export const LAZY_MIN_BYTES = 64 * 1024;

/** How many lazy conversations were parsed on demand (tests check that the same-protocol path reads none). */
export const lazyStats = { materialized: 0 };

/** What a scan of a conversation array (core/lazy-scan.ts) learned, with the index after the array (`end`). */
export type Scanned = Omit<LazyConversation, 'key' | 'parts' | 'start' | 'contentBytes'>;

/**
 * The top-level key `messages`, `input` or `contents` (Gemini) with its value scanned strictly, or null when
 * the body is not an object, a key has an escape, the key occurs twice or its value is not of the lazy shape. The
 * other values are skipped (JSON.parse checks them).
 */
function topLevelConversation(b: Buffer, find: (from: number, to: number) => number): (Scanned & { key: LazyKey; start: number }) | null {
  let i = skipSpace(b, 0, b.length);
  if (b[i] !== 0x7b) return null;
  i++;
  let found: (Scanned & { key: LazyKey; start: number }) | null = null;
  for (;;) {
    i = skipSpace(b, i, b.length);
    if (i >= b.length || b[i] !== QUOTE) return found;
    const keyEnd = skipString(b, i);
    if (b.subarray(i, keyEnd).includes(BACKSLASH)) return null;
    const name = keyEnd - i === 10 || keyEnd - i === 7 ? b.toString('latin1', i + 1, keyEnd - 1) : '';
    i = skipSpace(b, keyEnd, b.length);
    if (b[i] !== 0x3a) return null;
    const start = skipSpace(b, i + 1, b.length);
    let end: number;
    if (name === 'messages' || name === 'input' || name === 'contents') {
      if (found) return null;
      const scanned = name === 'contents' ? scanContents(b, start, find) : scanConversation(b, start, find);
      if (!scanned) return null;
      found = { key: name, start, ...scanned };
      end = scanned.end;
    } else end = skipValue(b, start);
    i = skipSpace(b, end, b.length);
    if (b[i] === 0x2c) i++;
    else return found;
  }
}

/**
 * `bytes` (a JSON body) parsed with its conversation left as bytes, with the text that was parsed (the body
 * without the conversation, for the checks of core/untrusted.ts), or null when the body is not of the shape taken
 * lazily (then parse it eagerly). Throws what JSON.parse throws when the rest of the body is not valid JSON.
 * `bytes` may be a passing copy (core/json-simd.ts scannerOfParts: `find` searches it) of `parts`, the body's reads,
 * which are what the conversation keeps; by default `bytes` itself is kept.
 */
export function parseLazy(bytes: Buffer, find?: (from: number, to: number) => number, parts: Buffer[] = [bytes], owner?: BytesOwner): { body: Record<string, unknown>; text: string; key: LazyKey } | null {
  // Not ASCII: UTF-8 throughout, else the eager path (which decodes a malformed sequence as U+FFFD and does not reuse the bytes).
  const ascii = isAscii(bytes);
  if (!ascii && !isUtf8(bytes)) return null;
  const found = find ? topLevelConversation(bytes, find) : scan(bytes, (f) => topLevelConversation(bytes, f));
  if (!found || found.end - found.start < LAZY_MIN_BYTES / 2) return null;
  const encoding = ascii ? 'latin1' : 'utf8';
  const text = `${bytes.toString(encoding, 0, found.start)}[]${bytes.toString(encoding, found.end, bytes.length)}`;
  const rest = JSON.parse(text) as unknown;
  if (rest === null || typeof rest !== 'object' || Array.isArray(rest)) return null;
  const body = rest as Record<string, unknown>;
  // The scan counted the content strings' bytes; their UTF-16 length is less by what the multi-byte sequences save,
  // all of which are in content strings (keys and roles are ASCII): the array's bytes less its code units.
  const span = ascii ? { ...found, contentBytes: found.chars } : { ...found, contentBytes: found.chars, chars: found.chars - (found.end - found.start - utf16Units(bytes, found.start, found.end)), utf8: true };
  const state: LazyConversation = owner ? { parts, ...span, owner } : { parts, ...span };
  defineLazy(body, state.key, () => materialize(state));
  states.set(body, state);
  return { body, text, key: state.key };
}

function materialize(state: LazyConversation): unknown[] {
  if (!state.value) {
    lazyStats.materialized++;
    state.value = JSON.parse(textOf(lentParts(state), state.start, state.end, state.utf8 === true)) as unknown[];
  }
  return state.value;
}

/** Bytes [start, end) of the concatenation of `parts`: one Buffer (a view) when one part holds them, else views of each. */
export function partsSlice(parts: Buffer[], start: number, end: number): Buffer | Buffer[] {
  if (parts.length === 1) return parts[0].subarray(start, end);
  const out: Buffer[] = [];
  let at = 0;
  for (const p of parts) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + p.length);
    if (from < to) out.push(p.subarray(from - at, to - at));
    at += p.length;
    if (at >= end) break;
  }
  return out.length === 1 ? out[0] : out;
}

/** Bytes [start, end) of `parts` decoded as Latin-1 (ASCII), or as UTF-8 (joined first: a part may end mid-character). */
function textOf(parts: Buffer[], start: number, end: number, utf8: boolean): string {
  const slice = partsSlice(parts, start, end);
  if (utf8) return (Array.isArray(slice) ? Buffer.concat(slice) : slice).toString('utf8');
  return Array.isArray(slice) ? slice.map((b) => b.toString('latin1')).join('') : slice.toString('latin1');
}

/** `obj[key]` as an accessor reading `get()` once, then an ordinary data property (also when assigned). */
function defineLazy(obj: object, key: string, get: () => unknown): void {
  const settle = (value: unknown) => Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(obj, key, {
    get() {
      const value = get();
      settle(value);
      return value;
    },
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

/**
 * Forgets that `body`'s conversation came from the client's bytes (for code that changes it in place): reading it still
 * works, but conversationBytes no longer offers the bytes, so the body is serialized as it now is.
 */
export function forgetLazy(body: object): void {
  states.delete(body);
}

/** The lazy conversation of `body` while `body[key]` has not been read nor replaced, else null. */
export function lazyConversation(body: object, key: LazyKey = 'messages'): LazyConversation | null {
  const state = states.get(body);
  if (!state || state.key !== key) return null;
  const d = Object.getOwnPropertyDescriptor(body, key);
  return d && d.get ? state : null;
}

/**
 * The conversation `body` was parsed with, when `body[key]` still holds it (unread, or read and not replaced): its
 * bytes are what the client sent (in parts when they span several reads: write them in turn). Null otherwise.
 */
export function conversationBytes(body: object, key: LazyKey): Buffer | Buffer[] | null {
  const state = states.get(body);
  if (!state || state.key !== key) return null;
  const d = Object.getOwnPropertyDescriptor(body, key);
  if (!d || (!d.get && d.value !== state.value)) return null;
  return partsSlice(lentParts(state), state.start, state.end);
}

/** `state.parts`, refused once their lender took them back (a read after the request was done: a bug, never data). */
function lentParts(state: LazyConversation): Buffer[] {
  if (state.owner?.gone) throw new Error('a lazy conversation was read after its request body was given back');
  return state.parts;
}

/**
 * Marks `body`'s lazy conversation (or the one it shares: `shareLazy`) as read after its request is done (I/O logging,
 * tracing): its bytes are never given back to their lender. Nothing for other bodies.
 */
export function keepBytes(body: object): void {
  const state = states.get(body) ?? states.get(aliases.get(body) ?? body);
  state?.owner?.keep();
}

/**
 * `out[key]` made the same lazy conversation as `body[key]` without reading it: reading `out[key]` reads
 * `body[key]`; assigning it replaces it. When `body[key]` is not lazy, a plain copy.
 */
export function shareLazy(body: object, out: Record<string, unknown>, key: LazyKey): void {
  if (!lazyConversation(body, key)) {
    out[key] = (body as Record<string, unknown>)[key];
    return;
  }
  aliases.set(out, body);
  defineLazy(out, key, () => (body as Record<string, unknown>)[key]);
}

const aliases = new WeakMap<object, object>();

/** Whether `out[key]` is (still, unread) the lazy conversation of `body`, or holds the same defined value. Reads nothing lazy. */
export function sameConversation(out: object, body: object, key: LazyKey): boolean {
  const d = Object.getOwnPropertyDescriptor(out, key);
  if (d?.get) return aliases.get(out) === body;
  if (lazyConversation(body, key)) return false;
  return d !== undefined && d.value !== undefined && d.value === (body as Record<string, unknown>)[key];
}

/**
 * A stand-in for a lazy conversation, for checks that depend on its roles only (the schema validation, an inbound
 * adapter's): one element per role that occurs, with an empty `content` — or, for Gemini `contents`, one one-space
 * text part (the Gemini skin drops empty parts).
 */
export function standIn(c: LazyConversation): unknown[] {
  return c.key === 'contents' ? c.roles.map((role) => ({ role, parts: [{ text: ' ' }] })) : c.roles.map((role) => ({ role, content: '' }));
}

/**
 * A shallow copy of `body` with `extra` fields set, whose conversation, when lazy and unread, is the same lazy one
 * (a spread would read it): reading either reads it once; the copy's bytes are the body's.
 */
export function lazyCopy(body: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const state = states.get(body);
  if (!state || !lazyConversation(body, state.key)) return { ...body, ...extra };
  const out: Record<string, unknown> = {};
  for (const k in body) if (k !== state.key) out[k] = body[k];
  shareLazy(body, out, state.key);
  states.set(out, state);
  return Object.assign(out, extra);
}

/**
 * estimatePromptTokens (core/chat-shape.ts) of a lazy `messages`, from the lengths the scan counted; null when
 * `body.messages` is not lazy.
 */
export function lazyPromptTokens(body: object): number | null {
  const c = lazyConversation(body, 'messages');
  return c ? Math.ceil(c.chars / 4) : null;
}

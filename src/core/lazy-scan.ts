/**
 * The strict scans of a lazy conversation (core/lazy-body.ts), from the bytes: chat's and Messages' `messages` and
 * Responses' `input` — objects of exactly `role` and `content`, both strings — and Gemini's `contents` — objects of
 * exactly `role` and `parts`, the parts objects of exactly one non-empty `text` string. Strings may hold the
 * one-character escapes only (no `\u`); roles are ASCII, at most 64 bytes. Anything else gives null (the eager
 * path). Pure: no I/O.
 */
import { BACKSLASH, QUOTE, skipSpace } from './json-skip.js';
import type { Scanned } from './lazy-body.js';

/** Whether `b` holds the bytes of `word` at `i`. */
function at(b: Buffer, i: number, word: Uint8Array): boolean {
  if (i + word.length > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return false;
  return true;
}

/** Whether b[i..] is `"role"`, byte by byte (a loop over a word costs more per message: issue 18's 1,000-message body). */
const isRoleKey = (b: Buffer, i: number): boolean =>
  i + 6 <= b.length && b[i] === QUOTE && b[i + 1] === 0x72 && b[i + 2] === 0x6f && b[i + 3] === 0x6c && b[i + 4] === 0x65 && b[i + 5] === QUOTE;
/** Whether b[i..] is `"content"`. */
const isContentKey = (b: Buffer, i: number): boolean =>
  i + 9 <= b.length && b[i] === QUOTE && b[i + 1] === 0x63 && b[i + 2] === 0x6f && b[i + 3] === 0x6e && b[i + 4] === 0x74 && b[i + 5] === 0x65 && b[i + 6] === 0x6e && b[i + 7] === 0x74 && b[i + 8] === QUOTE;
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1; // the one-character escapes (not \u)

/** The index in `roles` (as bytes in `known`) of the role in b[from, to), added when new; -1 for a role not ASCII. */
function roleIndex(b: Buffer, from: number, to: number, roles: string[], known: Buffer[]): number {
  for (let r = 0; r < known.length; r++) if (known[r].length === to - from && at(b, from, known[r])) return r;
  for (let k = from; k < to; k++) if (b[k] >= 0x80) return -1;
  known.push(Buffer.from(b.subarray(from, to)));
  roles.push(b.toString('latin1', from, to));
  return roles.length - 1;
}

/**
 * The strict scan of a conversation array from `start`: each element an object with exactly `"role"` and
 * `"content"`, both strings (role without escapes, at most 64 bytes; content with the one-character escapes only).
 * Returns the index after the array and what it learned, or null for anything else.
 */
export function scanConversation(b: Buffer, start: number, find: (from: number, to: number) => number): Scanned | null {
  const n = b.length;
  let i = skipSpace(b, start, n);
  if (b[i] !== 0x5b) return null;
  i = skipSpace(b, i + 1, n);
  if (b[i] === 0x5d) return null; // empty: the eager path's validation says why
  const roles: string[] = [];
  const known: Buffer[] = [];
  let count = 0;
  let chars = 0;
  let roleBytes = 0;
  for (;;) {
    if (b[i] !== 0x7b) return null;
    i = skipSpace(b, i + 1, n);
    let role = false;
    let content = false;
    for (;;) {
      const isRole = isRoleKey(b, i);
      if (!isRole && !isContentKey(b, i)) return null;
      i = skipSpace(b, i + (isRole ? 6 : 9), n);
      if (b[i] !== 0x3a) return null;
      i = skipSpace(b, i + 1, n);
      if (b[i] !== QUOTE) return null;
      if (isRole) {
        if (role) return null;
        role = true;
        const q = find(i + 1, Math.min(n, i + 66));
        if (b[q] !== QUOTE) return null;
        if (roleIndex(b, i + 1, q, roles, known) < 0) return null;
        roleBytes += q - i - 1;
        i = q + 1;
      } else {
        if (content) return null;
        content = true;
        let from = i + 1;
        for (;;) {
          const q = find(from, n);
          if (q >= n) return null;
          const c = b[q];
          if (c === QUOTE) {
            chars += q - from;
            i = q + 1;
            break;
          }
          if (c !== BACKSLASH || ESCAPES[b[q + 1]] !== 1) return null;
          chars += q - from + 1;
          from = q + 2;
        }
      }
      i = skipSpace(b, i, n);
      if (b[i] === 0x2c) {
        i = skipSpace(b, i + 1, n);
        continue;
      }
      if (b[i] !== 0x7d) return null;
      break;
    }
    if (!role || !content) return null;
    count++;
    i = skipSpace(b, i + 1, n);
    if (b[i] === 0x2c) {
      i = skipSpace(b, i + 1, n);
      continue;
    }
    if (b[i] !== 0x5d) return null;
    return { end: i + 1, count, roles, chars, roleBytes };
  }
}


/** Whether b[i..] is `"parts"`. */
const isPartsKey = (b: Buffer, i: number): boolean =>
  i + 7 <= b.length && b[i] === QUOTE && b[i + 1] === 0x70 && b[i + 2] === 0x61 && b[i + 3] === 0x72 && b[i + 4] === 0x74 && b[i + 5] === 0x73 && b[i + 6] === QUOTE;
/** Whether b[i..] is `"text"`. */
const isTextKey = (b: Buffer, i: number): boolean =>
  i + 6 <= b.length && b[i] === QUOTE && b[i + 1] === 0x74 && b[i + 2] === 0x65 && b[i + 3] === 0x78 && b[i + 4] === 0x74 && b[i + 5] === QUOTE;

/** The characters of the last string `textEnd` took (an escape counts one). */
let counted = 0;

/** The index after the closing quote of the string whose text starts at `from`, or -1 (a byte the strict scan refuses). */
function textEnd(b: Buffer, from: number, n: number, find: (from: number, to: number) => number): number {
  let chars = 0;
  for (;;) {
    const q = find(from, n);
    if (q >= n) return -1;
    const c = b[q];
    if (c === QUOTE) {
      counted = chars + q - from;
      return q + 1;
    }
    if (c !== BACKSLASH || ESCAPES[b[q + 1]] !== 1) return -1;
    chars += q - from + 1;
    from = q + 2;
  }
}

/**
 * The strict scan of a Gemini `contents` array from `start`: each element an object with exactly `"role"` (a string
 * as above) and `"parts"`, an array of one or more objects of exactly one `"text"`, a non-empty string (the Gemini
 * skin drops empty text parts, and a content left without parts: such a body is taken eagerly). Also counts the text
 * parts (`texts`) and notes contents the IR reshapes (`repeats`): two neighbours of one role (merged), or a `model`
 * content of several text parts (inbound/gemini.ts joins a model turn's adjacent text parts into one).
 */
export function scanContents(b: Buffer, start: number, find: (from: number, to: number) => number): Scanned | null {
  const n = b.length;
  let i = skipSpace(b, start, n);
  if (b[i] !== 0x5b) return null;
  i = skipSpace(b, i + 1, n);
  if (b[i] === 0x5d) return null;
  const roles: string[] = [];
  const known: Buffer[] = [];
  let count = 0;
  let chars = 0;
  let roleBytes = 0;
  let texts = 0;
  let prev = -1;
  let repeats = false;
  for (;;) {
    if (b[i] !== 0x7b) return null;
    i = skipSpace(b, i + 1, n);
    let role = -1;
    let parts = false;
    let partCount = 0;
    for (;;) {
      const isRole = isRoleKey(b, i);
      if (!isRole && !isPartsKey(b, i)) return null;
      i = skipSpace(b, i + (isRole ? 6 : 7), n);
      if (b[i] !== 0x3a) return null;
      i = skipSpace(b, i + 1, n);
      if (isRole) {
        if (role >= 0 || b[i] !== QUOTE) return null;
        const q = find(i + 1, Math.min(n, i + 66));
        if (b[q] !== QUOTE) return null;
        role = roleIndex(b, i + 1, q, roles, known);
        if (role < 0) return null;
        roleBytes += q - i - 1;
        i = q + 1;
      } else {
        if (parts || b[i] !== 0x5b) return null;
        parts = true;
        i = skipSpace(b, i + 1, n);
        for (;;) {
          if (b[i] !== 0x7b) return null;
          i = skipSpace(b, i + 1, n);
          if (!isTextKey(b, i)) return null;
          i = skipSpace(b, i + 6, n);
          if (b[i] !== 0x3a) return null;
          i = skipSpace(b, i + 1, n);
          if (b[i] !== QUOTE || b[i + 1] === QUOTE) return null;
          i = textEnd(b, i + 1, n, find);
          if (i < 0) return null;
          chars += counted;
          texts++;
          partCount++;
          i = skipSpace(b, i, n);
          if (b[i] !== 0x7d) return null;
          i = skipSpace(b, i + 1, n);
          if (b[i] === 0x2c) {
            i = skipSpace(b, i + 1, n);
            continue;
          }
          if (b[i] !== 0x5d) return null;
          i++;
          break;
        }
      }
      i = skipSpace(b, i, n);
      if (b[i] === 0x2c) {
        i = skipSpace(b, i + 1, n);
        continue;
      }
      if (b[i] !== 0x7d) return null;
      break;
    }
    if (role < 0 || !parts) return null;
    if (role === prev || (partCount > 1 && roles[role] === 'model')) repeats = true;
    prev = role;
    count++;
    i = skipSpace(b, i + 1, n);
    if (b[i] === 0x2c) {
      i = skipSpace(b, i + 1, n);
      continue;
    }
    if (b[i] !== 0x5d) return null;
    return { end: i + 1, count, roles, chars, roleBytes, texts, repeats };
  }
}

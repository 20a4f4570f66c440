/**
 * Jumping over JSON values in bytes without parsing them, for the raw-body paths (core/raw-json.ts, core/lazy-body.ts):
 * the bytes are assumed well formed here, and JSON.parse (or the strict scan) checks them. Pure: no I/O.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

export const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The index of the first byte from `i` (before `end`) that is not JSON white space. */
export function skipSpace(b: Buffer, i: number, end = b.length): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** The index after the string whose opening quote is at `i` (or the end of `b` when it is not closed). */
export function skipString(b: Buffer, i: number): number {
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

/** The index after the value starting at `i`: a string, an object or array (strings inside jumped over), or a scalar. */
export function skipValue(b: Buffer, i: number): number {
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

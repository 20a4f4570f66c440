/**
 * Checks on values a client sent, before any code walks them recursively or stores them:
 * - nesting depth is bounded (a walk of a 10,000-level document would exhaust the stack),
 * - numbers are finite (`1e309` parses as Infinity),
 * - strings and object keys are storable: no NUL character (PostgreSQL text refuses it) and no lone UTF-16 surrogate
 *   (neither database can encode it as UTF-8).
 * The walk itself is iterative, so it is safe on any input.
 */

/** Deepest nesting of objects and arrays accepted in a request body. */
export const MAX_JSON_DEPTH = 64;

/** Longest piece of client input quoted back in an error message. */
export const ECHO_LIMIT = 120;

export interface UntrustedProblem {
  /** Dotted path of the offending value (`messages[0].content`), or '' for the whole document. */
  field: string;
  rule: 'depth' | 'finite' | 'storable';
  message: string;
}

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;

/** Whether a string can be stored in either database: no NUL and well-formed UTF-16 (no lone surrogate). */
export function isStorable(s: string): boolean {
  return !NUL.test(s) && (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** `s` cut to a short prefix for quoting in a message (with its full length when cut). */
export function clip(s: string, max = ECHO_LIMIT): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}… (${s.length} characters)`;
}

/** A printable form of a key or string for a message: clipped, and with NUL and lone surrogates escaped. */
export function quote(s: string): string {
  return clip(s)
    .replace(/\u0000/g, '\\u0000')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const k = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(quote(key));
  return path ? `${path}.${k}` : k;
}

const STORABLE_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * The first problem in a parsed document, or null. `strings: false` skips the string checks (the raw text showed no
 * escape that could produce a NUL or a surrogate), leaving depth and finiteness.
 */
export function findUntrusted(root: unknown, opts: { maxDepth?: number; strings?: boolean } = {}): UntrustedProblem | null {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  const strings = opts.strings ?? true;
  // Explicit stack of [value, depth, path]; paths are only built when a problem is found.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  const parents: Array<number> = [-1];
  const keys: Array<string | number | null> = [null];
  const pathOf = (i: number): string => {
    const chain: Array<string | number> = [];
    for (let j = i; j > 0; j = parents[j]) chain.push(keys[j] as string | number);
    let p = '';
    for (let k = chain.length - 1; k >= 0; k--) p = join(p, chain[k]);
    return p;
  };
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'string') {
      if (strings && !isStorable(v)) return { field: pathOf(i), rule: 'storable', message: STORABLE_RULE };
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { field: pathOf(i), rule: 'finite', message: 'must be a finite number' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const depth = depths[i] + 1;
    if (depth > maxDepth) return { field: pathOf(i), rule: 'depth', message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) {
        const item = v[k];
        if (item === null || (typeof item !== 'object' && typeof item !== 'string' && typeof item !== 'number')) continue;
        values.push(item), depths.push(depth), parents.push(i), keys.push(k);
      }
    } else if (!Buffer.isBuffer(v) && !(v instanceof Uint8Array)) {
      for (const k in v as Record<string, unknown>) {
        if (strings && !isStorable(k)) return { field: join(pathOf(i), k), rule: 'storable', message: `key ${STORABLE_RULE}` };
        const item = (v as Record<string, unknown>)[k];
        if (item === null || (typeof item !== 'object' && typeof item !== 'string' && typeof item !== 'number')) continue;
        values.push(item), depths.push(depth), parents.push(i), keys.push(k);
      }
    }
  }
  return null;
}

/**
 * Whether raw JSON text may hold a string that is not storable: only a `\u0000` escape or an escaped surrogate can
 * produce one (UTF-8 decoding turns invalid bytes into U+FFFD, and JSON forbids raw control characters).
 */
export function mayHoldUnstorable(text: string): boolean {
  return text.includes('\\u') && /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/.test(text);
}

/**
 * Exact decimals for cost computation (src/core/pricing.ts): value = n / 10^scale on BigInts, parsed from the
 * catalog's decimal price strings (memoized), added, subtracted and multiplied exactly, and turned into a JS number
 * once, rounded to a number of significant digits.
 *
 * Pure logic: no I/O.
 */
// ---------------------------------------------------------------------------
// Exact decimals: value = n / 10^scale, scale >= 0.
// ---------------------------------------------------------------------------

export interface Dec {
  n: bigint;
  scale: number;
}

export const ZERO: Dec = { n: 0n, scale: 0 };
export const ONE: Dec = { n: 1n, scale: 0 };

export function pow10(k: number): bigint {
  return 10n ** BigInt(k);
}

const DECIMAL_RE = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Catalog prices repeat on every request: their parsed form is memoized (bounded). Decs are never mutated. */
const parsedStrings = new Map<string, Dec | null>();

/** Parses a decimal string (optionally with exponent). Returns null when invalid. */
export function parseDec(input: string | number): Dec | null {
  if (typeof input === 'string') {
    const hit = parsedStrings.get(input);
    if (hit !== undefined) return hit;
    const d = parseDecUncached(input);
    if (parsedStrings.size < 10_000) parsedStrings.set(input, d);
    return d;
  }
  return parseDecUncached(input);
}

function parseDecUncached(input: string | number): Dec | null {
  let s: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return null;
    s = String(input); // shortest round-trip representation, e.g. 0.1 → "0.1"
  } else {
    s = input.trim();
  }
  const m = DECIMAL_RE.exec(s);
  if (!m) return null;
  const intPart = m[2] ?? '';
  const fracPart = m[3] ?? '';
  if (intPart === '' && fracPart === '') return null;
  const exp = m[4] ? Number(m[4]) : 0;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return null;
  let n = BigInt((intPart || '0') + fracPart);
  let scale = fracPart.length - exp;
  if (scale < 0) {
    n *= pow10(-scale);
    scale = 0;
  }
  if (m[1] === '-') n = -n;
  return { n, scale };
}

export function align(a: Dec, b: Dec): [bigint, bigint, number] {
  if (a.scale === b.scale) return [a.n, b.n, a.scale];
  if (a.scale > b.scale) return [a.n, b.n * pow10(a.scale - b.scale), a.scale];
  return [a.n * pow10(b.scale - a.scale), b.n, b.scale];
}

export function add(a: Dec, b: Dec): Dec {
  const [x, y, scale] = align(a, b);
  return { n: x + y, scale };
}

export function sub(a: Dec, b: Dec): Dec {
  const [x, y, scale] = align(a, b);
  return { n: x - y, scale };
}

export function mul(a: Dec, b: Dec): Dec {
  return { n: a.n * b.n, scale: a.scale + b.scale };
}

export function mulInt(a: Dec, k: number): Dec {
  return { n: a.n * BigInt(k), scale: a.scale };
}

/** Plain decimal string, no exponent, trailing fractional zeros removed. */
export function decToString(d: Dec): string {
  const neg = d.n < 0n;
  let digits = (neg ? -d.n : d.n).toString();
  if (d.scale > 0) {
    digits = digits.padStart(d.scale + 1, '0');
    const i = digits.length - d.scale;
    let frac = digits.slice(i).replace(/0+$/, '');
    digits = frac ? `${digits.slice(0, i)}.${frac}` : digits.slice(0, i);
  }
  if (digits === '0') return '0';
  return neg ? `-${digits}` : digits;
}

/**
 * Converts to a JS number. With `sig`, first rounds (half away from zero) to that many
 * significant digits so that e.g. exact 0.3 becomes the double nearest to 0.3.
 */
export function decToNumber(d: Dec, sig?: number): number {
  if (d.n === 0n) return 0;
  if (sig === undefined) return Number(decToString(d));
  const neg = d.n < 0n;
  let abs = neg ? -d.n : d.n;
  let scale = d.scale;
  const len = abs.toString().length;
  if (len > sig) {
    const drop = len - sig;
    const div = pow10(drop);
    const q = abs / div;
    const r = abs % div;
    abs = r * 2n >= div ? q + 1n : q;
    scale -= drop;
  }
  const v = Number(`${abs.toString()}e${-scale}`);
  return neg ? -v : v;
}

/**
 * Money as exact integers: amounts are kept, summed and compared in nano-dollars (1 nano-dollar = 10⁻⁹ USD), and
 * turned into USD numbers only at the API boundary. A sum of USD floats drifts (0.00016 + 0.00016 + 0.00016 =
 * 0.00047999999999999996); a sum of integers does not, and `n / 1e9` is the double nearest the exact decimal, which
 * JSON prints as that decimal (0.00048). Integers stay exact in a double up to 2⁵³ nano-dollars (about $9 million) —
 * per key, budget window or balance — and in the databases' 64-bit columns up to about $9 billion.
 *
 * Pure logic: no I/O.
 */

export const NANO_PER_USD = 1_000_000_000;

/** USD (a JSON number or a computed cost) → nano-dollars, rounded half away from zero. */
export function usdToNano(usd: number): number {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite amount: ${usd}`);
  const n = usd * NANO_PER_USD;
  // Math.round rounds -2.5 to -2: round the magnitude instead.
  return n < 0 ? -Math.round(-n) : Math.round(n);
}

/** Nano-dollars → USD (the double nearest the exact decimal). */
export function nanoToUsd(nano: number): number {
  return nano / NANO_PER_USD;
}

/** USD as a nano-dollar integer; null stays null. */
export function usdToNanoOrNull(usd: number | null | undefined): number | null {
  return usd === null || usd === undefined ? null : usdToNano(usd);
}

/** Nano-dollars → USD; null stays null. */
export function nanoToUsdOrNull(nano: number | string | bigint | null | undefined): number | null {
  return nano === null || nano === undefined ? null : nanoToUsd(Number(nano));
}

/** Exact sum of USD amounts (each rounded to the nano-dollar first), as USD. */
export function sumUsd(...amounts: number[]): number {
  let n = 0;
  for (const a of amounts) n += usdToNano(a);
  return nanoToUsd(n);
}

/** `a − b` in USD, exactly (at nano-dollar resolution). */
export function subUsd(a: number, b: number): number {
  return nanoToUsd(usdToNano(a) - usdToNano(b));
}

/** Nano-dollars as a fixed-point decimal string (`1234567` → `"0.001234567"`), for messages and logs. */
export function formatNano(nano: number, digits = 9): string {
  const neg = nano < 0;
  const s = String(Math.abs(Math.round(nano))).padStart(10, '0');
  let out = `${s.slice(0, -9)}.${s.slice(-9)}`;
  if (digits < 9) out = out.slice(0, out.length - (9 - digits));
  return (neg ? '-' : '') + out;
}

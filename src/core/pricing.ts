/**
 * Cost computation with exact decimal arithmetic.
 *
 * Prices in the catalog are decimal strings in USD per token (or per unit). All
 * arithmetic is exact on scaled integers (value = n / 10^scale), so e.g.
 * 1234 × "0.0000025" is exactly 0.003085 and 3 × "0.1" is exactly 0.3. Only the
 * final result is converted to a JS number, rounded to 12 significant digits.
 * The integers are BigInts, or plain numbers when every product and sum provably
 * stays below 2^53 (the usual case: the same exact result, several times cheaper).
 *
 * Token accounting (each token is billed exactly once, at its own rate):
 * - `promptTokens` INCLUDES cached-read and cache-write tokens (OpenAI convention;
 *   adapters for APIs that report them separately, e.g. Anthropic, normalise first).
 *   uncached prompt = promptTokens − cachedRead − cacheWrite   → `prompt`
 *   cachedRead                                                 → `input_cache_read`  (else `prompt`)
 *   cacheWrite                                                 → `input_cache_write` (else `prompt`)
 * - `completionTokens` INCLUDES reasoning tokens (OpenAI convention).
 *   reasoning                                                  → `internal_reasoning` (else `completion`)
 *   completion − reasoning                                     → `completion`
 * - plus `request` × requests (default 1) and `image` × images (default 0);
 * - `discount` (0..1) applies to the whole total.
 * Inconsistent upstream counts are clamped (negative → 0; cached read is capped at the
 * prompt count, cache write at what is left; reasoning is capped at the completion
 * count) so no token is ever billed twice.
 *
 * Pure logic: no I/O.
 */
import type { Pricing } from './catalog-types.js';
import { add, decToNumber, decToString, mul, mulInt, ONE, parseDec, pow10, sub, ZERO, type Dec } from './decimal.js';

export interface TokenUsage {
  /** All prompt tokens, including cached-read and cache-write tokens. */
  promptTokens: number;
  /** All completion tokens, including reasoning tokens. */
  completionTokens: number;
  cachedReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export interface CostOptions {
  /** Number of requests billed at `pricing.request` (default 1). */
  requests?: number;
  /** Number of images billed at `pricing.image` (default 0). */
  images?: number;
}

export interface CostResult {
  /** Total USD after discount; null when pricing is unknown (never silently $0). */
  cost: number | null;
  priced: boolean;
  /** Prompt-side token cost (uncached + cache read + cache write), after discount. */
  promptCost: number;
  /** Completion-side token cost (completion + reasoning), after discount. */
  completionCost: number;
  /** Per-request fee × requests, after discount. */
  requestCost: number;
  /** Per-image fee × images, after discount. */
  imageCost: number;
  /** The clamped token counts that were billed, one bucket per rate. */
  billedTokens: {
    uncachedPrompt: number;
    cachedRead: number;
    cacheWrite: number;
    completion: number;
    reasoning: number;
  };
  details: {
    upstream_inference_prompt_cost: number;
    upstream_inference_completions_cost: number;
    /** Equals `cost` (includes request and image fees); null when unpriced. */
    upstream_inference_cost: number | null;
  };
}

// ---------------------------------------------------------------------------
// Public helpers
// ---------------------------------------------------------------------------

/** Significant digits of returned costs. */
export const COST_SIGNIFICANT_DIGITS = 12;

/**
 * USD per million tokens from a per-token decimal price string, computed by exact
 * decimal shifting ("0.0000025" → 2.5). NaN when the string is not a decimal.
 */
export function pricePerMillion(priceStr: string | number): number {
  const d = parseDec(priceStr);
  if (!d) return NaN;
  return decToNumber(mul(d, { n: 1_000_000n, scale: 0 }));
}

/** Per-token decimal price string from a $/M figure (2.5 → "0.0000025"). Throws on invalid input. */
export function perMillionToPerToken(perMillion: string | number): string {
  const d = parseDec(perMillion);
  if (!d) throw new RangeError(`invalid price: ${String(perMillion)}`);
  return decToString({ n: d.n, scale: d.scale + 6 });
}

/** Decimal string without exponent notation (2.5e-7 → "0.00000025"). Throws on non-finite. */
export function formatPrice(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`cannot format non-finite price: ${n}`);
  const d = parseDec(n);
  if (!d) throw new RangeError(`cannot format price: ${n}`);
  return decToString(d);
}

/**
 * True when the pricing object is usable for billing: prompt and completion parse as
 * non-negative decimals and every optional price present does too. Negative prices
 * (some catalogs use "-1" for "variable") count as unknown.
 */
export function isPriced(pricing: Pricing | null | undefined): pricing is Pricing {
  return parsePricing(pricing) !== null;
}

interface ParsedPricing {
  prompt: Dec;
  completion: Dec;
  request: Dec;
  image: Dec;
  cacheRead: Dec;
  cacheWrite: Dec;
  reasoning: Dec;
  /** 1 − discount */
  factor: Dec;
  /** prompt + completion as a number (set on first use). */
  blended?: number;
  /** The same prices as integers over one scale with the discount folded in (set on first use; null: too large). */
  fixed?: FixedPrices | null;
}

/** Prices as safe integers over 10^scale (discount included): exact arithmetic in plain numbers. */
interface FixedPrices {
  scale: number;
  prompt: number;
  cacheRead: number;
  cacheWrite: number;
  completion: number;
  reasoning: number;
  request: number;
  image: number;
}

/** Largest power of ten that is an exact double (so `n / 10^k` is correctly rounded). */
const MAX_EXACT_POW10 = 22;
const POW10 = Array.from({ length: MAX_EXACT_POW10 + 1 }, (_, k) => 10 ** k);

function fixedPrices(p: ParsedPricing): FixedPrices | null {
  const all = [p.prompt, p.cacheRead, p.cacheWrite, p.completion, p.reasoning, p.request, p.image];
  const scale = Math.max(...all.map((d) => d.scale)) + p.factor.scale;
  if (scale > MAX_EXACT_POW10) return null;
  const ints: number[] = [];
  for (const d of all) {
    const n = d.n * p.factor.n * pow10(scale - d.scale - p.factor.scale);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) return null;
    ints.push(Number(n));
  }
  const [prompt, cacheRead, cacheWrite, completion, reasoning, request, image] = ints;
  return { scale, prompt, cacheRead, cacheWrite, completion, reasoning, request, image };
}

/**
 * `n / 10^scale` rounded (half away from zero) to `sig` significant digits, for a non-negative safe integer `n`;
 * the same number `decToNumber` gives. NaN when the plain-number route cannot be exact (the caller then uses BigInts).
 */
function fixedToNumber(n: number, scale: number, sig: number): number {
  if (n === 0) return 0;
  let digits = 1;
  while (digits < 16 && n >= POW10[digits]) digits++;
  if (digits > sig) {
    const drop = digits - sig;
    const div = POW10[drop];
    if (n > Number.MAX_SAFE_INTEGER - div) return NaN; // q × div below must stay exact
    let q = Math.floor(n / div);
    let r = n - q * div; // exact: both below 2^53
    if (r < 0) {
      q--;
      r += div;
    } else if (r >= div) {
      q++;
      r -= div;
    }
    if (r * 2 >= div) q++;
    n = q;
    scale -= drop;
  }
  return scale >= 0 ? n / POW10[scale] : NaN;
}

function parseNonNeg(v: string | undefined, fallback: Dec): Dec | null | undefined {
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return fallback;
  const d = parseDec(v);
  if (!d || d.n < 0n) return null;
  return d;
}

/** Catalog pricing objects are shared and never mutated: each is parsed once. */
const parsedPricing = new WeakMap<Pricing, ParsedPricing | null>();

function parsePricing(pricing: Pricing | null | undefined): ParsedPricing | null {
  if (!pricing) return null;
  let parsed = parsedPricing.get(pricing);
  if (parsed === undefined) {
    parsed = parsePricingUncached(pricing);
    parsedPricing.set(pricing, parsed);
  }
  return parsed;
}

function parsePricingUncached(pricing: Pricing): ParsedPricing | null {
  if (typeof pricing.prompt !== 'string' && typeof pricing.prompt !== 'number') return null;
  if (typeof pricing.completion !== 'string' && typeof pricing.completion !== 'number') return null;
  const prompt = parseDec(pricing.prompt);
  const completion = parseDec(pricing.completion);
  if (!prompt || !completion || prompt.n < 0n || completion.n < 0n) return null;
  const request = parseNonNeg(pricing.request, ZERO);
  const image = parseNonNeg(pricing.image, ZERO);
  const cacheRead = parseNonNeg(pricing.input_cache_read, prompt);
  const cacheWrite = parseNonNeg(pricing.input_cache_write, prompt);
  const reasoning = parseNonNeg(pricing.internal_reasoning, completion);
  if (!request || !image || !cacheRead || !cacheWrite || !reasoning) return null;
  let discount = typeof pricing.discount === 'number' && Number.isFinite(pricing.discount) ? pricing.discount : 0;
  discount = Math.min(1, Math.max(0, discount));
  const factor = sub(ONE, parseDec(discount) ?? ZERO);
  return { prompt, completion, request, image, cacheRead, cacheWrite, reasoning, factor };
}

/** Non-negative integer count (NaN/negative → 0, fractions rounded). */
function count(v: number | undefined): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
  return Math.round(v);
}

/** Computes the cost of one generation. See the module comment for the rules. */
export function computeCost(pricing: Pricing | null, usage: TokenUsage, opts?: CostOptions): CostResult {
  return costOf(pricing, usage, opts, true);
}

/** `computeCost` always through BigInts (the reference the plain-number route is tested against). */
export function computeCostExact(pricing: Pricing | null, usage: TokenUsage, opts?: CostOptions): CostResult {
  return costOf(pricing, usage, opts, false);
}

function costOf(pricing: Pricing | null, usage: TokenUsage, opts: CostOptions | undefined, plainNumbers: boolean): CostResult {
  // Clamp the token buckets so that their sum equals the (clamped) totals.
  const prompt = count(usage.promptTokens);
  const cachedRead = Math.min(count(usage.cachedReadTokens), prompt);
  const cacheWrite = Math.min(count(usage.cacheWriteTokens), prompt - cachedRead);
  const uncachedPrompt = prompt - cachedRead - cacheWrite;
  const completionAll = count(usage.completionTokens);
  const reasoning = Math.min(count(usage.reasoningTokens), completionAll);
  const completion = completionAll - reasoning;
  const billedTokens = { uncachedPrompt, cachedRead, cacheWrite, completion, reasoning };

  const p = parsePricing(pricing);
  if (!p) {
    return {
      cost: null,
      priced: false,
      promptCost: 0,
      completionCost: 0,
      requestCost: 0,
      imageCost: 0,
      billedTokens,
      details: { upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: 0, upstream_inference_cost: null },
    };
  }

  const requests = opts?.requests === undefined ? 1 : count(opts.requests);
  const images = count(opts?.images);

  const f = plainNumbers ? (p.fixed ??= fixedPrices(p)) : null;
  if (f) {
    // Every term is a product of safe integers; a result at or above 2^53 (inexact) fails isSafeInteger.
    const terms = [f.prompt * uncachedPrompt, f.cacheRead * cachedRead, f.cacheWrite * cacheWrite, f.completion * completion, f.reasoning * reasoning, f.request * requests, f.image * images];
    const [uncachedN, cachedReadN, cacheWriteN, completionOnlyN, reasoningN, requestN, imageN] = terms;
    const promptN = uncachedN + cachedReadN + cacheWriteN;
    const completionN = completionOnlyN + reasoningN;
    const totalN = promptN + completionN + requestN + imageN;
    if (Number.isSafeInteger(totalN) && terms.every(Number.isSafeInteger)) {
      const S = COST_SIGNIFICANT_DIGITS;
      const cost = fixedToNumber(totalN, f.scale, S);
      const promptCost = fixedToNumber(promptN, f.scale, S);
      const completionCost = fixedToNumber(completionN, f.scale, S);
      const requestCost = fixedToNumber(requestN, f.scale, S);
      const imageCost = fixedToNumber(imageN, f.scale, S);
      if (!Number.isNaN(cost + promptCost + completionCost + requestCost + imageCost)) {
        return priced(cost, promptCost, completionCost, requestCost, imageCost, billedTokens);
      }
    }
  }
  return exactCost(p, billedTokens, requests, images);
}

function priced(cost: number, promptCost: number, completionCost: number, requestCost: number, imageCost: number, billedTokens: CostResult['billedTokens']): CostResult {
  return {
    cost,
    priced: true,
    promptCost,
    completionCost,
    requestCost,
    imageCost,
    billedTokens,
    details: { upstream_inference_prompt_cost: promptCost, upstream_inference_completions_cost: completionCost, upstream_inference_cost: cost },
  };
}

/** The cost in BigInt arithmetic: any size. */
function exactCost(p: ParsedPricing, t: CostResult['billedTokens'], requests: number, images: number): CostResult {
  const promptExact = mul(add(add(mulInt(p.prompt, t.uncachedPrompt), mulInt(p.cacheRead, t.cachedRead)), mulInt(p.cacheWrite, t.cacheWrite)), p.factor);
  const completionExact = mul(add(mulInt(p.completion, t.completion), mulInt(p.reasoning, t.reasoning)), p.factor);
  const requestExact = mul(mulInt(p.request, requests), p.factor);
  const imageExact = mul(mulInt(p.image, images), p.factor);
  const totalExact = add(add(promptExact, completionExact), add(requestExact, imageExact));
  const S = COST_SIGNIFICANT_DIGITS;
  return priced(decToNumber(totalExact, S), decToNumber(promptExact, S), decToNumber(completionExact, S), decToNumber(requestExact, S), decToNumber(imageExact, S), t);
}


/**
 * Blended per-token price used for routing decisions (prompt + completion, USD per
 * token) as a JS number; null when the pricing is unknown/invalid. Ranking only;
 * never used for billing.
 */
export function blendedTokenPrice(pricing: Pricing | null | undefined): number | null {
  const p = parsePricing(pricing);
  if (!p) return null;
  // Routing asks on every request: computed once per parsed price (which is itself kept per pricing object).
  return (p.blended ??= decToNumber(add(p.prompt, p.completion)));
}

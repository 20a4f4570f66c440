import { describe, it, expect } from 'vitest';
import type { Pricing } from '../../src/core/catalog-types.js';
import {
  computeCostExact,
  computeCost,
  pricePerMillion,
  formatPrice,
  perMillionToPerToken,
  isPriced,
  blendedTokenPrice,
} from '../../src/core/pricing.js';

const base: Pricing = { prompt: '0.0000025', completion: '0.00001' };

describe('computeCost: basic token billing', () => {
  it('bills prompt and completion at their rates, exactly', () => {
    // 1234 × 0.0000025 = 0.003085 ; 567 × 0.00001 = 0.00567 ; total = 0.008755
    const r = computeCost(base, { promptTokens: 1234, completionTokens: 567 });
    expect(r.priced).toBe(true);
    expect(r.promptCost).toBe(0.003085);
    expect(r.completionCost).toBe(0.00567);
    expect(r.cost).toBe(0.008755);
    expect(r.details).toEqual({
      upstream_inference_prompt_cost: 0.003085,
      upstream_inference_completions_cost: 0.00567,
      upstream_inference_cost: 0.008755,
    });
  });

  it('zero usage costs 0 (and still the default single request fee, which is absent here)', () => {
    const r = computeCost(base, { promptTokens: 0, completionTokens: 0 });
    expect(r.cost).toBe(0);
    expect(r.priced).toBe(true);
  });
});

describe('computeCost: cache and reasoning rates', () => {
  const p: Pricing = {
    prompt: '0.000003',
    completion: '0.000015',
    input_cache_read: '0.0000003',
    input_cache_write: '0.00000375',
    internal_reasoning: '0.00002',
  };

  it('bills each prompt bucket and completion bucket once at its own rate', () => {
    // prompt 10000 = 6000 cached read + 2000 cache write + 2000 uncached
    //   uncached 2000 × 0.000003   = 0.006
    //   read     6000 × 0.0000003  = 0.0018
    //   write    2000 × 0.00000375 = 0.0075
    //   promptCost                 = 0.0153
    // completion 1000 = 400 reasoning + 600 plain
    //   reasoning 400 × 0.00002    = 0.008
    //   plain     600 × 0.000015   = 0.009
    //   completionCost             = 0.017
    // total = 0.0323
    const r = computeCost(p, {
      promptTokens: 10000,
      completionTokens: 1000,
      cachedReadTokens: 6000,
      cacheWriteTokens: 2000,
      reasoningTokens: 400,
    });
    expect(r.billedTokens).toEqual({ uncachedPrompt: 2000, cachedRead: 6000, cacheWrite: 2000, completion: 600, reasoning: 400 });
    expect(r.promptCost).toBe(0.0153);
    expect(r.completionCost).toBe(0.017);
    expect(r.cost).toBe(0.0323);
  });

  it('falls back to the prompt rate for cache tokens and the completion rate for reasoning when absent', () => {
    // all 1000 prompt tokens at 0.0000025 = 0.0025 (cached or not)
    // all 100 completion tokens at 0.00001 = 0.001 (reasoning or not) ; total 0.0035
    const r = computeCost(base, {
      promptTokens: 1000,
      completionTokens: 100,
      cachedReadTokens: 300,
      cacheWriteTokens: 200,
      reasoningTokens: 50,
    });
    expect(r.promptCost).toBe(0.0025);
    expect(r.completionCost).toBe(0.001);
    expect(r.cost).toBe(0.0035);
  });

  it('clamps inconsistent counts so no token is billed twice', () => {
    // cachedRead 150 > prompt 100 → 100 read, 0 write, 0 uncached: 100 × 0.0000003 = 0.00003
    // reasoning 80 > completion 50 → 50 reasoning, 0 plain: 50 × 0.00002 = 0.001
    const r = computeCost(p, {
      promptTokens: 100,
      completionTokens: 50,
      cachedReadTokens: 150,
      cacheWriteTokens: 30,
      reasoningTokens: 80,
    });
    expect(r.billedTokens).toEqual({ uncachedPrompt: 0, cachedRead: 100, cacheWrite: 0, completion: 0, reasoning: 50 });
    expect(r.promptCost).toBe(0.00003);
    expect(r.completionCost).toBe(0.001);
    expect(r.cost).toBe(0.00103);
  });

  it('cache write is capped at what remains after cached reads', () => {
    // prompt 100, read 70, write 50 → write capped at 30, uncached 0
    // 70 × 0.0000003 = 0.000021 ; 30 × 0.00000375 = 0.0001125 ; total 0.0001335
    const r = computeCost(p, { promptTokens: 100, completionTokens: 0, cachedReadTokens: 70, cacheWriteTokens: 50 });
    expect(r.billedTokens.cacheWrite).toBe(30);
    expect(r.billedTokens.uncachedPrompt).toBe(0);
    expect(r.cost).toBe(0.0001335);
  });

  it('negative and non-finite token counts count as 0', () => {
    const r = computeCost(base, { promptTokens: -5, completionTokens: Number.NaN, cachedReadTokens: -3 });
    expect(r.cost).toBe(0);
    expect(r.billedTokens).toEqual({ uncachedPrompt: 0, cachedRead: 0, cacheWrite: 0, completion: 0, reasoning: 0 });
  });
});

describe('computeCost: unknown pricing', () => {
  it('null pricing → cost null, priced false', () => {
    const r = computeCost(null, { promptTokens: 10, completionTokens: 10 });
    expect(r.cost).toBeNull();
    expect(r.priced).toBe(false);
    expect(r.details.upstream_inference_cost).toBeNull();
    expect(r.promptCost).toBe(0);
  });

  it('unparseable or negative prices count as unknown (never silently $0)', () => {
    expect(computeCost({ prompt: 'abc', completion: '0.1' }, { promptTokens: 1, completionTokens: 1 }).cost).toBeNull();
    expect(computeCost({ prompt: '-1', completion: '-1' }, { promptTokens: 1, completionTokens: 1 }).priced).toBe(false);
    expect(computeCost({ ...base, input_cache_read: 'x' }, { promptTokens: 1, completionTokens: 1 }).cost).toBeNull();
    expect(isPriced({ prompt: '0', completion: '0' })).toBe(true);
    expect(isPriced(null)).toBe(false);
  });
});

describe('computeCost: discount, request and image fees', () => {
  it('applies the discount to the whole total', () => {
    // 1000 × 0.000001 + 1000 × 0.000002 = 0.003 ; request 0.001 × 1 → 0.004 ; × (1 − 0.25) = 0.003
    const r = computeCost(
      { prompt: '0.000001', completion: '0.000002', request: '0.001', discount: 0.25 },
      { promptTokens: 1000, completionTokens: 1000 },
    );
    expect(r.promptCost).toBe(0.00075); // 0.001 × 0.75
    expect(r.completionCost).toBe(0.0015); // 0.002 × 0.75
    expect(r.requestCost).toBe(0.00075); // 0.001 × 0.75
    expect(r.cost).toBe(0.003);
  });

  it('clamps discount to [0, 1]', () => {
    expect(computeCost({ ...base, discount: 2 }, { promptTokens: 1000, completionTokens: 0 }).cost).toBe(0);
    expect(computeCost({ ...base, discount: -1 }, { promptTokens: 1000, completionTokens: 0 }).cost).toBe(0.0025);
  });

  it('bills the request fee once by default, or × requests', () => {
    // 100 × 0.0000025 = 0.00025 ; + 0.005 request = 0.00525
    const p: Pricing = { ...base, request: '0.005' };
    expect(computeCost(p, { promptTokens: 100, completionTokens: 0 }).cost).toBe(0.00525);
    // 3 requests: 0.00025 + 0.015 = 0.01525
    expect(computeCost(p, { promptTokens: 100, completionTokens: 0 }, { requests: 3 }).cost).toBe(0.01525);
    expect(computeCost(p, { promptTokens: 100, completionTokens: 0 }, { requests: 0 }).cost).toBe(0.00025);
  });

  it('bills images × image price', () => {
    // 2 × 0.01 = 0.02 ; + 10 × 0.0000025 = 0.000025 → 0.020025
    const r = computeCost({ ...base, image: '0.01' }, { promptTokens: 10, completionTokens: 0 }, { images: 2 });
    expect(r.imageCost).toBe(0.02);
    expect(r.cost).toBe(0.020025);
  });
});

describe('computeCost: exact decimal arithmetic', () => {
  it('3 × "0.1" prices give exactly 0.3', () => {
    expect(0.1 + 0.1 + 0.1).not.toBe(0.3); // what naive float maths gives
    // 1 prompt × 0.1 + 1 completion × 0.1 + 1 request × 0.1 = 0.3
    const r = computeCost({ prompt: '0.1', completion: '0.1', request: '0.1' }, { promptTokens: 1, completionTokens: 1 });
    expect(r.cost).toBe(0.3);
  });

  it('0.1 + 0.2 style sums are exact', () => {
    // 1 × 0.1 + 1 × 0.2 = 0.3
    expect(computeCost({ prompt: '0.1', completion: '0.2' }, { promptTokens: 1, completionTokens: 1 }).cost).toBe(0.3);
  });

  it('accepts exponent notation in price strings', () => {
    // 1234 × 2.5e-6 = 0.003085
    expect(computeCost({ prompt: '2.5e-6', completion: '0' }, { promptTokens: 1234, completionTokens: 0 }).cost).toBe(0.003085);
  });

  it('rounds to 12 significant digits', () => {
    // 3 × 0.3333333333333333 = 0.9999999999999999 → 12 significant digits → 1
    expect(computeCost({ prompt: '0.3333333333333333', completion: '0' }, { promptTokens: 3, completionTokens: 0 }).cost).toBe(1);
    // 7 × 0.00000012345678901234 = 0.00000086419752308638 → 8.64197523086e-7
    expect(
      computeCost({ prompt: '0.00000012345678901234', completion: '0' }, { promptTokens: 7, completionTokens: 0 }).cost,
    ).toBe(8.64197523086e-7);
  });

  it('large volumes stay exact', () => {
    // 123456789 × 0.00000015 = 18.51851835
    expect(computeCost({ prompt: '0.00000015', completion: '0' }, { promptTokens: 123456789, completionTokens: 0 }).cost).toBe(
      18.51851835,
    );
  });
});

describe('price helpers', () => {
  it('pricePerMillion shifts the decimal exactly', () => {
    expect(pricePerMillion('0.0000025')).toBe(2.5);
    expect(pricePerMillion('0.00000015')).toBe(0.15);
    expect(pricePerMillion('0.0000003')).toBe(0.3);
    expect(pricePerMillion('1e-7')).toBe(0.1);
    expect(pricePerMillion('0')).toBe(0);
    expect(pricePerMillion('nope')).toBeNaN();
  });

  it('formatPrice writes plain decimals without exponent', () => {
    expect(formatPrice(2.5e-7)).toBe('0.00000025');
    expect(formatPrice(0.1)).toBe('0.1');
    expect(formatPrice(0)).toBe('0');
    expect(formatPrice(-1.5e-8)).toBe('-0.000000015');
    expect(formatPrice(1e21)).toBe('1000000000000000000000');
    expect(formatPrice(12.5)).toBe('12.5');
    expect(() => formatPrice(Number.NaN)).toThrow(RangeError);
  });

  it('perMillionToPerToken is the inverse of pricePerMillion', () => {
    expect(perMillionToPerToken(2.5)).toBe('0.0000025');
    expect(perMillionToPerToken('0.15')).toBe('0.00000015');
    expect(pricePerMillion(perMillionToPerToken('3'))).toBe(3);
  });

  it('blendedTokenPrice sums prompt and completion, null when unknown', () => {
    expect(blendedTokenPrice({ prompt: '0.0000001', completion: '0.0000002' })).toBe(3e-7);
    expect(blendedTokenPrice(null)).toBeNull();
  });

  it('the plain-number route gives exactly the BigInt result, and large figures fall back to BigInts', () => {
    // A deterministic generator: prices with 1–12 decimals, token counts up to 10^9, discounts, request/image fees.
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const price = () => {
      const digits = 1 + rnd(12);
      return `0.${String(rnd(10 ** Math.min(digits, 9))).padStart(digits, '0')}`;
    };
    for (let i = 0; i < 3000; i++) {
      const pricing: Pricing = { prompt: price(), completion: price() };
      if (rnd(2)) pricing.input_cache_read = price();
      if (rnd(2)) pricing.input_cache_write = price();
      if (rnd(3) === 0) pricing.internal_reasoning = price();
      if (rnd(4) === 0) pricing.request = price();
      if (rnd(4) === 0) pricing.image = price();
      if (rnd(4) === 0) pricing.discount = rnd(100) / 100;
      const big = 10 ** (1 + rnd(9));
      const usage = { promptTokens: rnd(big), completionTokens: rnd(big), cachedReadTokens: rnd(big), cacheWriteTokens: rnd(1000), reasoningTokens: rnd(big) };
      const opts = { requests: rnd(3), images: rnd(3) };
      expect(computeCost(pricing, usage, opts)).toEqual(computeCostExact(pricing, usage, opts));
    }
    // Beyond 2^53 (a price with many digits × a huge count): still exact, through BigInts.
    const huge: Pricing = { prompt: '0.000000123456789012345', completion: '1' };
    const usage = { promptTokens: 987_654_321_123, completionTokens: 3 };
    expect(computeCost(huge, usage)).toEqual(computeCostExact(huge, usage));
    expect(computeCost(huge, usage).cost).toBe(121935.63114) // 121935.631140013046… rounded to 12 significant digits;
  });
});

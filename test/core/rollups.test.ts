/** Rollups' pure part (core/rollups.ts): bins, quantiles within a bin, exact sums, and the grain chosen per range. */
import { describe, expect, it } from 'vitest';
import { binUpper, grainFor, histogramQuantile, LATENCY_BUCKETS, latencyBin, rollupDeltas } from '../../src/core/rollups.js';

describe('latency histogram', () => {
  it('puts each latency in the bin whose bounds hold it', () => {
    for (const ms of [0, 1, 2, 7, 100, 999, 5000, 60_000]) {
      const i = latencyBin(ms);
      expect(ms <= binUpper(i)).toBe(true);
      if (i > 0) expect(ms > binUpper(i - 1)).toBe(true);
    }
    expect(latencyBin(1e12)).toBe(LATENCY_BUCKETS - 1);
  });

  it('reads quantiles within a factor 1.3 of the exact nearest-rank value', () => {
    let seed = 3;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const xs = Array.from({ length: 5000 }, () => Math.floor(10 + rnd() ** 3 * 20_000));
    const hist = new Array(LATENCY_BUCKETS).fill(0);
    for (const x of xs) hist[latencyBin(x)]++;
    const sorted = [...xs].sort((a, b) => a - b);
    for (const p of [0.5, 0.95, 0.99]) {
      const exact = sorted[Math.ceil(p * xs.length) - 1]!;
      const est = histogramQuantile(hist, p)!;
      expect(est / exact).toBeGreaterThan(1 / 1.3);
      expect(est / exact).toBeLessThan(1.3);
    }
    expect(histogramQuantile(new Array(LATENCY_BUCKETS).fill(0), 0.5)).toBeNull();
  });
});

describe('rollupDeltas', () => {
  const row = (over: Record<string, unknown> = {}) => ({
    created_at: '2026-01-05T10:17:42.123Z', workspace_id: 'w', key_hash: 'k', model: 'm', provider_name: 'p', endpoint_tag: 'e', api_type: 'completions', finish_reason: 'stop',
    status: 200, is_byok: false, tokens_prompt: 10, tokens_completion: 5, native_tokens_reasoning: 1, total_cost: 0.1, upstream_inference_cost: 0.1, latency_ms: 120, ...over,
  });
  it('sums per grain and bucket, exactly (0.1 + 0.2 is 300,000,000 nano-dollars)', () => {
    const d = rollupDeltas([row(), row({ total_cost: 0.2, created_at: '2026-01-05T10:17:59.999Z' }), row({ created_at: '2026-01-05T11:00:00.000Z' })]);
    const minute = d.filter((x) => x.grain === 'minute');
    expect(minute.map((x) => [x.bucket, x.requests, x.cost_nano])).toEqual([
      ['2026-01-05T10:17:00.000Z', 2, 300_000_000],
      ['2026-01-05T11:00:00.000Z', 1, 100_000_000],
    ]);
    const day = d.filter((x) => x.grain === 'day');
    expect(day).toHaveLength(1);
    expect(day[0]!.requests).toBe(3);
    expect(day[0]!.bucket).toBe('2026-01-05T00:00:00.000Z');
    expect(day[0]!.hist.reduce((a, b) => a + b, 0)).toBe(3);
  });
});

describe('grainFor', () => {
  const D = 86_400_000, H = 3_600_000, M = 60_000;
  it('takes the coarsest grain both ends fall on, no coarser than the bucket asked for', () => {
    expect(grainFor(10 * D, 40 * D, null)).toBe('day');
    expect(grainFor(10 * D, 40 * D, 'week')).toBe('day');
    expect(grainFor(10 * D, 40 * D, 'hour')).toBe('hour');
    expect(grainFor(10 * D + H, 40 * D, null)).toBe('hour');
    expect(grainFor(10 * D + M, 40 * D, 'day')).toBe('minute');
    expect(grainFor(10 * D + 1, 40 * D, null)).toBeNull();
  });
});

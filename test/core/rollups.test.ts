/** Rollups' pure part (core/rollups.ts): bins, quantiles within a bin, exact sums, and the grain chosen per range. */
import { describe, expect, it } from 'vitest';
import { binUpper, grainFor, histogramQuantile, LATENCY_BUCKETS, latencyBin, rollupDeltas, type RollupDelta } from '../../src/core/rollups.js';
import { usdToNano } from '../../src/core/money.js';

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

  // The reference: every record keyed by one string of grain, bucket and every dimension value, as plainly as possible.
  function reference(rows: ReturnType<typeof row>[]) {
    const cut = { minute: 16, hour: 13, day: 10 } as const;
    const zero = '0000-00-00T00:00:00.000Z';
    const byKey = new Map<string, RollupDelta>();
    const out: RollupDelta[] = [];
    for (const r of rows) {
      const iso = new Date(r.created_at as string).toISOString();
      const billed = r.total_cost !== null && (r.total_cost as number) > 0;
      for (const grain of ['minute', 'hour', 'day'] as const) {
        const bucket = iso.slice(0, cut[grain]) + zero.slice(cut[grain]);
        const dims = { workspace_id: r.workspace_id as string, key_hash: r.key_hash as string, model: (r.model as string | null) ?? '', provider_name: (r.provider_name as string | null) ?? '', endpoint_tag: (r.endpoint_tag as string | null) ?? '', api_type: r.api_type as string, finish_reason: (r.finish_reason as string | null) ?? '' };
        const key = JSON.stringify([grain, bucket, dims, r.status, r.is_byok, billed]);
        let d = byKey.get(key);
        if (!d) {
          d = { grain, bucket, ...dims, status: r.status as number, is_byok: r.is_byok as boolean, billed, requests: 0, tokens_prompt: 0, tokens_completion: 0, tokens_reasoning: 0, cost_nano: 0, upstream_cost_nano: 0, latency_ms_sum: 0, hist: new Array(LATENCY_BUCKETS).fill(0) };
          byKey.set(key, d);
          out.push(d);
        }
        d.requests++;
        d.tokens_prompt += r.tokens_prompt as number;
        d.tokens_completion += r.tokens_completion as number;
        d.tokens_reasoning += r.native_tokens_reasoning as number;
        d.cost_nano += r.total_cost === null ? 0 : usdToNano(r.total_cost as number);
        d.upstream_cost_nano += r.upstream_inference_cost === null ? 0 : usdToNano(r.upstream_inference_cost as number);
        d.latency_ms_sum += Math.round(r.latency_ms as number);
        d.hist[latencyBin(r.latency_ms as number)]!++;
      }
    }
    return out;
  }

  it('gives what keying every record by all its values gives, in the same order, over random batches', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648), seed % n);
    const pick = <T>(xs: T[]) => xs[rand(xs.length)]!;
    const times = ['2026-01-05T10:17:42.123Z', '2026-01-05T10:17:59.999Z', '2026-01-05T10:18:00.000Z', '2026-01-05T11:00:00.000Z', '2026-01-06T00:00:00.000Z', '2026-01-05T23:59:59.999Z', '2026-01-05T10:17:42+00:00', '2026-01-05 12:30:00Z'];
    for (let batch = 0; batch < 500; batch++) {
      // Runs of like records (the usual batch) broken by others; null and '' dimension values both.
      const rows: ReturnType<typeof row>[] = [];
      let last = row();
      for (let i = 0, n = 1 + rand(40); i < n; i++) {
        if (rand(3) === 0 || i === 0) {
          last = row({
            created_at: pick(times), workspace_id: pick(['w', 'v']), key_hash: pick(['k', 'j']), model: pick(['m', 'n', null, '']), provider_name: pick(['p', null]),
            endpoint_tag: pick(['e', null, '']), finish_reason: pick(['stop', null, 'length']), status: pick([200, 200, 502]), is_byok: pick([false, true]),
            total_cost: pick([0.1, 0.2, 0, null, 0.000_000_001]), upstream_inference_cost: pick([0.1, null]), latency_ms: pick([0.5, 1, 120, 4_000.4, 1e7]),
          });
        } else if (rand(2) === 0) last = { ...last, created_at: pick(times) };
        rows.push(last);
      }
      expect(rollupDeltas(rows)).toEqual(reference(rows));
    }
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

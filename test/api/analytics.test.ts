/** GET /analytics/meta and POST /analytics/query: answers equal sums computed from the raw generation records. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, startGateway, createInferenceKey, type TestGateway } from '../helpers.js';
import type { GenerationRow } from '../../src/store/types.js';
import { expectError, expectStatus } from './util.js';

/** mulberry32: a fixed-seed PRNG, so every run makes the same records and queries. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const HOUR = 3600_000;
const SUM_METRICS = ['request_count', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'total_tokens', 'total_cost', 'error_count', 'error_rate', 'avg_latency_ms'];
const PCT: Record<string, number> = { p50_latency_ms: 0.5, p95_latency_ms: 0.95, p99_latency_ms: 0.99 };
const METRICS = [...SUM_METRICS, ...Object.keys(PCT)];
const DIMS: Record<string, keyof GenerationRow> = { model: 'model', provider: 'provider_name', api_key_id: 'key_hash', workspace_id: 'workspace_id', api_type: 'api_type', finish_reason: 'finish_reason', status: 'status' };
const CUT: Record<string, number> = { minute: 16, hour: 13, day: 10 };
const TAIL: Record<string, string> = { minute: ':00.000Z', hour: ':00:00.000Z', day: 'T00:00:00.000Z' };
/** The record's time bucket: minute/hour/day cut from the ISO time; week from Monday; month from the 1st (UTC). */
function bucketOf(iso: string, g: string): string {
  if (g === 'month') return `${iso.slice(0, 7)}-01T00:00:00.000Z`;
  if (g === 'week') {
    const d = new Date(`${iso.slice(0, 10)}T00:00:00.000Z`);
    d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
    return d.toISOString();
  }
  return iso.slice(0, CUT[g]) + TAIL[g];
}
/** Nearest-rank quantile of the raw latencies. */
function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(p * s.length)) - 1]!;
}

describe.each(BACKENDS)('analytics (%s)', (backend) => {
  let t: TestGateway;
  const rows: GenerationRow[] = [];
  const rnd = prng(19);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const start = end - 72 * HOUR;

  beforeAll(async () => {
    t = await startGateway(backend);
    const keys = [(await createInferenceKey(t, { name: 'a' })).hash, (await createInferenceKey(t, { name: 'b' })).hash];
    for (let i = 0; i < 600; i++) {
      const failed = rnd() < 0.15;
      rows.push({
        id: `gen-an-${i}`, request_id: `req-${i}`, key_hash: pick(keys), workspace_id: pick(['ws-1', 'ws-2']), api_type: pick(['completions', 'embeddings', 'rerank']),
        requested_model: 'x', model: pick(['m/alpha', 'm/beta', 'm/gamma']), provider_name: failed && rnd() < 0.5 ? null : pick(['p1', 'p2']), endpoint_tag: 'e', upstream_id: null,
        streamed: false, cancelled: false, status: failed ? pick([400, 429, 502]) : 200, finish_reason: failed ? null : pick(['stop', 'length', 'tool_calls']),
        native_finish_reason: null, tokens_prompt: Math.floor(rnd() * 1000), tokens_completion: Math.floor(rnd() * 500), native_tokens_reasoning: Math.floor(rnd() * 50),
        native_tokens_cached: 0, native_tokens_cache_write: 0, total_cost: failed ? null : Math.floor(rnd() * 1000) / 1e6, upstream_inference_cost: null, is_byok: false,
        latency_ms: Math.floor(rnd() * 5000), ttft_ms: null, generation_time_ms: null, attempts: [], error: null, preset_id: null, session_id: null,
        created_at: new Date(start + Math.floor(rnd() * 72 * HOUR)).toISOString(),
      });
    }
    await t.gw.svc.store.recordGenerations(rows, []);
  });
  afterAll(async () => t?.close());

  /** The answer, computed from the raw records. */
  function expected(q: any): Map<string, Record<string, number>> {
    const out = new Map<string, { n: number; sums: Record<string, number>; lats: number[] }>();
    const s = q.time_range.start, e = q.time_range.end;
    for (const r of rows) {
      if (r.created_at < s || r.created_at >= e) continue;
      const ok = (q.filters ?? []).every((f: any) => {
        const v = r[DIMS[f.field]!] as string | number | null;
        const vals = Array.isArray(f.value) ? f.value : [f.value];
        if (f.operator === 'gt') return v !== null && v > f.value;
        if (f.operator === 'gte') return v !== null && v >= f.value;
        if (f.operator === 'lt') return v !== null && v < f.value;
        if (f.operator === 'lte') return v !== null && v <= f.value;
        return f.operator === 'eq' || f.operator === 'in' ? v !== null && vals.includes(v) : v === null || !vals.includes(v);
      });
      if (!ok) continue;
      const key = JSON.stringify([q.granularity ? bucketOf(r.created_at, q.granularity) : null, ...(q.dimensions ?? []).map((d: string) => r[DIMS[d]!] ?? null)]);
      const g = out.get(key) ?? { n: 0, sums: { p: 0, c: 0, rs: 0, cost: 0, err: 0, lat: 0 }, lats: [] as number[] };
      g.n++;
      g.lats.push(r.latency_ms);
      g.sums.p! += r.tokens_prompt; g.sums.c! += r.tokens_completion; g.sums.rs! += r.native_tokens_reasoning; g.sums.cost! += r.total_cost ?? 0; g.sums.err! += r.status >= 400 ? 1 : 0; g.sums.lat! += r.latency_ms;
      out.set(key, g);
    }
    const res = new Map<string, Record<string, number>>();
    for (const [k, { n, sums, lats }] of out) {
      const all: Record<string, number> = {
        ...Object.fromEntries(Object.entries(PCT).map(([m, p]) => [m, quantile(lats, p)])), request_count: n, prompt_tokens: sums.p!, completion_tokens: sums.c!, reasoning_tokens: sums.rs!, total_tokens: sums.p! + sums.c!, total_cost: sums.cost!, error_count: sums.err!, error_rate: sums.err! / n, avg_latency_ms: sums.lat! / n };
      res.set(k, Object.fromEntries(q.metrics.map((m: string) => [m, all[m]])));
    }
    return res;
  }

  function randomQuery() {
    const metrics = METRICS.filter(() => rnd() < 0.4);
    if (metrics.length === 0) metrics.push(pick(METRICS));
    const dimensions = Object.keys(DIMS).filter(() => rnd() < 0.25).slice(0, 2);
    const granularity = pick([undefined, 'minute', 'hour', 'day', 'week', 'month']);
    const filters = rnd() < 0.6 ? [(() => {
      const field = pick(Object.keys(DIMS).filter((d) => d !== 'api_key_id' && d !== 'workspace_id'));
      const values = [...new Set(rows.map((r) => r[DIMS[field]!]).filter((v) => v !== null))] as string[];
      const operator = pick(['eq', 'neq', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte']);
      return { field, operator, value: ['in', 'not_in'].includes(operator) ? values.filter(() => rnd() < 0.5).concat(values[0]!) : pick(values) };
    })()] : [];
    const a = start + Math.floor(rnd() * 48) * HOUR + Math.floor(rnd() * 60) * 60_000;
    const b = a + (1 + Math.floor(rnd() * 40)) * HOUR;
    return { metrics, dimensions, ...(granularity ? { granularity } : {}), filters, time_range: { start: new Date(a).toISOString(), end: new Date(b).toISOString() }, limit: 10000 };
  }

  it('answers 80 random queries with the sums of the raw records (percentiles within a histogram bin)', async () => {
    let compared = 0;
    for (let i = 0; i < 80; i++) {
      const q = randomQuery();
      const res = await t.call('POST', '/analytics/query', { body: q });
      expectStatus(res, 200);
      const want = expected(q);
      const got = new Map<string, Record<string, number>>();
      for (const r of res.body.data.data) {
        const key = JSON.stringify([q.granularity ? r[`date__${q.granularity}`] : null, ...q.dimensions.map((d) => r[d] ?? null)]);
        got.set(key, Object.fromEntries(q.metrics.map((m) => [m, r[m]])));
      }
      expect([...got.keys()].sort(), JSON.stringify(q)).toEqual([...want.keys()].sort());
      for (const [k, w] of want) {
        for (const m of q.metrics) {
          const g = got.get(k)![m]!;
          // Sums exact; percentiles from the bounded histogram: within one bin (a factor 1.3) of the exact value.
          if (m in PCT) expect(g >= w[m]! / 1.3 - 1 && g <= w[m]! * 1.3 + 1, `${JSON.stringify(q)} ${k} ${m}: ${g} vs ${w[m]}`).toBe(true);
          else expect(g, `${JSON.stringify(q)} ${k} ${m}`).toBeCloseTo(w[m]!, 6);
        }
      }
      expect(res.body.data.metadata).toMatchObject({ row_count: want.size, truncated: false });
      compared += want.size;
    }
    expect(compared).toBeGreaterThan(100); // the queries matched records, not just empty answers
  });

  it('orders, limits (truncated) and buckets by time', async () => {
    const time_range = { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
    const res = await t.call('POST', '/analytics/query', { body: { metrics: ['total_cost'], dimensions: ['model'], time_range, order_by: { field: 'request_count', direction: 'desc' }, limit: 2 } });
    expectStatus(res, 200);
    const counts = [...expected({ metrics: ['request_count'], dimensions: ['model'], time_range }).values()].map((v) => v.request_count!).sort((a, b) => b - a);
    expect(res.body.data.data).toHaveLength(2);
    expect(res.body.data.data[0]).not.toHaveProperty('request_count');
    expect(res.body.data.metadata).toMatchObject({ row_count: 2, truncated: true });
    const days = await t.call('POST', '/analytics/query', { body: { metrics: ['request_count'], granularity: 'day', time_range } });
    const dates = days.body.data.data.map((r: any) => r.date__day);
    expect(dates).toEqual([...dates].sort());
    expect(days.body.data.data.reduce((a: number, r: any) => a + r.request_count, 0)).toBe(rows.length);
    expect(counts[0]).toBeGreaterThan(0);
  });

  it('describes itself (GET /analytics/meta) and validates the query (400 naming the field); management keys only', async () => {
    const meta = await t.call('GET', '/analytics/meta');
    expectStatus(meta, 200);
    expect(meta.body.data.metrics.map((m: any) => m.name)).toEqual(METRICS);
    expect(meta.body.data.dimensions.map((d: any) => d.name)).toEqual(Object.keys(DIMS));
    expect(meta.body.data.granularities.map((g: any) => g.name)).toEqual(['minute', 'hour', 'day', 'week', 'month']);
    expect(meta.body.data.operators).toContainEqual({ name: 'gte', value_type: 'scalar' });
    expect(meta.body.data.operators).toContainEqual({ name: 'in', value_type: 'array' });
    const bad: Array<[unknown, string]> = [
      [{}, 'metrics'],
      [{ metrics: [] }, 'metrics'],
      [{ metrics: ['vibes'] }, 'metrics'],
      [{ metrics: ['request_count'], dimensions: ['colour'] }, 'dimensions'],
      [{ metrics: ['request_count'], dimensions: ['model', 'provider', 'api_type'] }, 'dimensions'],
      [{ metrics: ['request_count'], granularity: 'fortnight' }, 'granularity'],
      [{ metrics: ['request_count'], filters: [{ field: 'status', operator: 'gt', value: ['400'] }] }, 'filters[0].value'],
      [{ metrics: ['request_count'], filters: [{ field: 'model', operator: 'like', value: 'x' }] }, 'operator'],
      [{ metrics: ['request_count'], filters: [{ field: 'model', operator: 'in', value: 'x' }] }, 'filters[0].value'],
      [{ metrics: ['request_count'], filters: [{ field: 'model', operator: 'eq', value: ['x'] }] }, 'filters[0].value'],
      [{ metrics: ['request_count'], time_range: { start: 'yesterday', end: new Date().toISOString() } }, 'start'],
      [{ metrics: ['request_count'], time_range: { start: new Date(end).toISOString(), end: new Date(start).toISOString() } }, 'time_range.end'],
      [{ metrics: ['request_count'], order_by: { field: 'model', direction: 'asc' } }, 'order_by.field'],
      [{ metrics: ['request_count'], order_by: { field: 'request_count', direction: 'up' } }, 'direction'],
      [{ metrics: ['request_count'], limit: 0 }, 'limit'],
      [{ metrics: ['request_count'], extra: true }, 'extra'],
    ];
    for (const [body, field] of bad) expectError(await t.call('POST', '/analytics/query', { body }), 400, { field });
    const inference = await createInferenceKey(t, { name: 'c' });
    expectError(await t.call('GET', '/analytics/meta', { key: inference.key }), 403);
    expectError(await t.call('POST', '/analytics/query', { key: inference.key, body: { metrics: ['request_count'] } }), 403);
    expectError(await t.call('POST', '/analytics/query', { key: null, body: { metrics: ['request_count'] } }), 401);
  });
});

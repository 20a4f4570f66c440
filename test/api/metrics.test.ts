/**
 * GET /metrics: Prometheus text for every API's requests (from their generation records), checked against the
 * requests made and the records themselves; management keys only by default, GATEWAY_METRICS=public or off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, startClockedEnv, streamChat, type ClockedEnv, until } from '../chat/util.js';
import { embed, embeddingCatalog } from '../embeddings/util.js';
import { generation } from '../speech/util.js';
import { loadConfig } from '../../src/config.js';

/** The samples of a metric family: `name{labels} value` lines as { labels, value }. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}
const one = (text: string, name: string, labels: Record<string, string>) =>
  samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

async function scrape(env: ClockedEnv, key: string | null = env.t.adminKey) {
  const res = await fetch(`${env.t.url}/metrics`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('GET /metrics (management keys, the default)', () => {
  let env: ClockedEnv;
  beforeAll(async () => {
    env = await startClockedEnv('sqlite', { extra: embeddingCatalog });
  });
  afterAll(async () => env?.close());

  it('counts each API’s requests, tokens, cost, durations and upstream attempts, as the records say', async () => {
    // Node's process metrics start at the first scrape (services/metrics.ts): this one starts them, so that the CPU of
    // the requests below is counted (a first scrape alone can read 0 µs of user CPU since the start: seen in CI).
    expect((await scrape(env)).status).toBe(200);
    const plain = await chat(env, { model: 'test/alpha', messages: [{ role: 'user', content: 'hello' }] });
    expect(plain.status).toBe(200);
    const streamed = await streamChat(env, { model: 'test/alpha', messages: [{ role: 'user', content: 'hello again' }] });
    expect(streamed.status).toBe(200);
    // A failure on sim-a falls back to sim-b: one 502 attempt, one 200.
    env.sim.setKnobs('sim-a', { errorStatus: 500 });
    const fellBack = await chat(env, { model: 'test/alpha', messages: [{ role: 'user', content: 'third' }] });
    expect(fellBack.status).toBe(200);
    env.sim.resetKnobs();
    const unknown = await chat(env, { model: 'nobody/knows-this', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.status).toBe(404);
    const e = await embed(env, { model: 'test/embed', input: ['abcd', 'abcdefgh'] });
    expect(e.status).toBe(200);

    const ids = [plain.headers.get('x-generation-id')!, streamed.headers.get('x-generation-id')!, fellBack.headers.get('x-generation-id')!];
    const records = await Promise.all(ids.map((id) => generation(env, id)));
    const m = await scrape(env);
    expect(m.status).toBe(200);
    expect(m.type).toBe('text/plain; version=0.0.4; charset=utf-8');

    const chatA = { api: 'completions', model: 'test/alpha', provider: 'sim-a' };
    const chatB = { api: 'completions', model: 'test/alpha', provider: 'sim-b' };
    expect(one(m.text, 'gateway_requests_total', { ...chatA, status: '200' })).toBe(2);
    expect(one(m.text, 'gateway_requests_total', { ...chatB, status: '200' })).toBe(1);
    // The requested model of an unknown-model request is caller input: never a label.
    expect(one(m.text, 'gateway_requests_total', { api: 'completions', model: '', provider: '', status: '404' })).toBe(1);
    expect(m.text).not.toContain('nobody/knows-this');
    expect(one(m.text, 'gateway_requests_total', { api: 'embeddings', model: 'test/embed', provider: 'sim-emb', status: '200' })).toBe(1);

    // Tokens and cost: the sums of the records.
    const onA = records.filter((r) => r.provider_name === 'sim-a');
    expect(one(m.text, 'gateway_tokens_total', { ...chatA, kind: 'prompt' })).toBe(onA.reduce((n, r) => n + r.tokens_prompt, 0));
    expect(one(m.text, 'gateway_tokens_total', { ...chatA, kind: 'completion' })).toBe(onA.reduce((n, r) => n + r.tokens_completion, 0));
    expect(one(m.text, 'gateway_cost_usd_total', chatA)).toBeCloseTo(onA.reduce((n, r) => n + r.total_cost, 0), 15);
    expect(one(m.text, 'gateway_tokens_total', { api: 'embeddings', model: 'test/embed', kind: 'prompt' })).toBe(3);

    // Durations: cumulative buckets ending at the count; a time to first token wherever the record has one.
    const buckets = samples(m.text, 'gateway_request_duration_seconds_bucket').filter((s) => s.labels.provider === 'sim-a' && s.labels.api === 'completions');
    expect(buckets.map((b) => b.labels.le).at(-1)).toBe('+Inf');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
    expect(buckets.at(-1)!.value).toBe(2);
    expect(one(m.text, 'gateway_request_duration_seconds_count', chatA)).toBe(2);
    expect(one(m.text, 'gateway_time_to_first_token_seconds_count', chatA)).toBe(records.filter((r) => r.provider_name === 'sim-a' && r.time_to_first_token !== null).length);

    // Upstream attempts: the fallback shows as a 502 on sim-a.
    expect(one(m.text, 'gateway_upstream_attempts_total', { provider: 'sim-a', status: '502' })).toBe(1);
    expect(one(m.text, 'gateway_upstream_attempts_total', { provider: 'sim-a', status: '200' })).toBe(2);

    // The record queue, and Node's process metrics.
    expect(samples(m.text, 'gateway_generation_records_queued')).toHaveLength(1);
    expect(one(m.text, 'gateway_generation_flush_failures_total', {})).toBe(0);
    expect(samples(m.text, 'process_cpu_user_seconds_total')[0].value).toBeGreaterThan(0);
    expect(m.text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(m.text).toContain('# TYPE gateway_request_duration_seconds histogram');
  });

  it('no key → 401; an inference key → 403', async () => {
    expect((await scrape(env, null)).status).toBe(401);
    const r = await scrape(env, env.key);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text).error.code).toBe(403);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    expect(doc.body.paths['/metrics'].get.responses['200']).toBeTruthy();
  });
});

describe('GATEWAY_METRICS', () => {
  it('public: served without a key', async () => {
    const env = await startClockedEnv('sqlite', { env: { GATEWAY_METRICS: 'public' } });
    try {
      await chat(env, { model: 'test/beta', messages: [{ role: 'user', content: 'hi' }] });
      await until(async () => (await scrape(env, null)).text.includes('model="test/beta"'));
      expect((await scrape(env, null)).status).toBe(200);
    } finally {
      await env.close();
    }
  });

  it('off: no route (404)', async () => {
    const env = await startClockedEnv('sqlite', { env: { GATEWAY_METRICS: 'off' } });
    try {
      expect((await scrape(env)).status).toBe(404);
      expect((await chat(env, { model: 'test/beta', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    } finally {
      await env.close();
    }
  });

  it('another value stops the start, named', () => {
    expect(() => loadConfig({ GATEWAY_METRICS: 'yes' })).toThrow(/GATEWAY_METRICS must be management, public or off/);
  });
});

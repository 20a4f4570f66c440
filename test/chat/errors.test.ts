/**
 * Status mapping through the simulator's failure knobs: upstream 429 → 429 (Retry-After when given), 5xx and invalid
 * responses → 502, no answer in time → 524, 529 → 529, upstream 400 → 400, nothing routable → 404 (503 when every
 * endpoint exists but failed recently). The envelope carries the last error with `provider_name` and `raw`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatEnv } from '../chat-helpers.js';
import { chat, isolatedEnv, streamChat, streamedText, until } from './util.js';

/** `sim-slow` answers test/slow with short timeouts, so that 524s come quickly. */
const slowCatalog = (simUrl: string) => ({
  providers: [
    {
      slug: 'sim-slow',
      name: 'Sim Slow',
      protocol: 'openai',
      base_url: `${simUrl}/sim-slow/v1`,
      no_auth: true,
      timeouts: { first_byte_ms: 300, idle_ms: 300 },
    },
  ],
  models: [{ id: 'test/slow', name: 'Test Slow', context_length: 32000 }],
  endpoints: [{ model: 'test/slow', provider: 'sim-slow', upstream_model: 'slow', pricing: { prompt: '0.000001', completion: '0.000001' } }],
});

describe('upstream status mapping', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });
  let env: ChatEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('upstream 429 → 429 with the upstream Retry-After, error_type and raw body', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 429, retryAfter: 7 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.body.error).toMatchObject({
      code: 429,
      metadata: {
        error_type: 'rate_limit_exceeded',
        provider_name: 'Sim C',
        provider_code: 429,
        is_byok: false,
        raw: { error: { code: 'rate_limit_exceeded', type: 'requests' } },
      },
    });
    expect(r.body.error.message).toMatch(/Rate limit/);
  });

  it('429 from every provider → Retry-After is the smallest hint', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 429, retryAfter: 9 });
    env.sim.setKnobs('sim-b', { errorStatus: 429, retryAfter: 4 });
    const r = await chat(env, { model: 'test/alpha' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('4');
  });

  it('the last error is returned; no Retry-After unless every attempt gave one', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    env.sim.setKnobs('sim-b', { errorStatus: 429, retryAfter: 3 });
    const r = await chat(env, { model: 'test/alpha' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeNull();
    expect(r.body.error.metadata.provider_name).toBe('Sim B');
    expect(r.body.error.metadata.previous_errors).toEqual([expect.objectContaining({ provider: 'sim-a', model: 'test/alpha', status: 502 })]);
  });

  it.each([500, 502, 503])('upstream %i → 502 "Provider returned error" with the raw upstream body', async (status) => {
    env.sim.setKnobs('sim-c', { errorStatus: status });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(502);
    expect(r.body.error.message).toMatch(/^Provider returned error/);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'provider_unavailable', provider_name: 'Sim C', provider_code: status });
    expect(r.body.error.metadata.raw.error.type).toBe('server_error');
  });

  it('upstream 401 (bad provider credentials) → 502, never the upstream status', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 401 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'authentication', provider_code: 401 });
  });

  it.each(['json', 'empty'] as const)('invalid upstream response (malformed: %s) → 502', async (malformed) => {
    env.sim.setKnobs('sim-c', { malformed });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'provider_unavailable', provider_name: 'Sim C' });
    expect(r.body.error.message).toMatch(/invalid/i);
  });

  it('upstream drops the connection → 502', async () => {
    env.sim.setKnobs('sim-c', { disconnectAfterChunks: 2 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
  });

  it('upstream 529 → 529', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 529 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(529);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'provider_overloaded', provider_code: 529 });
  });

  it('upstream 400 → 400 with the upstream message, and the endpoint is not marked unhealthy', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 400 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/maximum context length/);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'context_length_exceeded', provider_code: 400, provider_name: 'Sim C' });
    // A bad request says nothing about the endpoint's health: the next request goes through.
    env.sim.resetKnobs();
    expect((await chat(env, { model: 'test/beta' })).status).toBe(200);
  });

  it('an in-stream error before any content is mapped like an HTTP error (streaming, all providers fail → 502 JSON)', async () => {
    env.sim.setKnobs('sim-c', { errorAfterChunks: 0 });
    const r = await streamChat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
    expect(JSON.parse(r.text).error.metadata.provider_name).toBe('Sim C');
  });

  it('with X-Gateway-Metadata the error envelope carries gateway_metadata with the failed attempts', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 500 });
    env.sim.setKnobs('sim-b', { errorStatus: 500 });
    const r = await chat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(r.status).toBe(502);
    expect(r.body.gateway_metadata).toMatchObject({
      requested: 'test/alpha',
      endpoints: { total: 2 },
      attempts: [expect.objectContaining({ provider: 'sim-a', status: 502 }), expect.objectContaining({ provider: 'sim-b', status: 502 })],
    });
    expect(r.body.gateway_metadata.endpoints.available.every((e: { selected: boolean }) => !e.selected)).toBe(true);
  });
});

describe('routing errors', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });
  let env: ChatEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('an unknown model → 404', async () => {
    const r = await chat(env, { model: 'test/does-not-exist' });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe(404);
    expect(r.body.error.message).toMatch(/test\/does-not-exist/);
  });

  it('no endpoint left after filtering → 404, and no upstream is called', async () => {
    const r = await chat(env, { model: 'test/alpha', provider: { only: ['nobody'] } });
    expect(r.status).toBe(404);
    expect(r.body.error.metadata.excluded_by).toEqual(['only']);
    expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests).toBe(0);
  });

  it('every endpoint exists but failed just now → 503 with Retry-After, without calling the upstream again', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    expect((await chat(env, { model: 'test/beta' })).status).toBe(502);
    env.sim.resetKnobs();
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(env.sim.stats('sim-c').requests).toBe(1);
    // Another endpoint of the same provider (another model) is unaffected.
    expect((await chat(env, { model: 'test/unpriced' })).status).toBe(200);
  });

  it('a failed endpoint is tried last, not skipped, while a healthy one exists', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 500, failTimes: 1 });
    const first = await chat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(first.status).toBe(200);
    expect(first.body.gateway_metadata.attempts.map((a: { provider: string }) => a.provider)).toEqual(['sim-a', 'sim-b']);
    // sim-a failed a moment ago: sim-b goes first now.
    const second = await chat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(second.body.provider).toBe('Sim B');
    expect(second.body.gateway_metadata.attempts).toHaveLength(1);
  });
});

describe('timeouts → 524', () => {
  let env: ChatEnv;
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: slowCatalog });
  beforeEach(() => {
    env = isolated();
  });

  it('the provider timeouts come from the catalog', () => {
    const p = env.t.gw.svc.catalog.route.providers.get('sim-slow')!;
    expect(env.t.gw.svc.catalog.timeouts(p)).toMatchObject({ firstByteMs: 300, idleMs: 300 });
  });

  it('no response headers within first_byte_ms → 524, and the upstream request is aborted', async () => {
    env.sim.setKnobs('sim-slow', { latencyMs: 5_000 });
    const t0 = Date.now();
    const r = await chat(env, { model: 'test/slow' });
    expect(r.status).toBe(524);
    // first_byte_ms is 300 (the HTTP client's timers are coarse, up to about a second late): far before the answer.
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(r.body.error).toMatchObject({ code: 524, metadata: { error_type: 'timeout', provider_name: 'Sim Slow' } });
    await until(() => env.sim.stats('sim-slow').aborted === 1, 2_000, 'the upstream abort');
  });

  it('a provider that never answers → 524 (streaming too, as a JSON error)', async () => {
    env.sim.setKnobs('sim-slow', { hang: true });
    const r = await streamChat(env, { model: 'test/slow' });
    expect(r.status).toBe(524);
    expect(JSON.parse(r.text).error.code).toBe(524);
  });

  it('a stream that stalls after the first tokens (idle_ms) ends with a 524 error chunk at status 200', async () => {
    env.sim.setKnobs('sim-slow', { completionTokens: 5, chunkGapMs: 100 });
    expect((await streamChat(env, { model: 'test/slow' })).chunks.some((c) => c.error)).toBe(false);
    env.sim.setKnobs('sim-slow', { completionTokens: 5, chunkGapMs: 1_000 });
    const r = await streamChat(env, { model: 'test/slow' });
    expect(r.status).toBe(200);
    expect(streamedText(r.chunks)).toBe('Simulated');
    const last = r.chunks[r.chunks.length - 1];
    expect(last.error).toMatchObject({ code: 524, metadata: { error_type: 'timeout' } });
    expect(last.choices[0].finish_reason).toBe('error');
  });
});

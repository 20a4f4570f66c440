/**
 * GET /models/{author}/{slug}/endpoints and GET /endpoints/zdr: each endpoint with the gateway's own measured status,
 * uptime, latency and throughput, read on the gateway's clock (the one routing reads).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chat, isolatedEnv, type Json } from '../chat/util.js';

describe('model endpoints listing', () => {
  const isolated = isolatedEnv(
    { beforeAll, afterAll, beforeEach },
    {
      // One more endpoint for test/beta, on a provider whose credential is not set: listed, never routable.
      extra: (simUrl) => ({
        providers: [{ slug: 'sim-nokey', name: 'Sim No Key', protocol: 'openai', base_url: `${simUrl}/sim-nokey/v1`, api_key_env: 'SIM_NOKEY_API_KEY_UNSET' }],
        endpoints: [{ model: 'test/beta', provider: 'sim-nokey', upstream_model: 'beta-nokey', pricing: { prompt: '0.000001', completion: '0.000001' } }],
      }),
    },
  );
  const list = async (model: string): Promise<Json[]> => {
    const env = isolated();
    const r = await env.t.call('GET', `/models/${model}/endpoints`, { key: null });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(model);
    return r.body.data.endpoints;
  };
  const byTag = (eps: Json[], tag: string) => eps.find((e) => e.tag === tag);

  it('lists every endpoint, with no measurements before any request', async () => {
    const eps = await list('test/beta');
    expect(eps.map((e) => e.tag).sort()).toEqual(['sim-c', 'sim-nokey']);
    expect(byTag(eps, 'sim-c')).toMatchObject({
      name: 'Sim C | Test Beta',
      model_id: 'test/beta',
      provider_name: 'Sim C',
      status: 0,
      uptime_last_5m: null,
      uptime_last_30m: null,
      uptime_last_1d: null,
      latency_last_30m: null,
      throughput_last_30m: null,
      pricing: { prompt: '0.0000005', completion: '0.000001' },
    });
  });

  it('an endpoint whose provider has no credential: status -10, and chat never calls it', async () => {
    const env = isolated();
    expect(byTag(await list('test/beta'), 'sim-nokey').status).toBe(-10);
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    const r = await chat(env, { model: 'test/beta' });
    expect(r.status).toBe(502);
    expect(env.sim.requests.filter((x) => x.provider === 'sim-nokey')).toHaveLength(0);
  });

  it('uptime, latency and throughput come from the requests served; a recent failure is status -1 for 30 s', async () => {
    const env = isolated();
    env.advance(25 * 3600_000); // the earlier tests' requests leave every window
    for (let i = 0; i < 3; i++) expect((await chat(env, { model: 'test/beta' })).status).toBe(200);
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    expect((await chat(env, { model: 'test/beta' })).status).toBe(502);
    const c = byTag(await list('test/beta'), 'sim-c');
    expect(c.status).toBe(-1);
    expect(c.uptime_last_5m).toBe(75);
    expect(c.uptime_last_30m).toBe(75);
    expect(c.uptime_last_1d).toBe(75);
    expect(c.latency_last_30m).toMatchObject({ p50: expect.any(Number), p90: expect.any(Number), p99: expect.any(Number) });
    expect(c.latency_last_30m.p50).toBeGreaterThanOrEqual(0);
    // The listing reads the gateway's clock: 31 s later the failure is over; 6 min later it has left the 5-minute window.
    env.advance(31_000);
    expect(byTag(await list('test/beta'), 'sim-c').status).toBe(0);
    env.advance(6 * 60_000);
    const later = byTag(await list('test/beta'), 'sim-c');
    expect(later.uptime_last_5m).toBeNull();
    expect(later.uptime_last_30m).toBe(75);
  });

  it('unknown model → 404 in the error envelope', async () => {
    const env = isolated();
    const r = await env.t.call('GET', '/models/test/nope/endpoints', { key: null });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 404, message: expect.stringMatching(/test\/nope/) });
  });

  it('/endpoints/zdr lists only endpoints of zero-data-retention providers', async () => {
    const env = isolated();
    const r = await env.t.call('GET', '/endpoints/zdr', { key: null });
    expect(r.status).toBe(200);
    const tags = r.body.data.map((e: Json) => `${e.model_id}|${e.tag}`);
    expect(tags).toContain('test/beta|sim-c');
    expect(tags).toContain('test/alpha|sim-a');
    expect(tags).not.toContain('test/alpha|sim-b');
  });
});

describe('GET /model/{author}/{slug}', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });
  const get = (path: string) => isolated().t.call('GET', path, { key: null });

  it('every field of the spec Model table, and the reasoning object of the single-model answer', async () => {
    const r = await get('/model/test/claude');
    expect(r.status).toBe(200);
    const m = r.body.data;
    expect(m).toMatchObject({
      id: 'test/claude',
      canonical_slug: expect.any(String),
      name: 'Test Claude (Anthropic protocol)',
      created: expect.any(Number),
      description: expect.any(String),
      context_length: 200000,
      architecture: { modality: expect.any(String), input_modalities: ['text', 'image'], output_modalities: ['text'], tokenizer: expect.any(String) },
      pricing: { prompt: '0.000003', completion: '0.000015' },
      top_provider: { context_length: expect.any(Number), is_moderated: expect.any(Boolean) },
      supported_parameters: expect.arrayContaining(['reasoning', 'tools']),
      links: { details: expect.stringMatching(/\/models\/test\/claude\/endpoints$/) },
    });
    for (const f of ['per_request_limits', 'supported_voices', 'default_parameters', 'expiration_date', 'knowledge_cutoff']) expect(m).toHaveProperty(f);
    expect(m.reasoning).toEqual({
      default_effort: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'),
      default_enabled: expect.any(Boolean),
      mandatory: expect.any(Boolean),
      supported_efforts: expect.any(Array),
    });
    // Only the single-model answer has it.
    const list = await get('/models');
    expect(list.body.data.find((x: Json) => x.id === 'test/claude')).not.toHaveProperty('reasoning');
  });

  it('a :variant suffix resolves to the base model', async () => {
    const r = await get('/model/test/alpha:free');
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe('test/alpha');
  });

  it('an unknown model → 404 in the envelope, naming it', async () => {
    const r = await get('/model/test/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 404, message: expect.stringContaining('test/nope') });
  });
});

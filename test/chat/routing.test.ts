/**
 * Routing through a running gateway: `model` then `models[]`, each `provider` rule (order, only, ignore,
 * allow_fallbacks, require_parameters, data_collection, quantizations, max_price, sort incl. {by, partition}), the
 * workspace `default_provider_sort`, presets at inference time, session stickiness, and fallbacks across providers
 * and models as seen in `gateway_metadata`.
 *
 * Catalog (test/chat-helpers.ts): test/alpha → sim-a (cheaper, fp16, tools) and sim-b (pricier, fp8, no tools, trains
 * on data); test/beta → sim-c; test/gamma (added here) → sim-b (very cheap, few parameters) and sim-a (supports seed).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PRICES, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey } from '../helpers.js';
import { chat, isolatedEnv, streamChat, upstreamBodies, WEATHER_TOOL, type ChatReply, type Json } from './util.js';

const GAMMA = {
  models: [{ id: 'test/gamma', name: 'Test Gamma', context_length: 32000 }],
  endpoints: [
    { model: 'test/gamma', provider: 'sim-b', upstream_model: 'gamma-b', pricing: { prompt: '0.0000001', completion: '0.0000001' }, supported_parameters: ['temperature', 'max_tokens'] },
    { model: 'test/gamma', provider: 'sim-a', upstream_model: 'gamma-a', pricing: PRICES.a, supported_parameters: ['temperature', 'max_tokens', 'seed'] },
  ],
};

const META = { 'X-Gateway-Metadata': 'enabled' };
const served = (r: ChatReply) => ({ status: r.status, model: r.body.model, provider: r.body.provider });

describe('provider preferences', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { catalog: GAMMA });
  });
  afterAll(async () => env?.close());
  beforeEach(() => {
    env.sim.resetKnobs();
    env.sim.resetStats();
  });

  const route = (provider: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) => chat(env, { model: 'test/alpha', ...(provider ? { provider } : {}), ...extra }, { headers: META });

  it('default: the cheapest endpoint, strategy direct, both endpoints listed', async () => {
    const r = await route(undefined);
    expect(served(r)).toEqual({ status: 200, model: 'test/alpha', provider: 'Sim A' });
    expect(r.body.gateway_metadata).toMatchObject({
      attempt: 1,
      requested: 'test/alpha',
      strategy: 'direct',
      is_byok: false,
      endpoints: {
        total: 2,
        available: [
          { model: 'test/alpha', provider: 'sim-a', selected: true },
          { model: 'test/alpha', provider: 'sim-b', selected: false },
        ],
      },
    });
    expect(typeof r.body.gateway_metadata.summary).toBe('string');
    expect(typeof r.body.gateway_metadata.region).toBe('string');
  });

  it('gateway_metadata only on opt-in: X-Gateway-Metadata or the legacy header, value matched case-insensitively', async () => {
    const ask = (headers?: Record<string, string>) => chat(env, { model: 'test/alpha' }, { headers });
    expect((await ask()).body).not.toHaveProperty('gateway_metadata');
    expect((await ask({ 'X-Gateway-Metadata': 'disabled' })).body).not.toHaveProperty('gateway_metadata');
    expect((await ask({ 'X-Gateway-Metadata': 'yes' })).body).not.toHaveProperty('gateway_metadata');
    expect((await ask({ 'X-Gateway-Metadata': 'ENABLED' })).body.gateway_metadata.attempt).toBe(1);
    expect((await ask({ 'X-Gateway-Experimental-Metadata': 'enabled' })).body.gateway_metadata.attempt).toBe(1);
  });

  it('order: named providers first (ones not hosting the model are skipped)', async () => {
    const r = await route({ order: ['sim-c', 'sim-b'] });
    expect(served(r).provider).toBe('Sim B');
    expect(r.body.gateway_metadata.strategy).toBe('order');
    expect(env.sim.stats('sim-c').requests).toBe(0);
  });

  it('only: an allowlist (by slug or display name); nothing left → 404', async () => {
    expect(served(await route({ only: ['sim-b'] })).provider).toBe('Sim B');
    const byName = await route({ only: ['Sim B'] });
    expect(served(byName).provider).toBe('Sim B');
    expect(byName.body.gateway_metadata.endpoints.available).toEqual([{ model: 'test/alpha', provider: 'sim-b', selected: true }]);
    const none = await route({ only: ['sim-c'] });
    expect(none.status).toBe(404);
  });

  it('ignore: a denylist', async () => {
    const r = await route({ ignore: ['sim-a'] });
    expect(served(r).provider).toBe('Sim B');
    expect(r.body.gateway_metadata.excluded).toEqual([{ model: 'test/alpha', provider: 'sim-a', reason: 'ignore' }]);
    expect((await route({ ignore: ['sim-a', 'sim-b'] })).status).toBe(404);
  });

  it('data_collection: deny drops providers that train on or retain prompts, even when ordered first', async () => {
    expect(served(await route({ data_collection: 'deny', order: ['sim-b'] })).provider).toBe('Sim A');
    const none = await route({ data_collection: 'deny', only: ['sim-b'] });
    expect(none.status).toBe(404);
    expect(none.body.error.metadata.error_type).toBe('privacy_restricted');
    expect(served(await route({ data_collection: 'allow', order: ['sim-b'] })).provider).toBe('Sim B');
  });

  it('quantizations: only endpoints with a listed quantization', async () => {
    expect(served(await route({ quantizations: ['fp8'] })).provider).toBe('Sim B');
    expect(served(await route({ quantizations: ['fp16', 'fp8'] })).provider).toBe('Sim A');
    const none = await route({ quantizations: ['int4'] });
    expect(none.status).toBe(404);
    expect(none.body.error.metadata.excluded_by).toEqual(['quantization']);
  });

  it('max_price ($ per million tokens): a hard filter', async () => {
    // sim-a: $1/M prompt, $2/M completion; sim-b: $3/M, $4/M.
    expect(served(await route({ max_price: { prompt: 2, completion: 3 }, order: ['sim-b'] })).provider).toBe('Sim A');
    expect(served(await route({ max_price: { prompt: '3', completion: '4' }, order: ['sim-b'] })).provider).toBe('Sim B');
    const none = await route({ max_price: { prompt: 0.5 } });
    expect(none.status).toBe(404);
    expect(none.body.error.metadata.excluded_by).toEqual(['max_price']);
    expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests).toBe(2);
  });

  it('tools act as a soft filter: the provider without tool support is not used', async () => {
    const r = await route({ order: ['sim-b'] }, { tools: [WEATHER_TOOL] });
    expect(served(r).provider).toBe('Sim A');
    expect(r.body.gateway_metadata.excluded).toEqual([{ model: 'test/alpha', provider: 'sim-b', reason: 'unsupported_parameter' }]);
  });

  it('require_parameters: without it an unsupported parameter is dropped; with it such endpoints are skipped', async () => {
    // test/gamma: sim-b is far cheaper but does not take `seed`; sim-a does.
    const loose = await chat(env, { model: 'test/gamma', seed: 7 }, { headers: META });
    expect(served(loose).provider).toBe('Sim B');
    expect(upstreamBodies(env, 'sim-b')[0]).not.toHaveProperty('seed');
    expect(loose.body.gateway_metadata.dropped_parameters).toEqual(['seed']);
    const strict = await chat(env, { model: 'test/gamma', seed: 7, provider: { require_parameters: true } }, { headers: META });
    expect(served(strict).provider).toBe('Sim A');
    expect(upstreamBodies(env, 'sim-a')[0]).toMatchObject({ model: 'gamma-a', seed: 7 });
    expect(strict.body.gateway_metadata.excluded).toEqual([{ model: 'test/gamma', provider: 'sim-b', reason: 'require_parameters' }]);
  });

  it('sort: price, and {by, partition}: "model" keeps fallback models last, "none" sorts across models', async () => {
    const byPrice = await route({ sort: 'price', order: undefined });
    expect(served(byPrice).provider).toBe('Sim A');
    expect(byPrice.body.gateway_metadata.strategy).toBe('sort:price');
    // test/beta (sim-c, $0.5/M + $1/M) is cheaper than any test/alpha endpoint.
    const perModel = await route({ sort: { by: 'price', partition: 'model' } }, { models: ['test/beta'] });
    expect(served(perModel).model).toBe('test/alpha');
    const across = await route({ sort: { by: 'price', partition: 'none' } }, { models: ['test/beta'] });
    expect(served(across)).toEqual({ status: 200, model: 'test/beta', provider: 'Sim C' });
    // The deprecated `route: "sort"` means partition none.
    const legacy = await chat(env, { model: 'test/alpha', models: ['test/beta'], route: 'sort', provider: { sort: 'price' } });
    expect(served(legacy).model).toBe('test/beta');
  });

  it('models[] alone: the first listed model serves; requested lists them all', async () => {
    const r = await chat(env, { models: ['test/beta', 'test/alpha'] }, { headers: META });
    expect(served(r).model).toBe('test/beta');
    expect(r.body.gateway_metadata.requested).toBe('test/beta, test/alpha');
    expect(r.body.gateway_metadata.endpoints.total).toBe(3);
  });
});

describe('fallbacks', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });

  it('across providers: the next endpoint serves; metadata shows attempt 2 and the selected endpoint', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { errorStatus: 500 });
    const r = await chat(env, { model: 'test/alpha' }, { headers: META });
    expect(served(r)).toEqual({ status: 200, model: 'test/alpha', provider: 'Sim B' });
    expect(r.body.gateway_metadata).toMatchObject({
      attempt: 2,
      requested: 'test/alpha',
      strategy: 'direct',
      endpoints: {
        total: 2,
        available: [
          { model: 'test/alpha', provider: 'sim-a', selected: false },
          { model: 'test/alpha', provider: 'sim-b', selected: true },
        ],
      },
    });
    expect(r.body.gateway_metadata.summary).toMatch(/sim-b/);
    const g = await env.t.call('GET', `/generation?id=${r.body.id}`, { key: env.key });
    expect(g.body.data.provider_responses).toEqual([
      expect.objectContaining({ provider: 'sim-a', status: 502 }),
      { provider: 'sim-b', model: 'test/alpha', status: 200 },
    ]);
  });

  it('across models: models[] is tried after model; the response model is the one that served', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-c', { errorStatus: 503 });
    const r = await chat(env, { model: 'test/beta', models: ['test/alpha'] }, { headers: META });
    expect(served(r)).toEqual({ status: 200, model: 'test/alpha', provider: 'Sim A' });
    expect(r.body.gateway_metadata).toMatchObject({
      attempt: 2,
      requested: 'test/beta, test/alpha',
      strategy: 'fallback',
      endpoints: {
        total: 3,
        available: [
          { model: 'test/beta', provider: 'sim-c', selected: false },
          { model: 'test/alpha', provider: 'sim-a', selected: true },
          { model: 'test/alpha', provider: 'sim-b', selected: false },
        ],
      },
    });
    // Billing follows the model that served: sim-a prices. "hello" = 5 prompt tokens, 12 completion tokens:
    // 5 × 0.000001 + 12 × 0.000002 = 0.000029.
    expect(r.body.usage.cost).toBe(0.000029);
  });

  it('when every model fails, the last error is returned', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-c', { errorStatus: 529 });
    env.sim.setKnobs('sim-a', { errorStatus: 500 });
    env.sim.setKnobs('sim-b', { errorStatus: 429, retryAfter: 2 });
    const r = await chat(env, { model: 'test/beta', models: ['test/alpha'] });
    expect(r.status).toBe(429);
    expect(r.body.error.metadata.provider_name).toBe('Sim B');
    expect(r.body.error.metadata.previous_errors.map((e: Json) => e.provider)).toEqual(['sim-c', 'sim-a']);
  });

  it('order + default allow_fallbacks: the ordered provider fails, the others still serve', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-b', { errorStatus: 500 });
    const r = await chat(env, { model: 'test/alpha', provider: { order: ['sim-b'] } }, { headers: META });
    expect(served(r).provider).toBe('Sim A');
    expect(r.body.gateway_metadata.attempt).toBe(2);
  });

  it('allow_fallbacks: false with order: only the ordered providers are tried', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-b', { errorStatus: 500 });
    const r = await chat(env, { model: 'test/alpha', provider: { order: ['sim-b'], allow_fallbacks: false } });
    expect(r.status).toBe(502);
    expect(r.body.error.metadata.provider_name).toBe('Sim B');
    expect(env.sim.stats('sim-a').requests).toBe(0);
  });

  it('allow_fallbacks: false without order: only the primary endpoint is tried', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    const r = await chat(env, { model: 'test/alpha', provider: { allow_fallbacks: false } });
    expect(r.status).toBe(502);
    expect(env.sim.stats('sim-a').requests).toBe(1);
    expect(env.sim.stats('sim-b').requests).toBe(0);
  });
});

describe('sort by measured latency and throughput; workspace default_provider_sort', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
    // Measurements, one streamed request each: sim-a is slow to start and slow to stream, sim-b is quick.
    // (Streams measure both the time to first token and the output rate.)
    env.sim.setKnobs('sim-a', { ttftMs: 150, chunkGapMs: 25 });
    env.sim.setKnobs('sim-b', { chunkGapMs: 2 });
    for (const only of ['sim-a', 'sim-b']) {
      const r = await streamChat(env, { model: 'test/alpha', provider: { only: [only] } });
      expect(r.done && !r.chunks.some((c) => c.error)).toBe(true);
    }
    env.sim.resetKnobs();
  });
  afterAll(async () => env?.close());

  it('sort latency / throughput pick the measured-faster endpoint; price still picks the cheaper', async () => {
    const latency = await chat(env, { model: 'test/alpha', provider: { sort: 'latency' } }, { headers: META });
    expect(served(latency).provider).toBe('Sim B');
    expect(latency.body.gateway_metadata.strategy).toBe('sort:latency');
    const throughput = await chat(env, { model: 'test/alpha', provider: { sort: { by: 'throughput' } } }, { headers: META });
    expect(served(throughput).provider).toBe('Sim B');
    expect(throughput.body.gateway_metadata.strategy).toBe('sort:throughput');
    expect(served(await chat(env, { model: 'test/alpha', provider: { sort: 'price' } })).provider).toBe('Sim A');
  });

  it("a workspace's default_provider_sort applies to its keys; the request's sort wins", async () => {
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Fast', slug: 'fast-ws', default_provider_sort: 'latency' } });
    expect(ws.status).toBe(201);
    const { key } = await createInferenceKey(env.t, { name: 'fast', workspace_id: ws.body.data.id });
    const viaDefault = await chat(env, { model: 'test/alpha' }, { key, headers: META });
    expect(served(viaDefault).provider).toBe('Sim B');
    expect(viaDefault.body.gateway_metadata.strategy).toBe('sort:latency');
    expect(served(await chat(env, { model: 'test/alpha', provider: { sort: 'price' } }, { key })).provider).toBe('Sim A');
    // Keys of the default workspace (no default sort) are unaffected.
    const plain = await chat(env, { model: 'test/alpha' }, { headers: META });
    expect(served(plain).provider).toBe('Sim A');
    expect(plain.body.gateway_metadata.strategy).toBe('direct');
  });

  it("a workspace's default_text_model is used when the request names no model", async () => {
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Beta', slug: 'beta-ws', default_text_model: 'test/beta' } });
    const { key } = await createInferenceKey(env.t, { name: 'beta', workspace_id: ws.body.data.id });
    const r = await chat(env, {}, { key });
    expect(served(r)).toEqual({ status: 200, model: 'test/beta', provider: 'Sim C' });
  });
});

describe('presets at inference time', () => {
  let env: ChatEnv;
  let presetId: string;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
    const saved = await env.t.call('POST', '/presets/brief/chat/completions', {
      body: { model: 'test/beta', temperature: 0.3, max_completion_tokens: 5, messages: [{ role: 'system', content: 'Be brief.' }] },
    });
    expect(saved.status).toBe(200);
    presetId = saved.body.data.id;
    const viaB = await env.t.call('POST', '/presets/via-b/chat/completions', { body: { model: 'test/alpha', provider: { order: ['sim-b'] } } });
    expect(viaB.status).toBe(200);
  });
  afterAll(async () => env?.close());
  beforeEach(() => {
    env.sim.resetStats();
  });

  it('model "@preset/<slug>": the preset model, settings and system prompt; the record keeps preset_id', async () => {
    const r = await chat(env, { model: '@preset/brief' });
    expect(served(r)).toEqual({ status: 200, model: 'test/beta', provider: 'Sim C' });
    expect(r.body.usage.completion_tokens).toBe(5);
    const up = upstreamBodies(env, 'sim-c')[0];
    expect(up).toMatchObject({ model: 'beta-c', temperature: 0.3, max_completion_tokens: 5 });
    expect(up.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }]);
    const g = await env.t.call('GET', `/generation?id=${r.body.id}`, { key: env.key });
    expect(g.body.data.preset_id).toBe(presetId);
  });

  it('model "<model>@preset/<slug>": the named model with the preset settings', async () => {
    const r = await chat(env, { model: 'test/alpha@preset/brief' });
    expect(served(r)).toEqual({ status: 200, model: 'test/alpha', provider: 'Sim A' });
    expect(upstreamBodies(env, 'sim-a')[0]).toMatchObject({ model: 'alpha-a', temperature: 0.3 });
  });

  it('the preset field with model: request fields win over the preset config', async () => {
    const r = await chat(env, { preset: 'brief', model: 'test/alpha', temperature: 1.25 });
    expect(served(r).model).toBe('test/alpha');
    const up = upstreamBodies(env, 'sim-a')[0];
    expect(up.temperature).toBe(1.25);
    expect(up.max_completion_tokens).toBe(5);
    expect(up).not.toHaveProperty('preset');
  });

  it('routing preferences in a preset apply, and a request provider object replaces them', async () => {
    expect(served(await chat(env, { model: '@preset/via-b' })).provider).toBe('Sim B');
    expect(served(await chat(env, { preset: 'via-b', provider: { order: ['sim-a'] } })).provider).toBe('Sim A');
  });

  it('an unknown preset → 404', async () => {
    const r = await chat(env, { model: '@preset/nope' });
    expect(r.status).toBe(404);
    expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests + env.sim.stats('sim-c').requests).toBe(0);
  });
});

describe('session_id stickiness', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
  });
  afterAll(async () => env?.close());

  it('a session sticks to the endpoint that served it', async () => {
    // The first request of the session is steered to sim-b; later ones stay there without asking.
    expect(served(await chat(env, { model: 'test/alpha', session_id: 'sess-1', provider: { order: ['sim-b'] } })).provider).toBe('Sim B');
    const again = await chat(env, { model: 'test/alpha', session_id: 'sess-1' }, { headers: META });
    expect(served(again).provider).toBe('Sim B');
    expect(again.body.gateway_metadata.strategy).toBe('sticky');
    // Other sessions, and requests without one, route normally.
    expect(served(await chat(env, { model: 'test/alpha', session_id: 'sess-2' })).provider).toBe('Sim A');
    expect(served(await chat(env, { model: 'test/alpha' })).provider).toBe('Sim A');
    const g = await env.t.call('GET', `/generation?id=${again.body.id}`, { key: env.key });
    expect(g.body.data.session_id).toBe('sess-1');
  });

  it('the x-session-id header works too, and the body session_id wins over it', async () => {
    expect(served(await chat(env, { model: 'test/alpha', provider: { order: ['sim-b'] } }, { headers: { 'x-session-id': 'hdr-1' } })).provider).toBe('Sim B');
    expect(served(await chat(env, { model: 'test/alpha' }, { headers: { 'x-session-id': 'hdr-1' } })).provider).toBe('Sim B');
    const bodyWins = await chat(env, { model: 'test/alpha', session_id: 'fresh-session' }, { headers: { 'x-session-id': 'hdr-1' } });
    expect(served(bodyWins).provider).toBe('Sim A');
    const g = await env.t.call('GET', `/generation?id=${bodyWins.body.id}`, { key: env.key });
    expect(g.body.data.session_id).toBe('fresh-session');
  });

  it('a session is per workspace: another workspace with the same session id routes normally', async () => {
    expect(served(await chat(env, { model: 'test/alpha', session_id: 'shared', provider: { order: ['sim-b'] } })).provider).toBe('Sim B');
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Other', slug: 'other-ws' } });
    const { key } = await createInferenceKey(env.t, { name: 'other', workspace_id: ws.body.data.id });
    expect(served(await chat(env, { model: 'test/alpha', session_id: 'shared' }, { key })).provider).toBe('Sim A');
  });
});

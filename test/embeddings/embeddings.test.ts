/**
 * POST /embeddings end to end through the simulator: the official `openai` SDK (floats, and its default base64 form it
 * decodes itself), batches and token inputs, `dimensions`, the gateway's conversion when a provider ignores
 * `encoding_format`, cost and the generation record, fallbacks, every error status, and bad input.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import { isolatedEnv, type ClockedEnv, until } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { generation } from '../speech/util.js';
import { float32Base64, simEmbedding } from '../../src/sim/embeddings.js';
import { decodeBase64 } from '../../src/providers/openai/embeddings.js';
import { embed, embeddingCatalog } from './util.js';

describe('POST /embeddings', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: embeddingCatalog });
  let env: ClockedEnv;
  let client: OpenAI;
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  });
  const ask = (body: Record<string, unknown>, opts?: Parameters<typeof embed>[2]) => embed(env, { model: 'test/embed', input: 'hello world', ...body }, opts);

  describe('the openai SDK', () => {
    it('floats: the upstream vector, usage with cost, the served model and a generation id', async () => {
      const { data: res, response } = await client.embeddings.create({ model: 'test/embed', input: 'hello world', encoding_format: 'float' }).withResponse();
      expect(res.object).toBe('list');
      expect(res.model).toBe('test/embed');
      expect(res.data).toHaveLength(1);
      expect(res.data[0]).toMatchObject({ object: 'embedding', index: 0 });
      expect(res.data[0].embedding).toEqual(simEmbedding('hello world', 'embed-sim-emb'));
      // 11 characters → 3 tokens at $0.0000001.
      expect(res.usage).toMatchObject({ prompt_tokens: 3, total_tokens: 3, cost: 0.0000003, is_byok: false });
      const id = response.headers.get('x-generation-id');
      expect(id).toMatch(/^gen-/);
      expect((res as unknown as { id: string }).id).toBe(id);
      // The upstream was asked for floats, with its own model id and without the gateway's fields.
      expect(env.sim.stats('sim-emb').lastBody).toEqual({ model: 'embed-sim-emb', input: 'hello world', encoding_format: 'float' });
    });

    it('the SDK default (base64, decoded by the SDK) gives the same numbers', async () => {
      const res = await client.embeddings.create({ model: 'test/embed', input: ['alpha', 'beta'] });
      expect(env.sim.stats('sim-emb').lastBody).toMatchObject({ encoding_format: 'base64' });
      expect(res.data.map((d) => d.index)).toEqual([0, 1]);
      expect(Array.from(res.data[0].embedding)).toEqual(simEmbedding('alpha', 'embed-sim-emb'));
      expect(Array.from(res.data[1].embedding)).toEqual(simEmbedding('beta', 'embed-sim-emb'));
      expect(res.usage.prompt_tokens).toBe(2 + 1);
    });

    it('errors surface as APIError with the status and the envelope', async () => {
      env.sim.setKnobs('sim-emb', { errorStatus: 429, retryAfter: 3 });
      const err = await client.embeddings.create({ model: 'test/embed', input: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(429);
      expect((err as APIError).error).toMatchObject({ code: 429, metadata: { error_type: 'rate_limit_exceeded', provider_name: 'Sim emb' } });
    });
  });

  it('the response cache: the same embeddings request of the same key is answered without a provider call', async () => {
    const headers = { 'x-gateway-cache': 'true' };
    const first = await ask({ input: ['cache me', 'and me'] }, { headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    const hit = await ask({ input: ['cache me', 'and me'] }, { headers });
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.headers.get('x-gateway-cache-source-id')).toBe(first.headers.get('x-generation-id'));
    expect(hit.body).toEqual(first.body);
    expect(env.sim.stats('sim-emb').requests).toBe(1);
    expect((await ask({ input: ['cache me'] }, { headers })).headers.get('x-gateway-cache-status')).toBe('MISS');
  });

  describe('inputs and parameters', () => {
    it('a batch: one vector per input in order, tokens summed', async () => {
      const input = ['one', 'two two', 'three three three'];
      const r = await ask({ input });
      expect(r.status).toBe(200);
      expect(r.body.data.map((d: { index: number }) => d.index)).toEqual([0, 1, 2]);
      input.forEach((s, i) => expect(r.body.data[i].embedding).toEqual(simEmbedding(s, 'embed-sim-emb')));
      expect(r.body.usage).toMatchObject({ prompt_tokens: 1 + 2 + 5, total_tokens: 8 });
    });

    it('token ids, one list or several', async () => {
      let r = await ask({ input: [1, 2, 3, 4] });
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(r.body.data[0].embedding).toEqual(simEmbedding([1, 2, 3, 4], 'embed-sim-emb'));
      expect(r.body.usage.prompt_tokens).toBe(4);
      r = await ask({ input: [[1, 2], [3]] });
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(2);
      expect(r.body.usage.prompt_tokens).toBe(3);
    });

    it('base64: OpenAI’s float32 little-endian form', async () => {
      const r = await ask({ encoding_format: 'base64' });
      expect(r.body.data[0].embedding).toBe(float32Base64(simEmbedding('hello world', 'embed-sim-emb')));
    });

    it('dimensions: vectors of that size', async () => {
      const r = await ask({ dimensions: 256 });
      expect(r.status).toBe(200);
      expect(r.body.data[0].embedding).toHaveLength(256);
      expect(env.sim.stats('sim-emb').lastBody).toMatchObject({ dimensions: 256 });
    });

    it('dimensions on a model none of whose endpoints supports it → 404, nothing sent upstream', async () => {
      const r = await ask({ model: 'test/embed-nodims', dimensions: 256 });
      expect(r.status).toBe(404);
      expect(r.body.error.message).toBe('No endpoint of test/embed-nodims can produce 256-dimension embeddings (dimensions is not supported)');
      expect(r.body.error.metadata.excluded_by).toEqual(['unsupported_parameter']);
      expect(env.sim.stats('sim-emb').requests).toBe(0);
    });

    it('a provider that ignores dimensions is refused (502) and the next endpoint serves', async () => {
      const r = await ask({ model: 'test/embed-dims', dimensions: 16, provider: { sort: 'price' } }, { headers: { 'x-gateway-metadata': 'enabled' } });
      expect(r.status).toBe(200);
      expect(r.body.data[0].embedding).toHaveLength(16);
      expect(r.body.gateway_metadata.attempts).toEqual([
        { provider: 'sim-emb-dims', model: 'test/embed-dims', status: 502, message: 'Provider returned an invalid response (8 dimensions where 16 were asked for)' },
        { provider: 'sim-emb2', model: 'test/embed-dims', status: 200 },
      ]);
      // Billed at the endpoint that served.
      expect(r.body.usage.cost).toBe(0.0000006);
    });

    it('a provider that ignores encoding_format is converted: base64 answered as floats', async () => {
      const r = await ask({ model: 'test/embed-b64', encoding_format: 'float' });
      expect(r.status).toBe(200);
      expect(r.body.data[0].embedding).toEqual(simEmbedding('hello world', 'embed-b64-sim-emb-b64'));
    });

    it('an endpoint that does not take encoding_format is not sent it; floats are encoded for a base64 caller', async () => {
      const r = await ask({ model: 'test/embed-float', encoding_format: 'base64', user: 'u-1' }, { headers: { 'x-gateway-metadata': 'enabled' } });
      expect(r.status).toBe(200);
      expect(decodeBase64(r.body.data[0].embedding)).toEqual(simEmbedding('hello world', 'embed-float-sim-emb-float'));
      expect(env.sim.stats('sim-emb-float').lastBody).toEqual({ model: 'embed-float-sim-emb-float', input: 'hello world' });
      expect(r.body.gateway_metadata.dropped_parameters).toEqual(['encoding_format', 'user']);
    });

    it('unknown fields pass through to the provider', async () => {
      await ask({ truncate: 'END' });
      expect(env.sim.stats('sim-emb').lastBody).toMatchObject({ truncate: 'END' });
    });

    it('an input longer than an endpoint’s context skips it (one input counts, not the batch’s total)', async () => {
      // 16-token context: 20 inputs of 12 tokens each pass (240 in all); one of 50 tokens does not.
      expect((await ask({ model: 'test/embed-short', input: Array.from({ length: 20 }, () => 'x'.repeat(48)) })).status).toBe(200);
      const r = await ask({ model: 'test/embed-short', input: ['short', 'x'.repeat(200)] });
      expect(r.status).toBe(404);
      expect(r.body.error.metadata.excluded_by).toEqual(['context_length']);
      expect(env.sim.stats('sim-emb').requests).toBe(1);
    });
  });

  describe('cost and records', () => {
    it('the generation record: api_type embeddings, tokens and cost', async () => {
      const r = await ask({ input: ['abcdefgh', 'abcd'] }); // 2 + 1 tokens
      const g = await generation(env, r.headers.get('x-generation-id')!);
      expect(g).toMatchObject({
        api_type: 'embeddings',
        requested_model: 'test/embed',
        model: 'test/embed',
        provider_name: 'sim-emb',
        streamed: false,
        status: 200,
        finish_reason: 'stop',
        tokens_prompt: 3,
        tokens_completion: 0,
        total_cost: 0.0000003,
        is_byok: false,
        error: null,
      });
    });

    it('a provider that reports no usage is billed the estimate (never $0), flagged in usage', async () => {
      const r = await ask({ model: 'test/embed-nousage', input: 'x'.repeat(40) });
      expect(r.status).toBe(200);
      expect(r.body.usage).toMatchObject({ prompt_tokens: 10, cost: 0.000001, estimated: true });
    });

    it('an endpoint without a price: cost null, never $0', async () => {
      const r = await ask({ model: 'test/embed-unpriced' });
      expect(r.status).toBe(200);
      expect(r.body.usage.cost).toBeNull();
      const g = await generation(env, r.headers.get('x-generation-id')!);
      expect(g.total_cost).toBe(0);
    });

    it('a key whose limit is spent → 402; embeddings count in the key usage', async () => {
      // 24 bytes reserve 24 tokens ($0.0000024, an upper bound); the call bills 6 tokens ($0.0000006), leaving
      // $0.0000023 — less than the next call's reservation.
      const { key, hash } = await createInferenceKey(env.t, { name: 'emb-limited', limit: 0.0000029 });
      expect((await ask({ input: 'x'.repeat(24) }, { key })).status).toBe(200); // 6 tokens: $0.0000006
      const r = await ask({ input: 'x'.repeat(24) }, { key });
      expect(r.status).toBe(402);
      expect(r.body.error).toMatchObject({ code: 402, metadata: { error_type: 'payment_required' } });
      expect(env.sim.stats('sim-emb').requests).toBe(1);
      await until(async () => (await env.t.call('GET', `/keys/${hash}`)).body.data.usage > 0);
      expect((await env.t.call('GET', `/keys/${hash}`)).body.data.usage).toBe(0.0000006);
    });
  });

  describe('fallbacks and error statuses', () => {
    it('an upstream 5xx falls back to the next endpoint', async () => {
      env.sim.setKnobs('sim-emb', { errorStatus: 500 });
      const r = await ask({ model: 'test/embed-fallback', provider: { order: ['sim-emb', 'sim-emb2'] } }, { headers: { 'x-gateway-metadata': 'enabled' } });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe('Sim emb2');
      expect(r.body.gateway_metadata).toMatchObject({ attempt: 2, requested: 'test/embed-fallback', summary: 'test/embed-fallback via sim-emb2' });
      expect(r.body.gateway_metadata.endpoints.available).toEqual([
        { model: 'test/embed-fallback', provider: 'sim-emb', selected: false },
        { model: 'test/embed-fallback', provider: 'sim-emb2', selected: true },
      ]);
    });

    it('invalid JSON from the provider → 502, then the next endpoint', async () => {
      env.sim.setKnobs('sim-emb', { malformed: 'json' });
      let r = await ask({ model: 'test/embed-fallback' });
      expect(r.status).toBe(200);
      env.advance(31_000);
      r = await ask({});
      expect(r.status).toBe(502);
      expect(r.body.error.message).toMatch(/invalid/);
    });

    it('upstream 429 → 429 with Retry-After', async () => {
      env.sim.setKnobs('sim-emb', { errorStatus: 429, retryAfter: 7 });
      const r = await ask({});
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
      expect(r.body.error).toMatchObject({ code: 429, metadata: { provider_code: 429 } });
    });

    it.each([
      [500, 502],
      [503, 502],
      [529, 529],
    ])('upstream %i → %i', async (upstream, status) => {
      env.sim.setKnobs('sim-emb', { errorStatus: upstream });
      const r = await ask({});
      expect(r.status).toBe(status);
      expect(r.body.error.code).toBe(status);
    });

    it('upstream 400 (the request) → 400 with the provider detail', async () => {
      const r = await ask({ dimensions: 5000 });
      expect(r.status).toBe(400);
      expect(r.body.error.metadata.raw.error.param).toBe('dimensions');
    });

    it('no answer within the first-byte timeout → 524', async () => {
      env.sim.setKnobs('sim-emb-slow', { hang: true });
      const t0 = Date.now();
      const r = await ask({ model: 'test/embed-slow' });
      expect(r.status).toBe(524);
      expect(r.body.error.metadata.error_type).toBe('timeout');
      expect(Date.now() - t0).toBeLessThan(3000);
    });

    it('every endpoint failed in the last 30 s → 503', async () => {
      env.sim.setKnobs('sim-emb', { errorStatus: 500 });
      expect((await ask({})).status).toBe(502);
      const r = await ask({});
      expect(r.status).toBe(503);
      expect(env.sim.stats('sim-emb').requests).toBe(1);
    });

    it('unknown model → 404; no credentials → 404 naming the provider', async () => {
      let r = await ask({ model: 'test/nope' });
      expect(r.status).toBe(404);
      r = await ask({ model: 'test/embed-nokey' });
      expect(r.status).toBe(404);
      expect(r.body.error.metadata.providers_without_credentials).toEqual(['sim-emb-keyed']);
    });

    it('a chat model → 400 naming the field; an embeddings model on the chat API → 400 too', async () => {
      const r = await ask({ model: 'test/alpha' });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 400, metadata: { field: 'model' } });
      expect(r.body.error.message).toMatch(/not an embeddings model/);
      const c = await env.t.call('POST', '/chat/completions', { body: { model: 'test/embed', messages: [{ role: 'user', content: 'hi' }] }, key: env.key });
      expect(c.status).toBe(400);
      expect(c.body.error).toMatchObject({ message: 'test/embed is an embeddings model: use POST /embeddings', metadata: { field: 'model' } });
      const both = await env.t.call('POST', '/chat/completions', { body: { model: 'test/embed', models: ['test/embed-b64'], messages: [{ role: 'user', content: 'hi' }] }, key: env.key });
      expect(both.status).toBe(400);
      expect(both.body.error.message).toBe('test/embed, test/embed-b64 are embeddings models: use POST /embeddings');
      expect(env.sim.stats('sim-emb').requests).toBe(0);
    });

    it('a client that goes away aborts the upstream request', async () => {
      env.sim.setKnobs('sim-emb', { latencyMs: 2000 });
      const ac = new AbortController();
      const pending = ask({}, { signal: ac.signal }).catch(() => null);
      await until(() => env.sim.stats('sim-emb').inFlight === 1);
      ac.abort();
      await pending;
      await until(() => env.sim.stats('sim-emb').aborted === 1, 2000);
      expect(env.sim.stats('sim-emb').inFlight).toBe(0);
    });

    it("the key's guardrail applies: a provider allowlist narrows the endpoints, a blocked model is a 403", async () => {
      const { key, hash } = await createInferenceKey(env.t, { name: 'emb-guarded' });
      const g = await env.t.call('POST', '/guardrails', { body: { name: 'only emb2', allowed_providers: ['sim-emb2'] } });
      expect(g.status).toBe(201);
      expect((await env.t.call('POST', `/guardrails/${g.body.data.id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
      const ok = await ask({ model: 'test/embed-fallback', provider: { order: ['sim-emb'] } }, { key });
      expect(ok.status).toBe(200);
      expect(env.sim.stats('sim-emb').requests).toBe(0);
      expect(env.sim.stats('sim-emb2').requests).toBe(1);
      const blocked = await ask({}, { key });
      expect(blocked.status).toBe(403);
      expect(blocked.body.error.message).toMatch(/^Blocked by guardrail "only emb2"/);
    });

    it('no key → 401; a management key → 403', async () => {
      expect((await ask({}, { key: null })).status).toBe(401);
      const r = await ask({}, { key: env.t.adminKey });
      expect(r.status).toBe(403);
    });
  });

  describe('validation (400 naming the field, nothing sent upstream)', () => {
    it.each([
      ['no input', { input: undefined }, 'input'],
      ['no model', { model: undefined }, 'model'],
      ['an empty string', { input: '' }, 'input'],
      ['an empty list', { input: [] }, 'input'],
      ['an empty string in a list', { input: ['ok', ''] }, 'input'],
      ['2049 inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
      ['a negative token id', { input: [1, -2] }, 'input'],
      ['encoding_format int8', { encoding_format: 'int8' }, 'encoding_format'],
      ['dimensions 0', { dimensions: 0 }, 'dimensions'],
      ['dimensions 1.5', { dimensions: 1.5 }, 'dimensions'],
      ['an unknown provider sort', { provider: { sort: 'fastest' } }, 'provider'],
    ])('%s → 400', async (_label, patch, field) => {
      const r = await ask(patch);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe(400);
      expect(r.body.error.message).toContain(field);
      expect(env.sim.stats('sim-emb').requests).toBe(0);
    });

    it('malformed JSON → 400', async () => {
      const r = await embed(env, '{"model":');
      expect(r.status).toBe(400);
    });
  });

  describe('listings and the OpenAPI document', () => {
    it('GET /embeddings/models lists the embeddings models only; GET /models (text by default) does not', async () => {
      const r = await env.t.call('GET', '/embeddings/models', { key: null });
      expect(r.status).toBe(200);
      const ids = r.body.data.map((m: { id: string }) => m.id);
      expect(ids).toContain('test/embed');
      expect(ids).not.toContain('test/alpha');
      expect(r.body.total_count).toBe(ids.length);
      const m = r.body.data.find((x: { id: string }) => x.id === 'test/embed');
      expect(m.architecture.output_modalities).toEqual(['embeddings']);
      expect(m.pricing.prompt).toBe('0.0000001');
      const paged = await env.t.call('GET', '/embeddings/models?limit=2', { key: null });
      expect(paged.body.data).toHaveLength(2);
      expect(paged.body.links.next).toBe('/api/v1/embeddings/models?limit=2&offset=2');
      const text = await env.t.call('GET', '/models', { key: null });
      expect(text.body.data.map((x: { id: string }) => x.id)).not.toContain('test/embed');
      // The key's own view includes the embeddings models it can reach (not the one without credentials).
      const mine = (await env.t.call('GET', '/models/user', { key: env.key })).body.data.map((x: { id: string }) => x.id);
      expect(mine).toEqual(expect.arrayContaining(['test/embed', 'test/alpha']));
      expect(mine).not.toContain('test/embed-nokey');
    });

    it('the endpoints of an embeddings model are routable (status 0)', async () => {
      // sim-emb failed in earlier tests; the clock moved past the 30 s window since (the listing reads the same clock).
      const r = await env.t.call('GET', '/models/test/embed/endpoints', { key: null });
      expect(r.body.data.endpoints[0]).toMatchObject({ tag: 'sim-emb', status: 0 });
    });

    it('the OpenAPI document has both operations', async () => {
      const r = await env.t.call('GET', '/openapi.json', { key: null });
      expect(r.body.paths['/embeddings'].post.requestBody).toBeTruthy();
      expect(Object.keys(r.body.paths['/embeddings'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '404', '429', '502', '503', '524', '529']));
      expect(r.body.paths['/embeddings/models'].get).toBeTruthy();
    });
  });
});

describe('the shipped catalog', () => {
  it('embeddings models are served by POST /embeddings only, with dimensions where the model takes it', async () => {
    const { CatalogService } = await import('../../src/services/catalog.js');
    const { shippedCatalog } = await import('../../src/services/shipped-catalog.js');
    const cat = new CatalogService(shippedCatalog(), {});
    const small = cat.embeddingRoute.endpointsByModel.get('openai/text-embedding-3-small');
    expect(small?.map((e) => [e.provider, e.upstreamModel, e.pricing?.prompt, e.supported_parameters.includes('dimensions')])).toEqual([['openai', 'text-embedding-3-small', '0.00000002', true]]);
    expect(cat.embeddingRoute.endpointsByModel.get('openai/text-embedding-ada-002')?.[0].supported_parameters).not.toContain('dimensions');
    expect(cat.embeddingRoute.endpointsByModel.get('mistralai/mistral-embed')?.[0].provider).toBe('mistral');
    for (const id of cat.embeddingRoute.endpointsByModel.keys()) expect(cat.route.endpointsByModel.has(id)).toBe(false);
  });
});

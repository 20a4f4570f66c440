/**
 * POST /rerank end to end through the simulator: Jina-style and Cohere v2 providers, results sorted and cut to top_n
 * with the documents echoed, token and search-unit prices, the generation record, fallbacks, errors and bad input.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { generation } from '../speech/util.js';
import { simRelevance } from '../../src/sim/rerank.js';
import { rerankCost } from '../../src/services/rerank.js';
import { CatalogService } from '../../src/services/catalog.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';

const TOKEN_PRICE = { prompt: '0.00000005', completion: '0' };
const UNIT_PRICE = { prompt: '0', completion: '0', search_unit: '0.002' };

function catalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const provider = (slug: string, version: string, extra: Record<string, unknown> = {}) => ({ slug, name: `Sim ${slug.slice(4)}`, protocol: 'openai', base_url: `${simUrl}/${slug}/${version}`, no_auth: true, data_policy: zdr, ...extra });
  const model = (id: string) => ({ id, name: id, context_length: 8192, input_modalities: ['text'], output_modalities: ['rerank'] });
  return {
    providers: [provider('sim-rr', 'v1'), provider('sim-rr2', 'v1'), provider('sim-cohere', 'v2'), provider('sim-voyage', 'voyage/v1'), provider('sim-rr-slow', 'v1', { timeouts: { first_byte_ms: 300 } })],
    models: ['test/rerank', 'test/rerank-cohere', 'test/rerank-voyage', 'test/rerank-both', 'test/rerank-slow'].map(model),
    endpoints: [
      { model: 'test/rerank', provider: 'sim-rr', upstream_model: 'rr-1', pricing: TOKEN_PRICE },
      { model: 'test/rerank-cohere', provider: 'sim-cohere', upstream_model: 'rerank-sim', pricing: UNIT_PRICE, rerank_protocol: 'cohere' },
      { model: 'test/rerank-voyage', provider: 'sim-voyage', upstream_model: 'rerank-2', pricing: TOKEN_PRICE, rerank_protocol: 'voyage' },
      { model: 'test/rerank-both', provider: 'sim-cohere', upstream_model: 'rerank-sim', pricing: UNIT_PRICE, rerank_protocol: 'cohere' },
      { model: 'test/rerank-both', provider: 'sim-rr2', upstream_model: 'rr-2', pricing: { prompt: '0.0000001', completion: '0' } },
      { model: 'test/rerank-slow', provider: 'sim-rr-slow', upstream_model: 'rr-slow', pricing: TOKEN_PRICE },
    ],
  };
}

describe('POST /rerank', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const query = 'capital of France';
  const documents = ['Berlin is the capital of Germany.', 'Paris is the capital of France.', 'France grows wine.', 'Madrid is sunny.'];
  const rerank = (body: Record<string, unknown>, opts: { key?: string | null; headers?: Record<string, string> } = {}) => {
    const key = opts.key === undefined ? env.key : opts.key;
    return fetch(`${env.t.api}/rerank`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers }, body: JSON.stringify({ model: 'test/rerank', query, documents, ...body }) }).then(
      async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Record<string, any> }), // eslint-disable-line @typescript-eslint/no-explicit-any
    );
  };
  const expectedOrder = () => documents.map((d, index) => ({ index, score: simRelevance(query, d) })).sort((a, b) => b.score - a.score);

  it('the response cache applies to rerank too', async () => {
    const headers = { 'x-gateway-cache': 'true', 'x-gateway-cache-ttl': '60' };
    expect((await rerank({ top_n: 3 }, { headers })).headers.get('x-gateway-cache-status')).toBe('MISS');
    const hit = await rerank({ top_n: 3 }, { headers });
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.headers.get('x-gateway-cache-ttl')).toBe('60');
    expect(hit.body.results).toHaveLength(3);
    expect(env.sim.stats('sim-rr').requests).toBe(1);
  });

  it('Jina-style: sorted by relevance, cut to top_n, documents echoed, tokens priced', async () => {
    const r = await rerank({ top_n: 2 });
    expect(r.status).toBe(200);
    const order = expectedOrder().slice(0, 2);
    expect(r.body.results).toEqual(order.map((o) => ({ index: o.index, relevance_score: o.score, document: { text: documents[o.index] } })));
    expect(r.body.results[0].index).toBe(1); // Paris
    expect(r.body).toMatchObject({ model: 'test/rerank', provider: 'Sim rr', id: r.headers.get('x-generation-id') });
    const sent = env.sim.stats('sim-rr').lastBody as Record<string, unknown>;
    expect(sent).toEqual({ model: 'rr-1', query, documents, return_documents: false, top_n: 2 });
    const tokens = r.body.usage.total_tokens;
    expect(tokens).toBeGreaterThan(0);
    expect(r.body.usage).toMatchObject({ cost: rerankCost(TOKEN_PRICE, tokens, 0).cost, is_byok: false });
    expect(r.body.usage.search_units).toBeUndefined();
  });

  it('Cohere v2: text documents as strings, search units priced', async () => {
    const r = await rerank({ model: 'test/rerank-cohere', documents: [...documents.slice(0, 3), { text: documents[3] }] });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { index: number }) => x.index)).toEqual(expectedOrder().map((o) => o.index));
    expect(r.body.results.at(-1).document).toEqual(expect.objectContaining({ text: expect.any(String) }));
    expect((env.sim.stats('sim-cohere').lastBody as { documents: unknown[] }).documents).toEqual(documents);
    expect(r.body.usage).toMatchObject({ search_units: 1, total_tokens: 0, cost: 0.002 });
  });

  it('Voyage: top_n sent as top_k, its `data` list read, tokens priced', async () => {
    const r = await rerank({ model: 'test/rerank-voyage', top_n: 3 });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { index: number }) => x.index)).toEqual(expectedOrder().slice(0, 3).map((o) => o.index));
    expect(env.sim.stats('sim-voyage').lastBody).toEqual({ model: 'rerank-2', query, documents, top_k: 3 });
    expect(r.body.usage.total_tokens).toBeGreaterThan(0);
    expect(r.body.usage.cost).toBe(rerankCost(TOKEN_PRICE, r.body.usage.total_tokens, 0).cost);
  });

  it('image documents skip an API that takes text only; none left → 404', async () => {
    const docs = [{ image: 'https://example.test/a.png' }, 'Paris is the capital of France.'];
    const both = await rerank({ model: 'test/rerank-both', documents: docs });
    expect(both.status).toBe(200);
    expect(env.sim.stats('sim-cohere').requests).toBe(0);
    expect(env.sim.stats('sim-rr2').requests).toBe(1);
    expect(both.body.results.find((x: { index: number }) => x.index === 0).document).toEqual({ image: 'https://example.test/a.png' });
    const none = await rerank({ model: 'test/rerank-cohere', documents: docs });
    expect(none.status).toBe(404);
    expect(none.body.error.metadata.excluded_by).toEqual(['unsupported_parameter']);
  });

  it('the generation record: api_type rerank, tokens and cost', async () => {
    const r = await rerank({});
    const g = await generation(env, r.headers.get('x-generation-id')!);
    expect(g).toMatchObject({ api_type: 'rerank', model: 'test/rerank', provider_name: 'sim-rr', status: 200, tokens_prompt: r.body.usage.total_tokens, total_cost: r.body.usage.cost });
  });

  it('a failing provider falls back to the next; errors map as everywhere', async () => {
    env.sim.setKnobs('sim-cohere', { errorStatus: 500 });
    const r = await rerank({ model: 'test/rerank-both', provider: { order: ['sim-cohere', 'sim-rr2'] } }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(r.body.gateway_metadata.attempts.map((a: { provider: string; status: number }) => [a.provider, a.status])).toEqual([
      ['sim-cohere', 502],
      ['sim-rr2', 200],
    ]);
    env.sim.setKnobs('sim-rr', { errorStatus: 429, retryAfter: 4 });
    const limited = await rerank({});
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('4');
    env.sim.setKnobs('sim-rr-slow', { hang: true });
    expect((await rerank({ model: 'test/rerank-slow' })).status).toBe(524);
  });

  it('unknown model → 404; a chat model → 400; a rerank model on the chat API → 400; no key → 401', async () => {
    expect((await rerank({ model: 'test/nope' })).status).toBe(404);
    const chatModel = await rerank({ model: 'test/alpha' });
    expect(chatModel.status).toBe(400);
    expect(chatModel.body.error.metadata.field).toBe('model');
    const c = await env.t.call('POST', '/chat/completions', { body: { model: 'test/rerank', messages: [{ role: 'user', content: 'hi' }] }, key: env.key });
    expect(c.body.error.message).toBe('test/rerank is a rerank model: use POST /rerank');
    expect((await rerank({}, { key: null })).status).toBe(401);
  });

  it('a key without room for the rerank\'s cost → 402 before any call; one with room for one → one', async () => {
    const { key } = await createInferenceKey(env.t, { name: 'rr-limited', limit: 0.001 });
    const refused = await rerank({ model: 'test/rerank-cohere' }, { key }); // one search unit: $0.002
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain('this rerank can cost up to $0.002000000');
    const room = await createInferenceKey(env.t, { name: 'rr-room', limit: 0.003 });
    expect((await rerank({ model: 'test/rerank-cohere' }, { key: room.key })).status).toBe(200);
    expect((await rerank({ model: 'test/rerank-cohere' }, { key: room.key })).status).toBe(402);
  });

  it.each([
    ['no query', { query: undefined }, 'query'],
    ['an empty query', { query: '' }, 'query'],
    ['no documents', { documents: [] }, 'documents'],
    ['an empty document', { documents: ['ok', ''] }, 'documents'],
    ['a document object without text or image', { documents: [{}] }, 'documents'],
    ['top_n 0', { top_n: 0 }, 'top_n'],
    ['an unknown field', { return_documents: true }, 'return_documents'],
  ])('%s → 400 naming the field, nothing sent', async (_label, patch, field) => {
    const r = await rerank(patch);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain(field);
    expect(env.sim.stats('sim-rr').requests).toBe(0);
  });

  it('top_n above the number of documents returns them all', async () => {
    const r = await rerank({ top_n: 50 });
    expect(r.body.results).toHaveLength(documents.length);
  });

  it('the shipped catalog: Cohere Rerank 3.5 over Cohere’s v2 API, per search unit; in the OpenAPI document', async () => {
    const cat = new CatalogService(shippedCatalog(), {});
    expect(cat.rerankRoute.endpointsByModel.get('cohere/rerank-v3.5')?.[0]).toMatchObject({ provider: 'cohere', rerank_protocol: 'cohere', pricing: { search_unit: '0.002' } });
    expect(cat.route.endpointsByModel.has('cohere/rerank-v3.5')).toBe(false);
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    expect(doc.body.paths['/rerank'].post).toBeTruthy();
  });
});

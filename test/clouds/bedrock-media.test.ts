/**
 * Amazon Bedrock's image models (InvokeModel: Nova Canvas, Titan Image Generator, Stability) and rerankers (the Agent
 * Runtime's Rerank API) through the gateway (docs/clouds.md), on the simulator, which verifies every SigV4 signature:
 * `POST /images` with the `openai` SDK (family bodies, sizes and ratios mapped, per-image cost), sizes and ratios a
 * family lacks refused with a 400 naming the field, a filtered Stability prompt, a wrong secret failing over, a
 * workspace's BYOK AWS key pair; `POST /rerank` for Amazon Rerank and Cohere Rerank 3.5 (model ARN in the key's
 * region, results ordered and cut, per-query cost); the image listings; the shipped catalog's Bedrock entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { buildCatalog } from '../../src/core/catalog-build.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { simPng } from '../../src/sim/images.js';
import { simRelevance } from '../../src/sim/rerank.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };
const NOVA = 'amazon.nova-canvas-v1:0';
const TITAN = 'amazon.titan-image-generator-v2:0';
const SD35 = 'stability.sd3-5-large-v1:0';
const KEY = 'AKIDSIMMEDIA:simsecret/AKIDSIMMEDIA';
const image = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: id, context_length: 0, input_modalities: ['text'], output_modalities: ['image'], ...extra });
const reranker = (id: string) => ({ id, name: id, context_length: 4096, input_modalities: ['text'], output_modalities: ['rerank'] });

describe('Amazon Bedrock images and rerank', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'bedrock-media-test-key-0123456789abcdef' },
      catalog: (sim) => ({
        providers: [
          { slug: 'br-media', name: 'Bedrock media', protocol: 'bedrock', base_url: `${sim}/br-media`, api_key: KEY, cloud: { region: 'us-west-2' }, data_policy: ZDR },
          { slug: 'br-media-bad', name: 'Bedrock (wrong secret)', protocol: 'bedrock', base_url: `${sim}/br-media-bad`, api_key: 'AKIDSIMBAD:wrong-secret', cloud: { region: 'us-west-2' }, data_policy: ZDR },
          { slug: 'br-media-team', name: 'Bedrock (BYOK only)', protocol: 'bedrock', base_url: `${sim}/br-media-team`, cloud: { region: 'us-east-1' }, data_policy: ZDR },
        ],
        models: [image('test/nova'), image('test/titan'), image('test/sd35'), reranker('test/br-rerank'), reranker('test/br-cohere-rerank')],
        endpoints: [
          { model: 'test/nova', provider: 'br-media-bad', upstream_model: NOVA, pricing: { prompt: '0', completion: '0', image_output: '0.04' }, supported_parameters: ['n', 'size', 'aspect_ratio', 'seed'] },
          { model: 'test/nova', provider: 'br-media', upstream_model: NOVA, pricing: { prompt: '0', completion: '0', image_output: '0.04' }, supported_parameters: ['n', 'size', 'aspect_ratio', 'seed'] },
          { model: 'test/nova', provider: 'br-media-team', upstream_model: NOVA, pricing: { prompt: '0', completion: '0', image_output: '0.04' }, supported_parameters: ['n', 'size', 'aspect_ratio', 'seed'] },
          { model: 'test/titan', provider: 'br-media', upstream_model: TITAN, pricing: { prompt: '0', completion: '0', image_output: '0.01' }, supported_parameters: ['n', 'size', 'aspect_ratio', 'seed'] },
          { model: 'test/sd35', provider: 'br-media', upstream_model: SD35, pricing: { prompt: '0', completion: '0', image_output: '0.08' }, supported_parameters: ['size', 'aspect_ratio', 'seed', 'output_format'] },
          { model: 'test/br-rerank', provider: 'br-media', upstream_model: 'amazon.rerank-v1:0', pricing: { prompt: '0', completion: '0', search_unit: '0.001' }, rerank_protocol: 'bedrock-rerank', supported_parameters: ['top_n'] },
          { model: 'test/br-cohere-rerank', provider: 'br-media', upstream_model: 'cohere.rerank-v3-5:0', pricing: { prompt: '0', completion: '0', search_unit: '0.002' }, rerank_protocol: 'bedrock-rerank', supported_parameters: ['top_n'] },
          { model: 'test/br-cohere-rerank', provider: 'br-media-team', upstream_model: 'cohere.rerank-v3-5:0', pricing: { prompt: '0', completion: '0', search_unit: '0.002' }, rerank_protocol: 'bedrock-rerank', supported_parameters: ['top_n'] },
        ],
      }),
    });
  });
  afterAll(async () => env?.close());

  type Generated = Omit<OpenAI.ImagesResponse, 'usage' | 'data'> & { data: Array<{ b64_json: string; media_type?: string }>; usage: { cost: number; is_byok: boolean } };
  const client = (key = env.key) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 });
  const generate = (model: string, body: Record<string, unknown>, key?: string) => client(key).images.generate({ model, prompt: 'a red fox in snow', ...body } as never) as unknown as Promise<Generated>;
  const last = (p: string) => env.sim.requests.filter((r) => r.provider === p).at(-1)!;
  const sigv4 = (region: string, id = 'AKIDSIMMEDIA') => new RegExp(`^AWS4-HMAC-SHA256 Credential=${id}/\\d{8}/${region}/bedrock/aws4_request`);
  const refused = async (body: Record<string, unknown>) => {
    const r = await env.t.call('POST', '/images', { key: env.key, body: { prompt: 'a red fox in snow', ...body } });
    return { status: r.status, message: String(r.body?.error?.message), field: r.body?.error?.metadata?.field };
  };

  it('Nova Canvas: a TEXT_IMAGE InvokeModel call, signed for the region, n images at the per-image price', async () => {
    const r = await generate('test/nova', { n: 2, size: '1024x1024', seed: 7, provider: { only: ['br-media'] } });
    expect(r.data).toHaveLength(2);
    r.data.forEach((d, i) => {
      expect(Buffer.from(d.b64_json!, 'base64').equals(simPng(`${NOVA}\u0000a red fox in snow\u00007\u0000${i}`))).toBe(true);
      expect(d.media_type).toBe('image/png');
    });
    expect(r.usage.cost).toBe(0.08);
    expect(r.usage.is_byok).toBe(false);
    const up = last('br-media');
    expect(up.path).toBe(`/model/${encodeURIComponent(NOVA)}/invoke`);
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a red fox in snow' }, imageGenerationConfig: { numberOfImages: 2, width: 1024, height: 1024, seed: 7 } });
    expect(String(up.headers.authorization)).toMatch(sigv4('us-west-2'));
  });

  it('Nova Canvas: an aspect ratio becomes about one megapixel in steps of 16; negativeText from provider.options; quality dropped', async () => {
    const r = await env.t.call('POST', '/images', { key: env.key,
      body: { model: 'test/nova', prompt: 'a red fox in snow', aspect_ratio: '16:9', quality: 'high', provider: { only: ['br-media'], options: { 'br-media': { textToImageParams: { negativeText: 'people' } } } } },
    });
    expect(r.status).toBe(200);
    expect(last('br-media').body).toEqual({ taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a red fox in snow', negativeText: 'people' }, imageGenerationConfig: { numberOfImages: 1, width: 1360, height: 768 } });
  });

  it('Nova Canvas: sizes the model or the price tier cannot take are refused, naming the field', async () => {
    const odd = await refused({ model: 'test/nova', size: '1000x1000' });
    expect(odd).toMatchObject({ status: 400, field: 'size' });
    expect(odd.message).toMatch(/divisible by 16/);
    const wide = await refused({ model: 'test/nova', aspect_ratio: '8:1' });
    expect(wide).toMatchObject({ status: 400, field: 'aspect_ratio' });
    expect(wide.message).toMatch(/between 1:4 and 4:1/);
    const large = await refused({ model: 'test/nova', size: '2048x2048' });
    expect(large).toMatchObject({ status: 400, field: 'size' });
    expect(large.message).toMatch(/above 1024x1024/);
    const many = await refused({ model: 'test/nova', n: 6 });
    expect(many.status).toBe(400);
    const seed = await refused({ model: 'test/nova', seed: 900_000_000 });
    expect(seed).toMatchObject({ status: 400, field: 'seed' });
  });

  it('Titan Image Generator: a listed size, an aspect ratio mapped to its listed size; others refused naming the field', async () => {
    const r = await generate('test/titan', { size: '1152x768', n: 3 });
    expect(r.data).toHaveLength(3);
    expect(r.usage.cost).toBe(0.03);
    expect(last('br-media').body).toEqual({ taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a red fox in snow' }, imageGenerationConfig: { numberOfImages: 3, width: 1152, height: 768 } });
    await generate('test/titan', { aspect_ratio: '2:3' });
    expect(last('br-media').body).toMatchObject({ imageGenerationConfig: { width: 768, height: 1152 } });
    await generate('test/titan', { aspect_ratio: '16:9' });
    expect(last('br-media').body).toMatchObject({ imageGenerationConfig: { width: 1152, height: 640 } });
    const size = await refused({ model: 'test/titan', size: '1024x768' });
    expect(size).toMatchObject({ status: 400, field: 'size' });
    expect(size.message).toMatch(/Titan Image Generator takes the sizes 1024x1024, 768x768/);
    const ratio = await refused({ model: 'test/titan', aspect_ratio: '21:9' });
    expect(ratio).toMatchObject({ status: 400, field: 'aspect_ratio' });
  });

  it('Stability SD3.5 Large: prompt, aspect ratio, seed and output format; a pixel size becomes its ratio', async () => {
    const r = await generate('test/sd35', { aspect_ratio: '16:9', seed: 11, output_format: 'jpeg' });
    expect(r.data).toHaveLength(1);
    expect(r.data[0].media_type).toBe('image/jpeg');
    expect(r.usage.cost).toBe(0.08);
    const up = last('br-media');
    expect(up.path).toBe(`/model/${encodeURIComponent(SD35)}/invoke`);
    expect(up.body).toEqual({ prompt: 'a red fox in snow', aspect_ratio: '16:9', seed: 11, output_format: 'jpeg' });
    await generate('test/sd35', { size: '1024x1024' });
    expect(last('br-media').body).toEqual({ prompt: 'a red fox in snow', aspect_ratio: '1:1' });
  });

  it('Stability: a ratio or size it lacks, or n > 1, is a 400; a filtered prompt is no image (502)', async () => {
    const ratio = await refused({ model: 'test/sd35', aspect_ratio: '4:3' });
    expect(ratio).toMatchObject({ status: 400, field: 'aspect_ratio' });
    expect(ratio.message).toMatch(/16:9, 1:1, 21:9/);
    const size = await refused({ model: 'test/sd35', size: '1024x768' });
    expect(size).toMatchObject({ status: 400, field: 'size' });
    // n > 1: no endpoint of the model lists n (routing's own refusal, as for every one-image-per-call provider).
    const many = await refused({ model: 'test/sd35', n: 2 });
    expect(many.status).toBe(404);
    expect(many.message).toMatch(/n = 2/);
    const filtered = await env.t.call('POST', '/images', { key: env.key, body: { model: 'test/sd35', prompt: 'something [filtered]' } });
    expect(filtered.status).toBe(502);
    expect(String(filtered.body.error.message)).toMatch(/Filter reason: prompt/);
  });

  it('streamed (stream: true) through the openai SDK: one completed event per image, the cost on the last', async () => {
    const stream = await client().images.generate({ model: 'test/titan', prompt: 'a red fox in snow', n: 2, stream: true } as never);
    const events: Array<{ type: string; b64_json: string; usage?: { cost?: number } }> = [];
    for await (const e of stream as unknown as AsyncIterable<(typeof events)[number]>) events.push(e);
    expect(events.map((e) => e.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    expect(events[1].usage?.cost).toBe(0.02);
    expect(last('br-media').body).toMatchObject({ imageGenerationConfig: { numberOfImages: 2 } });
  });

  it('a wrong secret is refused by the signature check (403) and the next endpoint serves', async () => {
    const r = await generate('test/nova', { provider: { order: ['br-media-bad', 'br-media'], only: ['br-media-bad', 'br-media'] } });
    expect(r.data).toHaveLength(1);
    expect(last('br-media-bad').status).toBe(403);
    expect(last('br-media').status).toBe(200);
  });

  it("a workspace's BYOK AWS key pair signs its image and rerank calls (is_byok), in the key's region", async () => {
    const ok = await env.t.call('POST', '/byok', { body: { provider: 'br-media-team', key: JSON.stringify({ access_key_id: 'AKIDSIMTEAM', secret_access_key: 'simsecret/AKIDSIMTEAM', region: 'eu-central-1' }) } });
    expect(ok.status).toBe(201);
    const r = await generate('test/nova', { provider: { only: ['br-media-team'] } });
    expect(r.usage.is_byok).toBe(true);
    expect(String(last('br-media-team').headers.authorization)).toMatch(sigv4('eu-central-1', 'AKIDSIMTEAM'));
    const rr = await env.t.call('POST', '/rerank', { key: env.key, body: { model: 'test/br-cohere-rerank', query: 'fox', documents: ['a fox', 'a dog'], provider: { only: ['br-media-team'] } } });
    expect(rr.status).toBe(200);
    expect(rr.body.usage.is_byok).toBe(true);
    const up = last('br-media-team') as { body: { rerankingConfiguration: { bedrockRerankingConfiguration: { modelConfiguration: { modelArn: string } } } }; headers: Record<string, unknown> };
    expect(up.body.rerankingConfiguration.bedrockRerankingConfiguration.modelConfiguration.modelArn).toBe('arn:aws:bedrock:eu-central-1::foundation-model/cohere.rerank-v3-5:0');
    expect(String(up.headers.authorization)).toMatch(sigv4('eu-central-1', 'AKIDSIMTEAM'));
  });

  const DOCS = ['The quick brown fox jumps.', 'A lazy dog sleeps all day.', 'Foxes are quick and clever animals.', 'Cats purr.'];

  it('Amazon Rerank: the Rerank API body, results ordered and cut to top_n, a search unit per 100 documents', async () => {
    const r = await env.t.call('POST', '/rerank', { key: env.key, body: { model: 'test/br-rerank', query: 'quick fox', documents: DOCS, top_n: 2 } });
    expect(r.status).toBe(200);
    const want = DOCS.map((d, index) => ({ index, score: simRelevance('quick fox', d) })).sort((a, b) => b.score - a.score).slice(0, 2);
    expect(r.body.results.map((x: { index: number }) => x.index)).toEqual(want.map((w) => w.index));
    expect(r.body.results[0]).toEqual({ index: want[0].index, relevance_score: want[0].score, document: { text: DOCS[want[0].index] } });
    expect(r.body.usage).toMatchObject({ search_units: 1, cost: 0.001 });
    const up = last('br-media');
    expect(up.path).toBe('/rerank');
    expect(String(up.headers.authorization)).toMatch(sigv4('us-west-2'));
    expect(up.body).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'quick fox' } }],
      sources: DOCS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: { modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' }, numberOfResults: 2 } },
    });
  });

  it('Cohere Rerank 3.5 on Bedrock: 150 documents are two queries; image documents have no Bedrock endpoint', async () => {
    const docs = Array.from({ length: 150 }, (_, i) => `document ${i} about ${i % 3 === 0 ? 'foxes' : 'dogs'}`);
    const r = await env.t.call('POST', '/rerank', { key: env.key, body: { model: 'test/br-cohere-rerank', query: 'foxes', documents: docs, provider: { only: ['br-media'] } } });
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(150);
    expect(r.body.usage).toMatchObject({ search_units: 2, cost: 0.004 });
    const img = await env.t.call('POST', '/rerank', { key: env.key, body: { model: 'test/br-cohere-rerank', query: 'foxes', documents: [{ image: 'data:image/png;base64,AAAA' }] } });
    expect(img.status).toBeGreaterThanOrEqual(400);
    expect(img.status).toBeLessThan(500);
  });

  it('the image listing shows each family its own parameters', async () => {
    const r = await env.t.call('GET', '/images/models/test/titan/endpoints', { key: env.key });
    expect(r.status).toBe(200);
    const params = r.body.data?.endpoints?.[0]?.supported_parameters ?? r.body.endpoints?.[0]?.supported_parameters;
    expect(params.size.values).toContain('1173x640');
    expect(params.n).toEqual({ type: 'range', min: 1, max: 5 });
    const sd = await env.t.call('GET', '/images/models/test/sd35/endpoints', { key: env.key });
    const sdParams = sd.body.data?.endpoints?.[0]?.supported_parameters ?? sd.body.endpoints?.[0]?.supported_parameters;
    expect(sdParams.aspect_ratio.values).toEqual(['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21']);
  });

  it('the catalog refuses the Bedrock image and rerank protocols on another provider; the shipped catalog prices them', () => {
    const build = (endpoint: Record<string, unknown>, output: string) => () =>
      buildCatalog(
        { providers: [{ slug: 'oai', name: 'OAI', protocol: 'openai', base_url: 'https://api.example.com/v1' }], models: [{ id: 'x/m', name: 'm', context_length: 0, output_modalities: [output] }], endpoints: [{ model: 'x/m', provider: 'oai', ...endpoint }] },
        { providers: [], models: [], endpoints: [] },
      );
    expect(build({ image_protocol: 'bedrock-image', pricing: { image_output: '0.04' } }, 'image')).toThrow(/endpoints\[0\]\.image_protocol bedrock-image needs a bedrock provider/);
    expect(build({ rerank_protocol: 'bedrock-rerank', pricing: { search_unit: '0.001' } }, 'rerank')).toThrow(/endpoints\[0\]\.rerank_protocol bedrock-rerank needs a bedrock provider/);
    const apiKeyProvider = { slug: 'brk', name: 'Bedrock API key', protocol: 'bedrock', base_url: 'https://bedrock-runtime.us-west-2.amazonaws.com', cloud: { auth: 'api-key' } };
    expect(() =>
      buildCatalog({ providers: [apiKeyProvider], models: [{ id: 'x/m', name: 'm', context_length: 0, output_modalities: ['rerank'] }], endpoints: [{ model: 'x/m', provider: 'brk', rerank_protocol: 'bedrock-rerank', pricing: { search_unit: '0.001' } }] }, { providers: [], models: [], endpoints: [] }),
    ).toThrow(/bedrock-rerank needs AWS key pair credentials/);
    const shipped = shippedCatalog();
    const ep = (model: string, provider: string) => shipped.endpoints.find((e) => e.model === model && e.provider === provider);
    expect(ep('amazon/nova-canvas', 'amazon-bedrock-us-east-1')?.pricing?.image_output).toBe('0.04');
    expect(ep('stability/sd3.5-large', 'amazon-bedrock')?.pricing?.image_output).toBe('0.08');
    expect(ep('stability/stable-image-ultra', 'amazon-bedrock')?.pricing?.image_output).toBe('0.14');
    expect(ep('amazon/rerank-v1', 'amazon-bedrock')?.pricing?.search_unit).toBe('0.001');
    expect(ep('cohere/rerank-v3.5', 'amazon-bedrock')?.rerank_protocol).toBe('bedrock-rerank');
  });
});

/**
 * POST /images end to end through the simulator: OpenAI's images API (per-token and per-image prices, edits with
 * reference images) and Gemini image output; the listings; the `openai` SDK's images.generate and the
 * @openrouter/sdk's images.generate; validation errors naming the field; 402 when the key's limit cannot cover the
 * images; fallback when the first endpoint fails; records and exact costs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { OpenRouter } from '@openrouter/sdk';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { generation, received } from '../speech/util.js';
import { IMAGE_OUTPUT_TOKENS, GEMINI_IMAGE_TEXT, SIM_IMAGE_TOKENS, simPng } from '../../src/sim/images.js';
import { tokensOfChars } from '../../src/sim/text.js';

import { imageCatalog as catalog } from './util.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Reply = { status: number; headers: Headers; body: Record<string, any> };

describe('POST /images', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const images = (body: Record<string, unknown>, opts: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const key = opts.key === undefined ? env.key : opts.key;
    return fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers }, body: JSON.stringify({ model: 'test/gpt-image', prompt: 'a red panda', ...body }) }).then(
      async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> }),
    );
  };
  const promptTokens = (p: string) => tokensOfChars(p.length);

  it('gpt-image: n images as PNG, usage and the exact per-token cost, recorded', async () => {
    const r = await images({ n: 2, quality: 'high', size: '1024x1024', background: 'transparent', output_format: 'png' });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(2);
    for (const [i, d] of r.body.data.entries()) {
      expect(d.media_type).toBe('image/png');
      expect(Buffer.from(d.b64_json, 'base64').equals(simPng(`a red panda\u0000${i}`))).toBe(true);
    }
    const sent = received(env, 'sim-img').at(-1);
    expect(sent).toMatchObject({ model: 'gpt-image-1', prompt: 'a red panda', n: 2, quality: 'high', size: '1024x1024', background: 'transparent', output_format: 'png' });
    expect(sent.response_format).toBeUndefined();
    const input = promptTokens('a red panda');
    const output = SIM_IMAGE_TOKENS.high * 2;
    // 11 chars → 3 tokens × $0.000005 + 8320 × $0.00004 = 0.000015 + 0.3328
    expect(r.body.usage).toEqual({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output, completion_tokens_details: { image_tokens: output }, cost: 0.332815, is_byok: false });
    const g = await generation(env, r.body.id);
    expect(g).toMatchObject({ api_type: 'image', model: 'test/gpt-image', tokens_prompt: input, tokens_completion: output, total_cost: 0.332815 });
    expect(g.provider_name).toBe('sim-img');
    expect(r.headers.get('x-generation-id')).toBe(r.body.id);
  });

  it('DALL·E: priced per image, b64_json asked for, unsupported parameters dropped and named', async () => {
    const r = await images({ model: 'test/dalle', quality: 'high', background: 'opaque' }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(received(env, 'sim-img').at(-1)).toEqual({ model: 'dall-e-3', prompt: 'a red panda', quality: 'hd', response_format: 'b64_json' });
    expect(r.body.usage.cost).toBe(0.04);
    expect(r.body.gateway_metadata.dropped_parameters ?? r.body.gateway_metadata.routing?.dropped_parameters ?? JSON.stringify(r.body.gateway_metadata)).toContain('background');
    expect((await generation(env, r.body.id)).total_cost).toBe(0.04);
    // provider.max_price.image bounds the per-image price.
    expect((await images({ model: 'test/dalle', provider: { max_price: { image: 0.05 } } })).status).toBe(200);
    const tooDear = await images({ model: 'test/dalle', provider: { max_price: { image: 0.01 } } });
    expect(tooDear.status).toBe(404);
    expect(tooDear.body.error.message).toContain('max_price');
  });

  it('edits: input_references go to /images/edits', async () => {
    const ref = `data:image/png;base64,${simPng('ref').toString('base64')}`;
    const r = await images({ input_references: [{ type: 'image_url', image_url: { url: ref } }], prompt: 'make it blue' });
    expect(r.status).toBe(200);
    const log = env.sim.requests.filter((q) => q.provider === 'sim-img').at(-1)!;
    expect(log.path).toBe('/v1/images/edits');
    expect((log.body as { images: unknown[] }).images).toEqual([{ image_url: ref }]);
    expect(r.body.usage.prompt_tokens).toBe(promptTokens('make it blue') + 65);
  });

  it('Gemini image output: generateContent with IMAGE modality, inlineData parts, token cost', async () => {
    const r = await images({ model: 'test/gemini-image', aspect_ratio: '16:9', seed: 7 });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([{ b64_json: simPng('a red panda\u00007').toString('base64'), media_type: 'image/png' }]);
    const sent = received(env, 'sim-gimg').at(-1);
    expect(sent.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' }, seed: 7 });
    const out = IMAGE_OUTPUT_TOKENS + tokensOfChars(GEMINI_IMAGE_TEXT.length);
    expect(r.body.usage.completion_tokens).toBe(out);
    // 3 × 0.0000003 + 1298 × 0.00003 = 0.0000009 + 0.03894
    expect(r.body.usage.cost).toBe(0.0389409);
    expect((await generation(env, r.body.id)).total_cost).toBe(0.0389409);
  });

  it('n > 1 on a one-image endpoint, or an http reference on Gemini: no endpoint can serve it (404 naming why)', async () => {
    const r = await images({ model: 'test/gemini-image', n: 2 });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain('n = 2');
    const r2 = await images({ model: 'test/gemini-image', input_references: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] });
    expect(r2.status).toBe(404);
    expect(r2.body.error.message).toContain('input_references');
    expect(env.sim.stats('sim-gimg').requests).toBe(0);
  });

  it('falls back to the next endpoint when the first fails, billed at the one that served', async () => {
    env.sim.setKnobs('sim-img', { errorStatus: 503 });
    env.sim.setKnobs('sim-img2', { errorStatus: 503 });
    const order = await images({ model: 'test/both', provider: { order: ['sim-img', 'sim-img2'] } });
    expect(order.status).toBe(502);
    env.sim.resetKnobs();
    env.advance(31_000);
    env.sim.setKnobs('sim-img', { errorStatus: 500 });
    const r = await images({ model: 'test/both', provider: { order: ['sim-img', 'sim-img2'] } });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('Sim img2');
    const input = promptTokens('a red panda');
    const output = SIM_IMAGE_TOKENS.auto;
    expect(r.body.usage.cost).toBe(Number((input * 0.00001 + output * 0.00008).toFixed(9)));
    const g = await generation(env, r.body.id);
    expect(g.provider_name).toBe('sim-img2');
  });

  it('402 when the key limit cannot cover the images; nothing sent upstream', async () => {
    // Room for one gpt-image image at most (6240 tokens × $0.00004 ≈ $0.25 each), not for four.
    const { key, hash } = await createInferenceKey(env.t, { name: 'img-limited', limit: 0.5 });
    const before = env.sim.stats('sim-img').requests;
    const r = await images({ n: 4 }, { key });
    expect(r.status).toBe(402);
    expect(r.body.error.message).toContain('4 images of test/gpt-image');
    expect(env.sim.stats('sim-img').requests).toBe(before);
    // The refusal is in the request log: status 402, no cost.
    await env.t.gw.svc.recorder.flush();
    const log = await env.t.call('GET', `/generations?api_key_hash=${hash}&limit=5`);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const refusal = (log.body.data as any[]).find((g) => g.api_type === 'image');
    expect(refusal).toMatchObject({ status: 402, total_cost: 0 });
    const ok = await images({ n: 1 }, { key });
    expect(ok.status).toBe(200);
  });

  it('validation: 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ prompt: '' }, 'prompt'],
      [{ n: 11 }, 'n'],
      [{ n: 0 }, 'n'],
      [{ size: 'huge' }, 'size'],
      [{ aspect_ratio: '7:3' }, 'aspect_ratio'],
      [{ quality: 'ultra' }, 'quality'],
      [{ background: 'pink' }, 'background'],
      [{ output_format: 'bmp' }, 'output_format'],
      [{ input_references: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }, 'input_references'],
      [{ size: '1024x1024', aspect_ratio: '16:9' }, 'aspect_ratio'],
      [{ size: '1024x1024', resolution: '2K' }, 'resolution'],
      [{ background: 'transparent', output_format: 'jpeg' }, 'background'],
      [{ seed: 1.5 }, 'seed'],
      [{ unknown_field: 1 }, 'unknown_field'],
      [{ model: 'test/alpha' }, 'model'],
    ];
    for (const [body, field] of cases) {
      const r = await images(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toContain(field);
    }
    const missing = await fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/gpt-image' }) });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('prompt');
    expect((await images({ model: 'test/nope' })).status).toBe(404);
    expect((await images({}, { key: null })).status).toBe(401);
  });

  it('a malformed upstream answer is a 502 (checked at the edge), and the next endpoint serves', async () => {
    env.sim.setKnobs('sim-img', { malformed: 'json' });
    expect((await images({})).status).toBe(502);
    const r = await images({ model: 'test/both', provider: { order: ['sim-img', 'sim-img2'] } });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('Sim img2');
  });

  it('GET /images/models and the endpoints listing', async () => {
    const list = (await (await fetch(`${env.t.api}/images/models`)).json()) as { data: Array<Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const gpt = list.data.find((m) => m.id === 'test/gpt-image')!;
    expect(gpt).toMatchObject({ architecture: { output_modalities: ['image'] }, supports_streaming: false, endpoints: '/api/v1/images/models/test/gpt-image/endpoints' });
    expect(gpt.supported_parameters.quality).toEqual({ type: 'enum', values: ['auto', 'low', 'medium', 'high'] });
    expect(list.data.some((m) => m.id === 'test/alpha')).toBe(false);
    const eps = await fetch(`${env.t.api}/images/models/test/dalle/endpoints`);
    expect(eps.status).toBe(200);
    expect(await eps.json()).toEqual({
      id: 'test/dalle',
      endpoints: [{ provider_name: 'Sim img', provider_slug: 'sim-img', provider_tag: 'sim-img', supported_parameters: { size: { type: 'enum', values: ['auto', '1024x1024', '1536x1024', '1024x1536'] }, quality: { type: 'enum', values: ['auto', 'low', 'medium', 'high'] } }, allowed_passthrough_parameters: [], supports_streaming: false, pricing: [{ billable: 'output_image', unit: 'image', cost_usd: 0.04 }] }],
    });
    expect((await fetch(`${env.t.api}/images/models/test/alpha/endpoints`)).status).toBe(404);
  });

  it('the openai SDK: images.generate against the gateway', async () => {
    const client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
    const res = await client.images.generate({ model: 'test/gpt-image', prompt: 'a red panda', n: 1, size: '1024x1024', quality: 'low' });
    expect(res.data).toHaveLength(1);
    expect(Buffer.from(res.data![0].b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(res.usage).toMatchObject({ completion_tokens: SIM_IMAGE_TOKENS.low });
  });

  it('the @openrouter/sdk: images.generate and listModels', async () => {
    const sdk = new OpenRouter({ apiKey: env.key, serverURL: env.t.api });
    const res = await sdk.images.generate({ imageGenerationRequest: { model: 'test/dalle', prompt: 'a red panda' } });
    const body = res as unknown as { data?: Array<{ b64Json?: string; mediaType?: string }> };
    expect(body.data?.[0]?.mediaType).toBe('image/png');
    expect(body.data?.[0]?.b64Json).toBe(simPng('a red panda\u00000').toString('base64'));
    const models = await sdk.images.listModels();
    expect(models.data.some((m) => m.id === 'test/dalle')).toBe(true);
  });

  it('the OpenAPI document describes every image route with real schemas', async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as { paths: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const path of ['/images', '/images/generations']) {
      const op = doc.paths[path].post;
      const body = op.requestBody.content['application/json'].schema;
      expect(body.required).toEqual(['model', 'prompt']);
      expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['n', 'size', 'aspect_ratio', 'quality', 'background', 'output_format', 'seed', 'input_references']));
      expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['data', 'usage', 'created']));
    }
    expect(doc.paths['/images/models'].get.responses['200'].content['application/json'].schema.properties.data.items.required).toContain('supported_parameters');
    expect(doc.paths['/images/models/{author}/{slug}/endpoints'].get.responses['200'].content['application/json'].schema.properties.endpoints.items.required).toContain('pricing');
  });
});

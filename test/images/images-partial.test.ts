/**
 * Partial images on `POST /images` with `stream: true` (docs/images.md): an endpoint that streams natively (OpenAI's
 * images API, listing `partial_images`) is asked with `stream: true, partial_images: N`, and its
 * `image_generation.partial_image` events reach the client as they arrive (the reference's event), then the completed
 * event with usage and exact cost. Through the `openai` SDK and raw SSE; the simulator speaks OpenAI's streamed format.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { generation, received } from '../speech/util.js';
import { SIM_IMAGE_TOKENS, simPng } from '../../src/sim/images.js';
import { PARTIAL_IMAGE_TOKENS, simPartialPng } from '../../src/sim/images-stream.js';
import { tokensOfChars } from '../../src/sim/text.js';
import { imageCatalog, TOKEN_PRICE } from './util.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function catalog(simUrl: string) {
  const base = imageCatalog(simUrl);
  const params = ['n', 'size', 'quality', 'background', 'output_format', 'input_references', 'partial_images'];
  return {
    ...base,
    models: [...base.models, { id: 'test/stream', name: 'stream', context_length: 0, input_modalities: ['text', 'image'], output_modalities: ['image'] }],
    endpoints: [
      ...base.endpoints,
      { model: 'test/stream', provider: 'sim-img', upstream_model: 'gpt-image-1', pricing: TOKEN_PRICE, supported_parameters: params },
      { model: 'test/stream', provider: 'sim-img2', upstream_model: 'gpt-image-1', pricing: { prompt: '0.00001', completion: '0.00008' }, supported_parameters: params },
    ],
  };
}

/** The `data:` events of an SSE body. */
function events(text: string): Array<Json | '[DONE]'> {
  const out: Array<Json | '[DONE]'> = [];
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data: '));
    if (data) out.push(data === 'data: [DONE]' ? '[DONE]' : (JSON.parse(data.slice(6)) as Json));
  }
  return out;
}

const prompt = 'a red panda';
/** The cheaper endpoint first, then the other (no load balancing between them). */
const ORDER = { order: ['sim-img', 'sim-img2'] };
const b64 = (buf: Buffer) => buf.toString('base64');

describe('POST /images, streamed with partial images', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog, env: { GATEWAY_STREAM_KEEPALIVE_MS: '20000' } });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const post = (body: Json, headers: Record<string, string> = {}) =>
    fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}`, ...headers }, body: JSON.stringify({ model: 'test/stream', prompt, stream: true, provider: { only: ['sim-img'] }, ...body }) });

  it('the openai SDK: partial images as OpenAI sends them, then the final image with usage and exact cost', async () => {
    const client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
    const stream = await client.images.generate({ model: 'test/stream', prompt, quality: 'low', stream: true, partial_images: 2, provider: { only: ['sim-img'] } } as OpenAI.ImageGenerateParamsStreaming);
    const got: OpenAI.Images.ImageGenStreamEvent[] = [];
    for await (const ev of stream) got.push(ev);
    expect(got.map((e) => e.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    const [p0, p1, done] = got as [OpenAI.Images.ImageGenPartialImageEvent, OpenAI.Images.ImageGenPartialImageEvent, OpenAI.Images.ImageGenCompletedEvent & Json];
    expect([p0.partial_image_index, p1.partial_image_index]).toEqual([0, 1]);
    expect([p0.b64_json, p1.b64_json]).toEqual([b64(simPartialPng(prompt, 0, 0)), b64(simPartialPng(prompt, 0, 1))]);
    expect(done.b64_json).toBe(b64(simPng(`${prompt}\u00000`)));
    const input = tokensOfChars(prompt.length);
    const output = SIM_IMAGE_TOKENS.low + 2 * PARTIAL_IMAGE_TOKENS;
    const cost = (input * 50_000 + output * 400_000) / 1e10; // $0.000005 and $0.00004 per token, in 1e-10 units
    expect(done.usage).toMatchObject({ prompt_tokens: input, completion_tokens: output, cost, is_byok: false });
    const sent = received(env, 'sim-img').at(-1);
    expect(sent).toMatchObject({ model: 'gpt-image-1', stream: true, partial_images: 2, quality: 'low' });
  });

  it('raw SSE: the partial event has the reference fields; the generation id heads the stream; the record has the cost', async () => {
    const res = await post({ partial_images: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const id = res.headers.get('x-generation-id');
    expect(id).toBeTruthy();
    const evs = events(await res.text());
    expect(evs[0]).toEqual({ type: 'image_generation.partial_image', b64_json: b64(simPartialPng(prompt, 0, 0)), partial_image_index: 0 });
    expect(evs[1]).toMatchObject({ type: 'image_generation.completed', media_type: 'image/png', usage: { completion_tokens: SIM_IMAGE_TOKENS.auto + PARTIAL_IMAGE_TOKENS } });
    expect(evs[2]).toBe('[DONE]');
    const rec = await generation(env, id!);
    expect(rec.total_cost).toBe((evs[1] as Json).usage.cost);
    expect(rec.tokens_completion).toBe(SIM_IMAGE_TOKENS.auto + PARTIAL_IMAGE_TOKENS);
  });

  it('an upstream failure after a partial image was relayed: the error event, no fallback', async () => {
    env.sim.setKnobs('sim-img', { errorAfterChunks: 1 });
    const res = await post({ partial_images: 2, provider: ORDER });
    expect(res.status).toBe(200);
    const evs = events(await res.text());
    expect(evs.map((e) => (e === '[DONE]' ? e : e.type))).toEqual(['image_generation.partial_image', 'error', '[DONE]']);
    expect((evs[1] as Json).error).toMatchObject({ code: '502', message: expect.any(String) });
    expect(received(env, 'sim-img2')).toHaveLength(0);
  });

  it('an upstream that fails before sending anything: the next endpoint streams', async () => {
    env.sim.setKnobs('sim-img', { errorStatus: 500 });
    const res = await post({ partial_images: 1, provider: ORDER });
    expect(received(env, 'sim-img')).toHaveLength(1);
    const evs = events(await res.text());
    expect(evs.map((e) => (e === '[DONE]' ? e : e.type))).toEqual(['image_generation.partial_image', 'image_generation.completed', '[DONE]']);
    expect(received(env, 'sim-img2').at(-1)).toMatchObject({ stream: true, partial_images: 1 });
  });

  it('n > 1, a non-streamed request, or an endpoint that does not stream: whole images, partial_images dropped', async () => {
    const many = events(await (await post({ n: 2, partial_images: 2 }, { 'x-gateway-metadata': 'enabled' })).text());
    expect(many.map((e) => (e === '[DONE]' ? e : e.type))).toEqual(['image_generation.completed', 'image_generation.completed', '[DONE]']);
    expect(JSON.stringify((many[1] as Json).gateway_metadata)).toContain('partial_images');
    expect(received(env, 'sim-img').at(-1).stream).toBeUndefined();

    const plain = await post({ stream: false, partial_images: 2 }, { 'x-gateway-metadata': 'enabled' });
    const body = (await plain.json()) as Json;
    expect(body.data).toHaveLength(1);
    expect(JSON.stringify(body.gateway_metadata)).toContain('partial_images');
    expect(received(env, 'sim-img').at(-1).partial_images).toBeUndefined();

    const other = events(await (await post({ model: 'test/gpt-image', partial_images: 2 })).text());
    expect(other.map((e) => (e === '[DONE]' ? e : e.type))).toEqual(['image_generation.completed', '[DONE]']);
    expect(received(env, 'sim-img').at(-1).stream).toBeUndefined();
  });

  it('partial_images out of range is a 400 naming it', async () => {
    for (const bad of [4, -1, 1.5, 'two']) {
      const res = await post({ partial_images: bad });
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain('partial_images');
    }
  });

  it('the listings say which model streams natively, and partial_images is a parameter of it', async () => {
    const list = (await (await fetch(`${env.t.api}/images/models`)).json()) as Json;
    const stream = list.data.find((m: Json) => m.id === 'test/stream');
    expect(stream.supports_streaming).toBe(true);
    expect(stream.supported_parameters.partial_images).toEqual({ type: 'range', min: 0, max: 3 });
    expect(list.data.find((m: Json) => m.id === 'test/gpt-image').supports_streaming).toBe(false);
    const eps = (await (await fetch(`${env.t.api}/images/models/test/stream/endpoints`)).json()) as Json;
    expect(eps.endpoints.map((e: Json) => e.supports_streaming)).toEqual([true, true]);
  });

  it('the OpenAPI document has partial_images and the partial image event', async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as Json;
    const op = doc.paths['/images'].post;
    expect(JSON.stringify(op.requestBody)).toContain('partial_images');
    expect(JSON.stringify(op.responses['200'].content['text/event-stream'].schema)).toContain('image_generation.partial_image');
  });
});

describe('POST /images, streamed: the whole answer is bounded by GATEWAY_UPSTREAM_MAX_BYTES, as a non-streamed one', () => {
  const MAX = 16 * 1024;
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog, env: { GATEWAY_STREAM_KEEPALIVE_MS: '20000', GATEWAY_UPSTREAM_MAX_BYTES: String(MAX) } });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const post = (body: Json) =>
    fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/stream', prompt, stream: true, provider: { only: ['sim-img'] }, ...body }) });
  const types = (evs: Array<Json | '[DONE]'>) => evs.map((e) => (e === '[DONE]' ? e : e.type));

  it('an image past the bound, before any byte reached the client: the 502 naming the size; with a fallback, the next endpoint serves', async () => {
    env.sim.setKnobs('sim-img', { imageBytes: MAX });
    const res = await post({});
    expect(res.status).toBe(502);
    expect(JSON.stringify(await res.json())).toContain(`Provider returned a response larger than ${MAX} bytes`);
    expect(received(env, 'sim-img').at(-1)).toMatchObject({ stream: true });

    const fallback = await post({ partial_images: 1, provider: ORDER });
    expect(fallback.status).toBe(200);
    expect(types(events(await fallback.text()))).toEqual(['image_generation.partial_image', 'image_generation.completed', '[DONE]']);
    expect(received(env, 'sim-img2')).toHaveLength(1);
  });

  it('partial images each under the bound but together over it: those before the bound, then the error event, no fallback', async () => {
    // Each event is about a third of the bound (base64 of MAX/4 bytes): two fit, the third crosses it. Paced, so that
    // each arrives in a read of its own (the read that crosses the bound is dropped whole).
    env.sim.setKnobs('sim-img', { imageBytes: MAX / 4, chunkGapMs: 100 });
    const res = await post({ partial_images: 3, provider: ORDER });
    expect(res.status).toBe(200);
    const evs = events(await res.text());
    const relayed = evs.filter((e) => e !== '[DONE]' && e.type === 'image_generation.partial_image').length;
    expect(relayed === 2 || relayed === 1).toBe(true); // 1 only if a stalled machine read the second with the third
    expect(types(evs)).toEqual([...Array<string>(relayed).fill('image_generation.partial_image'), 'error', '[DONE]']);
    expect((evs[0] as Json).b64_json).toBe(b64(simPartialPng(prompt, 0, 0, MAX / 4)));
    expect((evs[relayed] as Json).error).toMatchObject({ code: '502', message: expect.stringContaining(`Provider returned a response larger than ${MAX} bytes`) });
    expect(received(env, 'sim-img2')).toHaveLength(0);

    // Under the bound as a whole, the same images stream to the end.
    env.advance(31_000); // past the failed endpoint's time out of the route
    const fits = events(await (await post({ partial_images: 1 })).text());
    expect(types(fits)).toEqual(['image_generation.partial_image', 'image_generation.completed', '[DONE]']);
    expect((fits[1] as Json).b64_json).toBe(b64(simPng(`${prompt}\u00000`, 8, MAX / 4)));
  });
});

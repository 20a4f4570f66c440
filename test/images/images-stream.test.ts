/**
 * `POST /images` with `stream: true` (docs/images.md): the hosted API's image event stream — one
 * `image_generation.completed` event per image (usage and exact cost on the last), `[DONE]` — through the `openai`
 * SDK's `images.generate({stream: true})` and raw SSE; keep-alive comments while a slow upstream works; an upstream
 * failure after the stream started is its `error` event; a refusal before it is the ordinary JSON error.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { generation } from '../speech/util.js';
import { SIM_IMAGE_TOKENS, simPng } from '../../src/sim/images.js';
import { tokensOfChars } from '../../src/sim/text.js';
import { imageCatalog } from './util.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The `data:` events and the comments of an SSE body. */
function parseSse(text: string): { events: Array<Json | '[DONE]'>; comments: number } {
  const events: Array<Json | '[DONE]'> = [];
  let comments = 0;
  for (const block of text.split('\n\n')) {
    if (block.startsWith(':')) comments++;
    const data = block.split('\n').find((l) => l.startsWith('data: '));
    if (data) events.push(data === 'data: [DONE]' ? '[DONE]' : (JSON.parse(data.slice(6)) as Json));
  }
  return { events, comments };
}

const post = (env: ClockedEnv, body: Json) =>
  fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/gpt-image', prompt: 'a red panda', stream: true, ...body }) });

// A keep-alive period far above any answer time (even on a loaded machine): the 200 is committed with the answer.
describe('POST /images, streamed', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: imageCatalog, env: { GATEWAY_STREAM_KEEPALIVE_MS: '20000' } });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('the openai SDK: one completed event per image, usage and exact cost on the last, recorded', async () => {
    const client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
    const stream = await client.images.generate({ model: 'test/gpt-image', prompt: 'a red panda', n: 2, quality: 'low', stream: true });
    const events: OpenAI.Images.ImageGenStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    expect(events.map((e) => e.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    events.forEach((e, i) => expect(Buffer.from(e.b64_json, 'base64').equals(simPng(`a red panda\u0000${i}`))).toBe(true));
    const input = tokensOfChars('a red panda'.length);
    const output = SIM_IMAGE_TOKENS.low * 2;
    const last = events[1] as OpenAI.Images.ImageGenCompletedEvent & { usage: Json };
    const cost = (input * 50_000 + output * 400_000) / 1e10;
    expect(last.usage).toMatchObject({ prompt_tokens: input, completion_tokens: output, cost, is_byok: false });
    expect((events[0] as Json).usage).toBeUndefined();
    expect((events[0] as Json).media_type).toBe('image/png');
  });

  it('raw SSE: event-stream content type, generation id, [DONE]; the record has the cost', async () => {
    const res = await post(env, { model: 'test/dalle' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const id = res.headers.get('x-generation-id');
    const { events } = parseSse(await res.text());
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ type: 'image_generation.completed', media_type: 'image/png', usage: { cost: 0.04 } });
    expect(events[1]).toBe('[DONE]');
    expect((await generation(env, id!)).total_cost).toBe(0.04);
  });

  it('refused before the stream (bad input, unknown model): the JSON error with its status', async () => {
    const bad = await post(env, { n: 11 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/\bn\b/);
    const unknown = await post(env, { model: 'test/nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/json/);
    const quick = await (env.sim.setKnobs('sim-img', { errorStatus: 400 }), post(env, {}));
    expect(quick.status).toBe(400);
    expect(((await quick.json()) as Json).error.code).toBe(400);
  });

  it('the OpenAPI document gives POST /images both answers', async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as Json;
    const ok = doc.paths['/images'].post.responses['200'].content;
    expect(Object.keys(ok)).toEqual(expect.arrayContaining(['application/json', 'text/event-stream']));
    expect(JSON.stringify(ok['text/event-stream'].schema)).toMatch(/image_generation\.completed/);
  });
});

// A short keep-alive period and upstreams slower than it: the stream is committed before the answer.
describe('POST /images, streamed, with a slow upstream', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: imageCatalog, env: { GATEWAY_STREAM_KEEPALIVE_MS: '100' } });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('a slow upstream: keep-alive comments first, then the image', async () => {
    env.sim.setKnobs('sim-img', { latencyMs: 450 });
    const res = await post(env, {});
    const { events, comments } = parseSse(await res.text());
    expect(comments).toBeGreaterThanOrEqual(2);
    expect(events.at(-2)).toMatchObject({ type: 'image_generation.completed' });
  });

  it('an upstream failure after the stream started: the error event, then [DONE]', async () => {
    env.sim.setKnobs('sim-img', { latencyMs: 300, errorStatus: 400 });
    const res = await post(env, {});
    expect(res.status).toBe(200);
    const { events, comments } = parseSse(await res.text());
    expect(comments).toBeGreaterThanOrEqual(1);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ type: 'error', error: { code: '400', message: expect.any(String) } });
    expect(events[1]).toBe('[DONE]');
  });
});

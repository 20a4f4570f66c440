/**
 * OpenAI Responses' hosted `image_generation` tool as an upstream (docs/images.md): a chat completion with
 * `modalities: ["image", "text"]` routed to an endpoint whose protocol is OpenAI Responses is sent with the tool, and
 * the `image_generation_call` items come back as `message.images` / `delta.images`, billed with the tool's tokens at
 * the endpoint's prices. A Responses client's `partial_images` on the tool gets
 * `response.image_generation_call.partial_image` events. The simulator's Responses side makes the items.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { generation, received } from '../speech/util.js';
import { SIM_IMAGE_TOKENS } from '../../src/sim/images.js';
import { PARTIAL_IMAGE_TOKENS, simPartialPng } from '../../src/sim/images-stream.js';
import { simToolImage } from '../../src/sim/responses-images.js';
import { responsesPromptTokens } from '../../src/sim/responses.js';
import { tokensOfChars } from '../../src/sim/text.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PRICE = { prompt: '0.000005', completion: '0.00004' };

function catalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  return {
    providers: [{ slug: 'sim-resp', name: 'Sim resp', protocol: 'openai-responses', base_url: `${simUrl}/sim-resp/v1`, no_auth: true, data_policy: zdr }],
    models: [{ id: 'test/gpt-image-chat', name: 'GPT image chat', context_length: 128000, input_modalities: ['text', 'image'], output_modalities: ['image', 'text'] }],
    endpoints: [{ model: 'test/gpt-image-chat', provider: 'sim-resp', upstream_model: 'gpt-5', pricing: PRICE, supported_parameters: ['modalities', 'tools', 'tool_choice', 'max_tokens', 'temperature'] }],
  };
}

type WithImages = { images?: Array<{ type: string; image_url: { url: string }; index?: number }> };

describe('the Responses image_generation tool as an upstream', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog });
  let env: ClockedEnv;
  let client: OpenAI;
  beforeEach(() => {
    env = isolated();
    env.sim.setKnobs('sim-resp', { completionTokens: 5 });
    client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
  });
  const prompt = 'draw a red panda';
  const dataUrl = () => `data:image/png;base64,${simToolImage(prompt).toString('base64')}`;
  const chat = { model: 'test/gpt-image-chat', messages: [{ role: 'user' as const, content: prompt }], modalities: ['image', 'text'] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  /** What the upstream reports: the model's tokens plus the image tool's (tool_usage.image_gen). */
  const expected = (sent: Json) => {
    const input = responsesPromptTokens(sent) + tokensOfChars(prompt.length);
    const output = 5 + SIM_IMAGE_TOKENS.auto;
    return { input, output, cost: (input * 50_000 + output * 400_000) / 1e10 };
  };

  it('chat: sent as a Responses request with the image_generation tool; message.images; tool tokens billed', async () => {
    const res = await client.chat.completions.create(chat);
    const msg = res.choices[0].message as typeof res.choices[0]['message'] & WithImages;
    expect(msg.images).toEqual([{ type: 'image_url', image_url: { url: dataUrl() } }]);
    expect(msg.content).toMatch(/^Simulated reply/);
    const sent = received(env, 'sim-resp').at(-1);
    expect(sent.tools).toEqual([{ type: 'image_generation' }]);
    expect(sent.modalities).toBeUndefined();
    const e = expected(sent);
    expect(res.usage).toMatchObject({ prompt_tokens: e.input, completion_tokens: e.output, cost: e.cost });
    expect((await generation(env, res.id)).total_cost).toBe(e.cost);
  });

  it('chat, streamed: delta.images carries the image, then the usage', async () => {
    const stream = await client.chat.completions.create({ ...chat, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
    const images: string[] = [];
    let text = '';
    let usage: Json | undefined;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & WithImages) | undefined;
      if (d?.content) text += d.content;
      for (const img of d?.images ?? []) images.push(img.image_url.url);
      if (chunk.usage) usage = chunk.usage as Json;
    }
    expect(images).toEqual([dataUrl()]);
    expect(text).toMatch(/^Simulated reply/);
    const sent = received(env, 'sim-resp').at(-1);
    expect(sent).toMatchObject({ stream: true, tools: [{ type: 'image_generation' }] });
    expect(usage).toMatchObject({ completion_tokens: expected(sent).output, cost: expected(sent).cost });
  });

  it('chat without modalities: no image tool, no images', async () => {
    const res = await client.chat.completions.create({ model: 'test/gpt-image-chat', messages: [{ role: 'user', content: prompt }] });
    expect((res.choices[0].message as WithImages).images).toBeUndefined();
    expect(received(env, 'sim-resp').at(-1).tools).toBeUndefined();
  });

  it('a Responses client asking partial_images on the tool gets the partial_image events, then the image', async () => {
    const stream = await client.responses.create({ model: 'test/gpt-image-chat', input: prompt, stream: true, tools: [{ type: 'image_generation', partial_images: 2 }] });
    const evs: Json[] = [];
    for await (const ev of stream) evs.push(ev as Json);
    const partials = evs.filter((e) => e.type === 'response.image_generation_call.partial_image');
    expect(partials.map((p) => [p.partial_image_index, p.partial_image_b64])).toEqual([0, 1].map((k) => [k, simPartialPng(prompt, 0, k).toString('base64')]));
    const added = evs.find((e) => e.type === 'response.output_item.added' && e.item.type === 'image_generation_call');
    expect(partials.every((p) => p.item_id === added!.item.id && p.output_index === added!.output_index)).toBe(true);
    const types = evs.map((e) => e.type);
    expect(types.indexOf('response.image_generation_call.partial_image')).toBeGreaterThan(types.indexOf('response.image_generation_call.generating'));
    expect(types.lastIndexOf('response.image_generation_call.partial_image')).toBeLessThan(types.indexOf('response.image_generation_call.completed'));
    const done = evs.find((e) => e.type === 'response.output_item.done' && e.item.type === 'image_generation_call');
    expect(done!.item).toMatchObject({ type: 'image_generation_call', status: 'completed', result: simToolImage(prompt).toString('base64') });
    const completed = evs.find((e) => e.type === 'response.completed')!;
    expect(completed.response.output.map((o: Json) => o.type)).toEqual(['image_generation_call', 'message']);
    expect(completed.response.usage.output_tokens).toBe(5 + SIM_IMAGE_TOKENS.auto + 2 * PARTIAL_IMAGE_TOKENS);
    expect(received(env, 'sim-resp').at(-1).tools).toEqual([{ type: 'image_generation', partial_images: 2 }]);
  });

  it('a Responses client with modalities: the upstream gets the tool instead; the image is an image_generation_call item', async () => {
    const res = await fetch(`${env.t.api}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` },
      body: JSON.stringify({ model: 'test/gpt-image-chat', input: prompt, modalities: ['image', 'text'] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed', result: simToolImage(prompt).toString('base64') });
    const sent = received(env, 'sim-resp').at(-1);
    expect(sent.modalities).toBeUndefined();
    expect(sent.tools).toEqual([{ type: 'image_generation' }]);
  });
});

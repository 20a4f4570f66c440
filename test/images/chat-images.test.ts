/**
 * Image output from chat completions (`modalities: ["image", "text"]`, docs/images.md) through a Gemini image model on
 * the simulator: `message.images` (plain) and `delta.images` (streamed), as the hosted router answers; usage and cost
 * with the image tokens as completion tokens; a model without image output just answers text.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { generation, received } from '../speech/util.js';
import { GEMINI_IMAGE_TEXT, IMAGE_OUTPUT_TOKENS, simPng } from '../../src/sim/images.js';
import { tokensOfChars } from '../../src/sim/text.js';

function catalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  return {
    providers: [{ slug: 'sim-gimg', name: 'Sim gimg', protocol: 'google', base_url: `${simUrl}/sim-gimg/v1beta`, no_auth: true, data_policy: zdr }],
    models: [{ id: 'test/gemini-image', name: 'Gemini image', context_length: 32768, input_modalities: ['text', 'image'], output_modalities: ['image', 'text'] }],
    endpoints: [{ model: 'test/gemini-image', provider: 'sim-gimg', upstream_model: 'gemini-2.5-flash-image', pricing: { prompt: '0.0000003', completion: '0.00003' }, supported_parameters: ['modalities', 'aspect_ratio', 'max_tokens', 'temperature'] }],
  };
}

// Non-standard fields of the hosted router's chat answer.
type WithImages = { images?: Array<{ type: string; image_url: { url: string }; index?: number }> };

describe('chat completions with image output', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog });
  let env: ClockedEnv;
  let client: OpenAI;
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
  });
  const prompt = 'draw a red panda';
  const png = () => `data:image/png;base64,${simPng(`${prompt}\u00000`).toString('base64')}`;
  const params = { model: 'test/gemini-image', messages: [{ role: 'user' as const, content: prompt }], modalities: ['image', 'text'] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;

  it('message.images holds the generated image; the upstream was asked for TEXT and IMAGE; cost exact', async () => {
    const res = await client.chat.completions.create(params);
    const msg = res.choices[0].message as typeof res.choices[0]['message'] & WithImages;
    expect(msg.content).toBe(GEMINI_IMAGE_TEXT);
    expect(msg.images).toEqual([{ type: 'image_url', image_url: { url: png() } }]);
    expect(received(env, 'sim-gimg').at(-1).generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    const out = IMAGE_OUTPUT_TOKENS + tokensOfChars(GEMINI_IMAGE_TEXT.length);
    expect(res.usage?.completion_tokens).toBe(out);
    const input = res.usage!.prompt_tokens;
    const cost = (input * 3_000 + out * 300_000) / 1e10; // $0.0000003 and $0.00003 per token, in 1e-10 units
    expect((res.usage as unknown as { cost: number }).cost).toBe(cost);
    expect((await generation(env, res.id)).total_cost).toBe(cost);
  });

  it('streamed: delta.images carries the image, then the usage', async () => {
    const stream = await client.chat.completions.create({ ...params, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    const images: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & WithImages) | undefined;
      if (d?.content) text += d.content;
      for (const img of d?.images ?? []) images.push(img.image_url.url);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(GEMINI_IMAGE_TEXT);
    expect(images).toEqual([png()]);
    expect(usage?.completion_tokens).toBe(IMAGE_OUTPUT_TOKENS + tokensOfChars(GEMINI_IMAGE_TEXT.length));
  });

  it('without modalities the image model answers text only', async () => {
    const res = await client.chat.completions.create({ model: 'test/gemini-image', messages: [{ role: 'user', content: prompt }] });
    expect((res.choices[0].message as WithImages).images).toBeUndefined();
    expect(received(env, 'sim-gimg').at(-1).generationConfig?.responseModalities).toBeUndefined();
  });

  it('the gateway:image_generation server tool: the image joins message.images, its cost the usage', async () => {
    env.sim.setKnobs('sim-a', { toolCall: true, toolName: 'image_generation' });
    const res = await fetch(`${env.t.api}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` },
      body: JSON.stringify({ model: 'test/alpha', messages: [{ role: 'user', content: 'draw me a cat' }], tools: [{ type: 'gateway:image_generation', parameters: { model: 'test/gemini-image', aspect_ratio: '1:1' } }], stop_server_tools_when: [{ type: 'step_count_is', step_count: 1 }] }),
    });
    const body = (await res.json()) as { choices: Array<{ message: WithImages & { content: string } }>; usage: { cost: number; server_tool_use_details: Record<string, number> } };
    expect(res.status).toBe(200);
    const images = body.choices[0].message.images ?? [];
    expect(images).toHaveLength(1);
    expect(images[0].image_url.url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(body.usage.server_tool_use_details).toMatchObject({ tool_calls_requested: 1, tool_calls_executed: 1 });
    // The Gemini image call went out with the tool's settings, and its cost is in the total.
    const sent = received(env, 'sim-gimg').at(-1);
    expect(sent.generationConfig).toMatchObject({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1' } });
    const turns = received(env, 'sim-a');
    expect(JSON.parse(turns.at(-1).messages.at(-1).content)).toMatchObject({ images_generated: 1 });
    expect(body.usage.cost).toBeGreaterThan(IMAGE_OUTPUT_TOKENS * 0.00003);
  });

  it('gateway:image_generation with an unknown image model: the tool error is for the model to read', async () => {
    env.sim.setKnobs('sim-a', { toolCall: true, toolName: 'image_generation' });
    const res = await fetch(`${env.t.api}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` },
      body: JSON.stringify({ model: 'test/alpha', messages: [{ role: 'user', content: 'draw' }], tools: [{ type: 'gateway:image_generation', parameters: { model: 'test/nope' } }], stop_server_tools_when: [{ type: 'step_count_is', step_count: 1 }] }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(received(env, 'sim-a').at(-1).messages.at(-1).content).error).toMatch(/^Image generation failed/);
  });
});

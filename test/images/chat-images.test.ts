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
    endpoints: [{ model: 'test/gemini-image', provider: 'sim-gimg', upstream_model: 'gemini-2.5-flash-image', pricing: { prompt: '0.0000003', completion: '0.00003' }, supported_parameters: ['modalities', 'max_tokens', 'temperature'] }],
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
});

/**
 * Image output on the Responses and Gemini APIs (docs/images.md), through a Gemini image model on the simulator:
 * - Responses (`openai` SDK): `modalities: ["image", "text"]` or OpenAI's hosted `image_generation` tool →
 *   `image_generation_call` output items (base64 `result`), streamed as `response.image_generation_call.*` events;
 *   `gateway:image_generation` on Responses brings its images back the same way;
 * - Gemini (`@google/genai`): `responseModalities: [TEXT, IMAGE]` → `inlineData` parts, streamed too;
 * - Messages: Anthropic's API has no image output block: the text answers, the image is not invented into it;
 * - bad input: a 400 naming the field.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { received } from '../speech/util.js';
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

const prompt = 'draw a red panda';
const b64 = () => simPng(`${prompt}\u00000`).toString('base64');
const OUT_TOKENS = IMAGE_OUTPUT_TOKENS + tokensOfChars(GEMINI_IMAGE_TEXT.length);

describe('image output on the Responses, Gemini and Messages APIs', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: catalog });
  let env: ClockedEnv;
  let client: OpenAI;
  let ai: GoogleGenAI;
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ apiKey: env.key, baseURL: env.t.api });
    ai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: `${env.t.url}/api` } });
  });

  describe('Responses API', () => {
    it('modalities [image, text]: an image_generation_call item with the base64 image; usage and cost', async () => {
      const res = await client.responses.create({ model: 'test/gemini-image', input: prompt, modalities: ['image', 'text'] } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect(res.output_text).toBe(GEMINI_IMAGE_TEXT);
      const images = res.output.filter((o) => o.type === 'image_generation_call');
      expect(images).toEqual([{ id: expect.stringMatching(/^ig_/), type: 'image_generation_call', status: 'completed', result: b64() }]);
      expect(received(env, 'sim-gimg').at(-1).generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
      expect(res.usage?.output_tokens).toBe(OUT_TOKENS);
      const cost = (res.usage!.input_tokens * 3_000 + OUT_TOKENS * 300_000) / 1e10;
      expect((res.usage as unknown as { cost: number }).cost).toBe(cost);
    });

    it("OpenAI's hosted image_generation tool asks the image model for images too", async () => {
      const res = await client.responses.create({ model: 'test/gemini-image', input: prompt, tools: [{ type: 'image_generation' }] });
      expect(res.output.find((o) => o.type === 'image_generation_call')).toMatchObject({ status: 'completed', result: b64() });
      expect(received(env, 'sim-gimg').at(-1).generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    });

    it('streamed: output_item.added, image_generation_call in_progress → generating → completed, output_item.done with the image', async () => {
      const stream = await client.responses.create({ model: 'test/gemini-image', input: prompt, modalities: ['image', 'text'], stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
      const types: string[] = [];
      let done: OpenAI.Responses.ResponseOutputItem | undefined;
      let final: OpenAI.Responses.Response | undefined;
      let text = '';
      for await (const ev of stream) {
        types.push(ev.type);
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.output_item.added' && ev.item.type === 'image_generation_call') expect(ev.item).toMatchObject({ status: 'in_progress', result: null });
        if (ev.type === 'response.output_item.done' && ev.item.type === 'image_generation_call') done = ev.item;
        if (ev.type === 'response.completed') final = ev.response;
      }
      expect(text).toBe(GEMINI_IMAGE_TEXT);
      const at = types.indexOf('response.image_generation_call.in_progress');
      expect(types.slice(at - 1, at + 4)).toEqual(['response.output_item.added', 'response.image_generation_call.in_progress', 'response.image_generation_call.generating', 'response.image_generation_call.completed', 'response.output_item.done']);
      expect(done).toMatchObject({ type: 'image_generation_call', status: 'completed', result: b64() });
      expect(final?.output.find((o) => o.type === 'image_generation_call')).toMatchObject({ result: b64() });
      expect(final?.usage?.output_tokens).toBe(OUT_TOKENS);
    });

    it('without modalities the image model answers text only', async () => {
      const res = await client.responses.create({ model: 'test/gemini-image', input: prompt });
      expect(res.output.some((o) => o.type === 'image_generation_call')).toBe(false);
      expect(received(env, 'sim-gimg').at(-1).generationConfig?.responseModalities).toBeUndefined();
    });

    it('gateway:image_generation on Responses: the image comes back as an image_generation_call item (plain and streamed)', async () => {
      const body = { model: 'test/alpha', input: 'draw me a cat', tools: [{ type: 'gateway:image_generation', parameters: { model: 'test/gemini-image' } }], stop_server_tools_when: [{ type: 'step_count_is', step_count: 1 }] };
      env.sim.setKnobs('sim-a', { toolCall: true, toolName: 'image_generation' });
      const res = await client.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      const item = res.output.find((o) => o.type === 'image_generation_call') as { result: string } | undefined;
      expect(item?.result).toMatch(/^iVBORw0KGgo/);
      const stream = await client.responses.create({ ...body, stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
      let streamed: string | null | undefined;
      for await (const ev of stream) if (ev.type === 'response.output_item.done' && ev.item.type === 'image_generation_call') streamed = ev.item.result;
      expect(streamed).toBe(item?.result);
    });

    it('bad modalities: 400 naming the field', async () => {
      const res = await fetch(`${env.t.api}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` },
        body: JSON.stringify({ model: 'test/gemini-image', input: prompt, modalities: ['video'] }),
      });
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toMatch(/modalities/);
    });
  });

  describe('Gemini API', () => {
    it('responseModalities [TEXT, IMAGE]: an inlineData part with the image', async () => {
      const r = await ai.models.generateContent({ model: 'test/gemini-image', contents: prompt, config: { responseModalities: ['TEXT', 'IMAGE'] } });
      const parts = r.candidates?.[0].content?.parts ?? [];
      expect(parts).toEqual([{ text: GEMINI_IMAGE_TEXT }, { inlineData: { mimeType: 'image/png', data: b64() } }]);
      expect(r.data).toBe(b64()); // the SDK's accessor of the inline data
      expect(r.usageMetadata?.candidatesTokenCount).toBe(OUT_TOKENS);
      expect(received(env, 'sim-gimg').at(-1).generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    });

    it('streamed: a chunk with the inlineData part', async () => {
      const stream = await ai.models.generateContentStream({ model: 'test/gemini-image', contents: prompt, config: { responseModalities: ['TEXT', 'IMAGE'] } });
      let text = '';
      const images: string[] = [];
      for await (const chunk of stream) {
        for (const p of chunk.candidates?.[0].content?.parts ?? []) {
          if (p.text) text += p.text;
          if (p.inlineData?.data) images.push(p.inlineData.data);
        }
      }
      expect(text).toBe(GEMINI_IMAGE_TEXT);
      expect(images).toEqual([b64()]);
    });

    it('an image model reached through another inbound protocol than its own still answers images (chat model id with a slash)', async () => {
      const r = await ai.models.generateContent({ model: 'test/gemini-image', contents: [{ role: 'user', parts: [{ text: prompt }] }], config: { responseModalities: ['IMAGE', 'TEXT'], temperature: 0.5 } });
      expect(r.candidates?.[0].content?.parts?.some((p) => p.inlineData?.data === b64())).toBe(true);
    });

    it('responseModalities AUDIO: 400 naming the field', async () => {
      const err = await ai.models.generateContent({ model: 'test/gemini-image', contents: prompt, config: { responseModalities: ['AUDIO'] } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).message).toMatch(/responseModalities\[0\]/);
    });
  });

  describe('Messages API', () => {
    it('has no image output block: the text answers and no image is invented into it', async () => {
      const anthropic = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
      const msg = await anthropic.messages.create({ model: 'test/gemini-image', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
      expect(msg.content.every((c) => c.type === 'text')).toBe(true);
    });
  });
});

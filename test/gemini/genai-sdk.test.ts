/**
 * The Gemini-native API with the official `@google/genai` SDK (pinned in devDependencies) pointed at the gateway
 * (`httpOptions.baseUrl = http://<gateway>/api`) in front of the simulator: generateContent, generateContentStream with
 * a function-call round trip (through a Gemini and an Anthropic upstream), countTokens, models.list/get, the three ways
 * to send the key, and errors as the SDK's ApiError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

let env: ChatEnv;
let ai: GoogleGenAI;

const GOOGLE_MODEL = { id: 'google/gemini-2.5-pro', name: 'Gemini 2.5 Pro (sim)', context_length: 1048576, input_modalities: ['text', 'image'] };
const PARAMS = ['temperature', 'top_p', 'top_k', 'max_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format', 'reasoning', 'include_reasoning'];

beforeAll(async () => {
  env = await startChatEnv('sqlite', {
    catalog: {
      models: [GOOGLE_MODEL],
      endpoints: [{ model: 'google/gemini-2.5-pro', provider: 'sim-google', upstream_model: 'gemini-2.5-pro', pricing: { prompt: '0.00000125', completion: '0.00001' }, supported_parameters: PARAMS }],
    },
  });
  ai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: `${env.t.url}/api` } });
});
afterAll(async () => env?.close());

const WEATHER = {
  name: 'get_weather',
  description: 'Get current temperature for a given location.',
  parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('@google/genai against the gateway', () => {
  it('generateContent: a bare Gemini id maps to the catalog model; usage, finish and the gateway generation id', async () => {
    const r = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Say hello to the Gemini skin.', config: { systemInstruction: 'Be brief.' } });
    expect(r.text).toMatch(/^Simulated reply to: Say hello/);
    expect(r.candidates?.[0].finishReason).toBe('STOP');
    expect(r.modelVersion).toBe('google/gemini-2.5-pro');
    expect(r.responseId).toMatch(/^gen-/);
    expect(r.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect(r.usageMetadata?.totalTokenCount).toBe((r.usageMetadata?.promptTokenCount ?? 0) + (r.usageMetadata?.candidatesTokenCount ?? 0));
    // The system instruction reached the upstream in its own field.
    expect((env.sim.stats('sim-google').lastBody as Record<string, any>).systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
  });

  it('generateContent through another protocol: an OpenAI-chat upstream (model id with its slash)', async () => {
    const r = await ai.models.generateContent({ model: 'test/alpha', contents: 'Hello there' });
    expect(r.text).toMatch(/^Simulated reply to: Hello there/);
    expect(r.modelVersion).toBe('test/alpha');
  });

  for (const model of ['google/gemini-2.5-pro', 'test/claude', 'test/responses']) {
    it(`generateContentStream with a function call round trip (${model})`, async () => {
      const config = { tools: [{ functionDeclarations: [WEATHER] }] };
      const history: Content[] = [{ role: 'user', parts: [{ text: 'What is the weather in Paris?' }] }];
      const first = await ai.models.generateContentStream({ model, contents: history, config });
      const parts: Array<Record<string, any>> = [];
      let finish: string | undefined;
      for await (const chunk of first) {
        parts.push(...((chunk.candidates?.[0]?.content?.parts ?? []) as Array<Record<string, any>>));
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
      }
      const call = parts.find((p) => p.functionCall)?.functionCall;
      expect(call).toMatchObject({ name: 'get_weather', args: { location: expect.any(String) } });
      expect(call.id).toMatch(/\S/);
      expect(finish).toBe('STOP');

      history.push({ role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: '{"temperature_c": 14}' } } }] });
      const second = await ai.models.generateContentStream({ model, contents: history, config });
      let text = '';
      let usage: Record<string, any> | undefined;
      for await (const chunk of second) {
        text += chunk.text ?? '';
        usage = (chunk.usageMetadata as Record<string, any> | undefined) ?? usage;
      }
      expect(text).toMatch(/^Simulated reply using tool result:/);
      expect(text).toContain('temperature_c');
      expect(usage?.promptTokenCount).toBeGreaterThan(0);
      expect(usage?.candidatesTokenCount).toBeGreaterThan(0);
    });
  }

  it('countTokens: exact counts from the Gemini upstream', async () => {
    const r = await ai.models.countTokens({ model: 'gemini-2.5-pro', contents: 'How many tokens is this sentence?' });
    expect(r.totalTokens).toBeGreaterThan(0);
    const direct = await fetch(`${env.sim.url}/sim-google/v1beta/models/gemini-2.5-pro:countTokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'How many tokens is this sentence?' }] }] }),
    }).then((x) => x.json() as Promise<{ totalTokens: number }>);
    expect(r.totalTokens).toBe(direct.totalTokens);
  });

  it('models.list and models.get', async () => {
    const pager = await ai.models.list();
    const names: string[] = [];
    for await (const m of pager) names.push(m.name ?? '');
    expect(names).toContain('models/google/gemini-2.5-pro');
    expect(names).toContain('models/test/alpha');
    const m = await ai.models.get({ model: 'gemini-2.5-pro' });
    expect(m).toMatchObject({ name: 'models/google/gemini-2.5-pro', displayName: 'Gemini 2.5 Pro (sim)', inputTokenLimit: 1048576 });
    expect(m.supportedActions ?? (m as Record<string, any>).supportedGenerationMethods).toEqual(expect.arrayContaining(['generateContent', 'countTokens']));
  });

  it('errors are the SDK’s ApiError with the HTTP status (unknown model, bad key)', async () => {
    const e1 = await ai.models.generateContent({ model: 'no-such-model', contents: 'x' }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ApiError);
    expect((e1 as ApiError).status).toBe(404);
    expect(JSON.parse((e1 as ApiError).message)).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    const bad = new GoogleGenAI({ apiKey: 'sk-gw-v1-nope', httpOptions: { baseUrl: `${env.t.url}/api` } });
    const e2 = await bad.models.generateContent({ model: 'gemini-2.5-pro', contents: 'x' }).catch((e: unknown) => e);
    expect((e2 as ApiError).status).toBe(401);
    expect(JSON.parse((e2 as ApiError).message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });
});

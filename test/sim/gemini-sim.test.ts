/**
 * Provider simulator, Google Gemini API (`/v1beta/models/<model>:generateContent`, `:streamGenerateContent?alt=sse`):
 * wire format and knobs through real HTTP, and the Gemini upstream adapter against it end to end. Local only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IrRequest, IrStreamEvent } from '../../src/core/ir.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import { googleAdapter } from '../../src/providers/google/index.js';
import type { UpstreamContext } from '../../src/core/adapters.js';
import { createSimulator, type Simulator } from '../../src/sim/server.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.resetKnobs();
  sim.resetStats();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const GEN = '/v1beta/models/gemini-sim:generateContent';
const STREAM = '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse';
const USER = [{ role: 'user', parts: [{ text: 'Hello there, what is the weather like in Paris today?' }] }];
const WEATHER = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parametersJsonSchema: {
        type: 'object',
        properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
        required: ['city', 'days', 'unit'],
        additionalProperties: false,
      },
    },
  ],
};

const gemBody = (extra: Record<string, unknown> = {}) => ({ contents: USER, ...extra });

function post(path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(sim.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

const json = (r: Response): Promise<Any> => r.json();

async function readAll(res: Response): Promise<{ text: string; error?: unknown }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += dec.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** `data:` payloads of an SSE text, parsed. */
const sseJson = (text: string): Any[] =>
  text
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)));

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timeout waiting for condition');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const partsOf = (r: Any): Any[] => r.candidates[0].content.parts;

describe('generateContent', () => {
  it('answers with deterministic text, usage, model version and response id', async () => {
    const res = await post(GEN, gemBody());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const r = await json(res);
    expect(r.candidates).toHaveLength(1);
    expect(r.candidates[0]).toMatchObject({ content: { role: 'model' }, finishReason: 'STOP', index: 0 });
    const text = partsOf(r)[0].text as string;
    expect(text.startsWith('Simulated reply to: Hello there, what is the weather')).toBe(true);
    expect(text.endsWith('.')).toBe(true);
    expect(r.usageMetadata).toMatchObject({ candidatesTokenCount: 12, totalTokenCount: r.usageMetadata.promptTokenCount + 12 });
    expect(r.usageMetadata.thoughtsTokenCount).toBeUndefined();
    expect(r.usageMetadata.cachedContentTokenCount).toBeUndefined();
    expect(r.modelVersion).toBe('gemini-sim');
    expect(typeof r.responseId).toBe('string');
    const again = await json(await post(GEN, gemBody()));
    expect(partsOf(again)[0].text).toBe(text);
    expect(again.responseId).not.toBe(r.responseId);
  });

  it('counts prompt tokens from contents, system instruction, media parts and tools', async () => {
    const base = (await json(await post(GEN, gemBody()))).usageMetadata.promptTokenCount;
    expect(base).toBe(Math.ceil(USER[0].parts[0].text.length / 4) + 3);
    const withSystem = await json(await post(GEN, gemBody({ systemInstruction: { parts: [{ text: 'Be brief.' }] } })));
    expect(withSystem.usageMetadata.promptTokenCount).toBe(base + Math.ceil(9 / 4) + 3);
    const withImage = await json(
      await post(GEN, { contents: [{ role: 'user', parts: [USER[0].parts[0], { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }] }),
    );
    expect(withImage.usageMetadata.promptTokenCount).toBe(base + 258);
  });

  it('serves providers under a prefix, with stats and the request log', async () => {
    const res = await post('/gem/v1beta/models/gemini-2.5-flash:generateContent', gemBody(), { 'x-goog-api-key': 'k' });
    expect(res.status).toBe(200);
    expect((await json(res)).modelVersion).toBe('gemini-2.5-flash');
    expect(sim.stats('gem')).toMatchObject({ requests: 1, failures: 0 });
    expect(sim.requests.at(-1)).toMatchObject({ provider: 'gem', path: '/v1beta/models/gemini-2.5-flash:generateContent', status: 200 });
  });

  it('lists models', async () => {
    sim.setKnobs('default', { models: ['gemini-a', 'gemini-b'] });
    const r = await json(await fetch(`${sim.url}/v1beta/models`));
    expect(r.models.map((m: Any) => m.name)).toEqual(['models/gemini-a', 'models/gemini-b']);
    expect((await post('/v1beta/models/gemini-c:generateContent', gemBody())).status).toBe(404);
  });

  it('validates like the API: missing contents, empty parts, bad role, unknown model', async () => {
    const missing = await post(GEN, {});
    expect(missing.status).toBe(400);
    expect((await json(missing)).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect((await post(GEN, { contents: [{ role: 'user', parts: [] }] })).status).toBe(400);
    expect((await post(GEN, { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })).status).toBe(400);
    expect((await post(GEN, 'not json')).status).toBe(400);
    sim.setKnobs('default', { models: ['gemini-2.5-flash'] });
    const nf = await post(GEN, gemBody());
    expect(nf.status).toBe(404);
    expect((await json(nf)).error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: expect.stringContaining('models/gemini-sim is not found') });
  });

  it('accepts single-object contents and parts, as the API does', async () => {
    const r = await json(await post(GEN, { contents: { role: 'user', parts: { text: 'Which theaters show Barbie?' } } }));
    expect(partsOf(r)[0].text).toContain('Which theaters show Barbie?');
  });
});

describe('function calling', () => {
  it('calls a declared function with schema-conforming args', async () => {
    const r = await json(await post(GEN, gemBody({ tools: [WEATHER] })));
    expect(partsOf(r)).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'example', days: 1, unit: 'celsius' } } }]);
    expect(r.candidates[0].finishReason).toBe('STOP');
    expect(r.usageMetadata.candidatesTokenCount).toBeGreaterThan(1);
  });

  it('honours functionCallingConfig: NONE, ANY with allowedFunctionNames; OpenAPI upper-case schemas', async () => {
    const tools = [
      {
        functionDeclarations: [
          WEATHER.functionDeclarations[0],
          { name: 'find_theaters', parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } }, required: ['location'] } },
        ],
      },
    ];
    const none = await json(await post(GEN, gemBody({ tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } })));
    expect(partsOf(none)[0].text).toBeDefined();
    const any = await json(await post(GEN, gemBody({ tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['find_theaters'] } } })));
    expect(partsOf(any)).toEqual([{ functionCall: { name: 'find_theaters', args: { location: 'example' } } }]);
  });

  it('answers in text after a function response (AUTO), and the toolCall knob forces or forbids', async () => {
    const contents = [
      ...USER,
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny' } } }] },
    ];
    const after = await json(await post(GEN, { contents, tools: [WEATHER] }));
    expect(partsOf(after)[0].text).toMatch(/^Simulated reply using tool result: \{"content":"sunny"\}/);
    const forced = await json(await post(GEN, { contents, tools: [WEATHER] }, { 'x-sim-tool-call': 'true' }));
    expect(partsOf(forced)[0].functionCall.name).toBe('get_weather');
    const forbidden = await json(await post(GEN, gemBody({ tools: [WEATHER] }), { 'x-sim-tool-call': 'false' }));
    expect(partsOf(forbidden)[0].text).toBeDefined();
  });
});

describe('thinking, usage knobs, JSON output, limits', () => {
  it('includeThoughts gives a thought part first; thoughtsTokenCount from the reasoningTokens knob; a signature on the answer', async () => {
    const r = await json(
      await post(GEN, gemBody({ generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } }), { 'x-sim-reasoning-tokens': '50' }),
    );
    const parts = partsOf(r);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatchObject({ thought: true });
    expect(parts[0].text.startsWith('Considering the request:')).toBe(true);
    expect(parts[1].text.startsWith('Simulated reply to:')).toBe(true);
    expect(typeof parts[1].thoughtSignature).toBe('string');
    expect(r.usageMetadata).toMatchObject({ candidatesTokenCount: 12, thoughtsTokenCount: 50 });
    expect(r.usageMetadata.totalTokenCount).toBe(r.usageMetadata.promptTokenCount + 62);
  });

  it('thinkingBudget 0 means no thoughts; without includeThoughts thoughts are counted but not shown', async () => {
    const off = await json(await post(GEN, gemBody({ generationConfig: { thinkingConfig: { thinkingBudget: 0, includeThoughts: true } } }), { 'x-sim-reasoning-tokens': '50' }));
    expect(partsOf(off)).toHaveLength(1);
    expect(off.usageMetadata.thoughtsTokenCount).toBeUndefined();
    const hidden = await json(await post(GEN, gemBody(), { 'x-sim-reasoning-tokens': '30' }));
    expect(partsOf(hidden)).toHaveLength(1);
    expect(partsOf(hidden)[0].thoughtSignature).toBeDefined();
    expect(hidden.usageMetadata.thoughtsTokenCount).toBe(30);
  });

  it('cachedTokens → cachedContentTokenCount (capped at the prompt)', async () => {
    const r = await json(await post(GEN, gemBody(), { 'x-sim-cached-tokens': '5' }));
    expect(r.usageMetadata.cachedContentTokenCount).toBe(5);
    const capped = await json(await post(GEN, gemBody(), { 'x-sim-cached-tokens': '100000' }));
    expect(capped.usageMetadata.cachedContentTokenCount).toBe(capped.usageMetadata.promptTokenCount);
  });

  it('JSON output: responseJsonSchema / responseSchema samples, plain JSON mode', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } }, required: ['name', 'n'] };
    const a = await json(await post(GEN, gemBody({ generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } })));
    expect(JSON.parse(partsOf(a)[0].text)).toEqual({ name: 'example', n: 1 });
    const b = await json(
      await post(GEN, gemBody({ generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'ARRAY', items: { type: 'STRING' } } } })),
    );
    expect(JSON.parse(partsOf(b)[0].text)).toEqual(['example']);
    const c = await json(await post(GEN, gemBody({ generationConfig: { responseMimeType: 'application/json' } })));
    expect(JSON.parse(partsOf(c)[0].text).reply).toMatch(/^Simulated reply to:/);
  });

  it('maxOutputTokens cuts with MAX_TOKENS (thoughts count), stopSequences cut the text', async () => {
    const cut = await json(await post(GEN, gemBody({ generationConfig: { maxOutputTokens: 5 } })));
    expect(cut.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(cut.usageMetadata.candidatesTokenCount).toBe(5);
    const withThoughts = await json(await post(GEN, gemBody({ generationConfig: { maxOutputTokens: 5 } }), { 'x-sim-reasoning-tokens': '3' }));
    expect(withThoughts.usageMetadata.candidatesTokenCount).toBe(2);
    const stopped = await json(await post(GEN, gemBody({ generationConfig: { stopSequences: ['weather'] } })));
    expect(partsOf(stopped)[0].text).toBe('Simulated reply to: Hello there, what is the ');
    const fixed = await json(await post(GEN, gemBody(), { 'x-sim-content': 'Fixed answer.' }));
    expect(partsOf(fixed)[0].text).toBe('Fixed answer.');
  });

  it('safety blocks via x-sim-gemini-block: prompt (promptFeedback) and response (finishReason SAFETY)', async () => {
    const p = await json(await post(GEN, gemBody(), { 'x-sim-gemini-block': 'prompt' }));
    expect(p.candidates).toBeUndefined();
    expect(p.promptFeedback.blockReason).toBe('SAFETY');
    const r = await json(await post(GEN, gemBody(), { 'x-sim-gemini-block': 'response' }));
    expect(r.candidates[0]).toMatchObject({ finishReason: 'SAFETY' });
    expect(r.candidates[0].content).toBeUndefined();
    const s = await post(STREAM, gemBody(), { 'x-sim-gemini-block': 'prompt' });
    expect(sseJson(await s.text())).toEqual([expect.objectContaining({ promptFeedback: expect.objectContaining({ blockReason: 'SAFETY' }) })]);
  });
});

describe('streamGenerateContent', () => {
  it('alt=sse streams one GenerateContentResponse per piece, then a final chunk with finishReason and usage', async () => {
    const res = await post(STREAM, gemBody());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const chunks = sseJson(await res.text());
    expect(chunks).toHaveLength(13);
    const text = chunks.map((c) => partsOf(c).map((p: Any) => p.text ?? '').join('')).join('');
    const whole = await json(await post(GEN, gemBody()));
    expect(text).toBe(partsOf(whole)[0].text);
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const last = chunks.at(-1);
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ candidatesTokenCount: 12, promptTokenCount: whole.usageMetadata.promptTokenCount });
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
  });

  it('streams thoughts piece by piece, a whole function call, the signature on the call', async () => {
    const res = await post(STREAM, gemBody({ tools: [WEATHER], generationConfig: { thinkingConfig: { includeThoughts: true } } }));
    const chunks = sseJson(await res.text());
    const thoughts = chunks.filter((c) => partsOf(c)[0].thought === true);
    expect(thoughts).toHaveLength(6);
    const call = chunks.find((c) => partsOf(c)[0].functionCall);
    expect(partsOf(call)[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: expect.any(String) });
    expect(chunks.at(-1).usageMetadata.thoughtsTokenCount).toBe(6);
  });

  it('without alt=sse answers one JSON array of chunks', async () => {
    const res = await post('/v1beta/models/gemini-sim:streamGenerateContent', gemBody());
    expect(res.headers.get('content-type')).toContain('application/json');
    const arr = await json(res);
    expect(Array.isArray(arr)).toBe(true);
    expect(arr).toHaveLength(13);
    expect(arr.at(-1).candidates[0].finishReason).toBe('STOP');
  });
});

describe('errors and auth', () => {
  it('errorStatus renders Google envelopes; 429 carries RetryInfo, no Retry-After unless the knob is set', async () => {
    const r = await post(GEN, gemBody(), { 'x-sim-error-status': '429' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeNull();
    const body = await json(r);
    expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(body.error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' });
    const r7 = await post(GEN, gemBody(), { 'x-sim-error-status': '429', 'x-sim-retry-after': '7' });
    expect(r7.headers.get('retry-after')).toBe('7');
    expect((await json(r7)).error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' });
    const o = await json(await post(GEN, gemBody(), { 'x-sim-error-status': '503' }));
    expect(o.error).toEqual({ code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' });
    expect(sim.stats('default').failures).toBe(3);
  });

  it('failTimes: only the first requests fail', async () => {
    sim.setKnobs('flaky', { failTimes: 2, errorStatus: 500 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await post('/flaky' + GEN, gemBody())).status);
    expect(statuses).toEqual([500, 500, 200]);
  });

  it('checks x-goog-api-key like Google when the simulator has a key', async () => {
    const keyed = await createSimulator({ apiKey: 'secret' });
    try {
      const none = await fetch(keyed.url + GEN, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(gemBody()) });
      expect(none.status).toBe(403);
      expect((await json(none)).error.status).toBe('PERMISSION_DENIED');
      const wrong = await fetch(keyed.url + GEN, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'nope' }, body: JSON.stringify(gemBody()) });
      expect(wrong.status).toBe(400);
      const err = await json(wrong);
      expect(err.error.details[0]).toMatchObject({ reason: 'API_KEY_INVALID' });
      const ok = await fetch(keyed.url + GEN, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'secret' }, body: JSON.stringify(gemBody()) });
      expect(ok.status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  it('errorAfterChunks: an in-stream error object after N content chunks (non-streaming: 500)', async () => {
    const res = await post(STREAM, gemBody(), { 'x-sim-error-after-chunks': '3' });
    const chunks = sseJson((await readAll(res)).text);
    expect(chunks).toHaveLength(4);
    expect(chunks.at(-1).error).toMatchObject({ code: 500, status: 'INTERNAL' });
    expect((await post(GEN, gemBody(), { 'x-sim-error-after-chunks': '3' })).status).toBe(500);
  });

  it('disconnectAfterChunks cuts the stream before the final chunk', async () => {
    const res = await post(STREAM, gemBody(), { 'x-sim-disconnect-after-chunks': '12' });
    const { text, error } = await readAll(res);
    expect(error).toBeDefined();
    const chunks = sseJson(text);
    expect(chunks).toHaveLength(12);
    expect(chunks.every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
  });

  it('hang never answers; the client abort is counted', async () => {
    sim.setKnobs('slow', { hang: true });
    await expect(post('/slow' + GEN, gemBody(), {}, AbortSignal.timeout(100))).rejects.toThrow();
    await until(() => sim.stats('slow').aborted === 1);
    expect(sim.stats('slow')).toMatchObject({ requests: 1, aborted: 1, inFlight: 0 });
  });
});

describe('the Gemini upstream adapter against the simulator', () => {
  const ctx = (extra: Partial<UpstreamContext['provider']> = {}): UpstreamContext => ({
    provider: { slug: 'gem', name: 'Gemini', protocol: 'google', baseUrl: `${sim.url}/gem/v1beta`, dataPolicy: { training: false, retainsPrompts: true, zdr: false }, ...extra },
    endpoint: {
      model: 'google/gemini-2.5-flash',
      provider: 'gem',
      tag: 'gem',
      upstreamModel: 'gemini-2.5-flash',
      pricing: null,
      context_length: 1048576,
      max_prompt_tokens: null,
      max_completion_tokens: null,
      quantization: 'unknown',
      supported_parameters: [],
      is_moderated: false,
      supports_implicit_caching: true,
    },
    apiKey: 'k',
  });
  const ir = (extra: Partial<IrRequest> = {}): IrRequest => ({
    model: 'gemini-2.5-flash',
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] }],
    stream: false,
    ...extra,
  });

  async function call(req: IrRequest, c = ctx()) {
    const h = googleAdapter.buildRequest(req, c);
    const res = await fetch(h.url, { method: 'POST', headers: h.headers, body: h.body });
    const text = await res.text();
    if (res.status >= 300) throw googleAdapter.parseError(res.status, text, Object.fromEntries(res.headers));
    return text;
  }

  async function callStream(req: IrRequest, headers: Record<string, string> = {}): Promise<IrStreamEvent[]> {
    const h = googleAdapter.buildRequest({ ...req, stream: true }, ctx({ headers }));
    const res = await fetch(h.url, { method: 'POST', headers: h.headers, body: h.body });
    const d = googleAdapter.createStreamDecoder();
    const out: IrStreamEvent[] = [];
    const { text } = await readAll(res);
    // Feed in small pieces, as a socket would.
    for (let i = 0; i < text.length; i += 17) out.push(...d.push(text.slice(i, i + 17)));
    out.push(...d.end());
    return out;
  }

  it('a tool round trip with thinking: ids, signatures and usage survive both directions', async () => {
    const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }];
    const first = googleAdapter.parseResponse(await call(ir({ tools, reasoning: { effort: 'low' } })));
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.content.map((p) => p.type)).toEqual(['reasoning', 'reasoning', 'tool_call']);
    const tc = first.content[2];
    if (tc.type !== 'tool_call') throw new Error('expected a tool call');
    expect(tc).toMatchObject({ name: 'get_weather', arguments: '{"city":"example"}' });
    expect(tc.id).toMatch(/^call_simGem\w+_0$/);
    // 6 thought pieces; the call counts its argument pieces + 1 ('{"city":"example"}' = 5 pieces of 4 chars).
    expect(first.usage).toMatchObject({ reasoning: 6, output: 6 + 6 });

    const second = ir({
      tools,
      reasoning: { effort: 'low' },
      messages: [...ir().messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_call_id: tc.id, content: 'sunny, 21C' }] }],
    });
    const r2 = googleAdapter.parseResponse(await call(second));
    expect(r2.finish_reason).toBe('stop');
    const text = r2.content.find((p) => p.type === 'text');
    expect(text && text.type === 'text' && text.text).toMatch(/^Simulated reply using tool result: \{"content":"sunny, 21C"\}/);
    // What the simulator received: the call with its signature, then the response by name.
    const sent = sim.stats('gem').lastBody as Any;
    const sig = (first.content[1] as { signature: string }).signature;
    expect(sent.contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'example' } }, thoughtSignature: sig }] });
    expect(sent.contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny, 21C' } } }] });
    expect(sim.stats('gem').lastHeaders?.['x-goog-api-key']).toBe('k');
  });

  it('streaming and non-streaming agree on text and usage', async () => {
    const req = ir({ reasoning: { max_tokens: 100 } });
    const whole = googleAdapter.parseResponse(await call(req));
    const events = await callStream(req);
    expect(events[0]).toMatchObject({ type: 'start', model: 'gemini-2.5-flash' });
    const text = events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('');
    const reasoning = events.filter((e) => e.type === 'reasoning_delta').map((e) => (e as { text: string }).text).join('');
    expect(whole.content.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).toBe(text);
    expect(whole.content[0]).toEqual({ type: 'reasoning', text: reasoning });
    expect(events.filter((e) => e.type === 'reasoning_signature')).toHaveLength(1);
    expect(events.slice(-2)).toEqual([
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'STOP' },
      { type: 'usage', usage: whole.usage },
    ]);
  });

  it('JSON schema output, cached tokens and a blocked prompt through the adapter', async () => {
    const r = googleAdapter.parseResponse(
      await call(ir({ response_format: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } }), ctx({ headers: { 'x-sim-cached-tokens': '4' } })),
    );
    expect(r.content).toEqual([{ type: 'text', text: '{"ok":true}' }]);
    expect(r.usage).toMatchObject({ cache_read: 4 });
    const blocked = googleAdapter.parseResponse(await call(ir(), ctx({ headers: { 'x-sim-gemini-block': 'prompt' } })));
    expect(blocked).toMatchObject({ content: [], finish_reason: 'content_filter', native_finish_reason: 'SAFETY' });
    const events = await callStream(ir(), { 'x-sim-gemini-block': 'response' });
    expect(events.at(-2)).toEqual({ type: 'finish', finish_reason: 'content_filter', native_finish_reason: 'SAFETY' });
  });

  it('errors map to the gateway statuses', async () => {
    const statusOf = async (h: Record<string, string>) => {
      try {
        await call(ir(), ctx({ headers: h }));
      } catch (e) {
        return e as UpstreamError;
      }
      throw new Error('expected an error');
    };
    expect(await statusOf({ 'x-sim-error-status': '429', 'x-sim-retry-after': '3' })).toMatchObject({ status: 429, retryAfter: 3 });
    expect(await statusOf({ 'x-sim-error-status': '429' })).toMatchObject({ status: 429, retryAfter: 1 });
    expect(await statusOf({ 'x-sim-error-status': '503' })).toMatchObject({ status: 529, type: 'provider_overloaded' });
    expect(await statusOf({ 'x-sim-error-status': '500' })).toMatchObject({ status: 502 });
    expect(await statusOf({ 'x-sim-error-status': '504' })).toMatchObject({ status: 524 });
    expect(await statusOf({ 'x-sim-error-status': '400' })).toMatchObject({ status: 400 });
  });

  it('stream faults: in-stream error event, cut stream, broken chunk', async () => {
    const errored = await callStream(ir(), { 'x-sim-error-after-chunks': '2' });
    expect(errored.filter((e) => e.type === 'text_delta')).toHaveLength(2);
    expect(errored.at(-1)).toMatchObject({ type: 'error', status: 502 });
    expect(errored.some((e) => e.type === 'finish')).toBe(false);
    await expect(callStream(ir(), { 'x-sim-disconnect-after-chunks': '5' })).rejects.toThrow(UpstreamError);
    await expect(callStream(ir(), { 'x-sim-malformed': 'json' })).rejects.toMatchObject({ status: 502 });
    await expect(callStream(ir(), { 'x-sim-malformed': 'empty' })).rejects.toMatchObject({ status: 502 });
    const broken = await call(ir(), ctx({ headers: { 'x-sim-malformed': 'json' } }));
    expect(() => googleAdapter.parseResponse(broken)).toThrow(UpstreamError);
  });
});

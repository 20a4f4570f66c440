/**
 * Provider simulator, OpenAI Chat Completions: wire format through the
 * official SDK, and behaviour knobs through raw HTTP. Local only.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
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

const client = (provider = '', extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ baseURL: `${sim.url}${provider ? '/' + provider : ''}/v1`, apiKey: 'x', maxRetries: 0, ...extra });

const USER = [{ role: 'user' as const, content: 'Hello there, what is the weather like in Paris today?' }];

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        detailed: { type: 'boolean' },
      },
      required: ['city', 'days', 'unit', 'detailed'],
      additionalProperties: false,
    },
  },
};

function post(path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(sim.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (r: Response): Promise<any> => r.json();

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-sim', messages: USER, ...extra });

/** Read a response body as text; `error` is set when the connection broke. */
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

/** `data:` payloads of an SSE text. */
const sseData = (text: string) =>
  text
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => b.slice(6));

const contentChunks = (text: string) =>
  sseData(text).filter((d) => d !== '[DONE]' && !d.startsWith('{"error"') && JSON.parse(d).choices?.[0]?.delta?.content);

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}

describe('OpenAI wire format (SDK)', () => {
  it('answers a non-streaming completion with the full shape', async () => {
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER });
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('gpt-sim');
    expect(typeof r.created).toBe('number');
    expect(r.system_fingerprint).toMatch(/^fp_/);
    expect(r.service_tier).toBe('default');
    expect(r.choices).toHaveLength(1);
    const c = r.choices[0];
    expect(c.index).toBe(0);
    expect(c.finish_reason).toBe('stop');
    expect(c.logprobs).toBeNull();
    expect(c.message.role).toBe('assistant');
    expect(c.message.refusal).toBeNull();
    expect(c.message.tool_calls).toBeUndefined();
    expect(c.message.content).toMatch(/^Simulated reply to: Hello there, what is the weather/);
    // 1 message of 53 chars: ceil(53/4) + 3
    expect(r.usage).toEqual({
      prompt_tokens: 17,
      completion_tokens: 12,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    expect(r._request_id).toMatch(/^req_/);
  });

  it('is deterministic and depends on the request', async () => {
    const a = await client().chat.completions.create({ model: 'm', messages: USER });
    const b = await client('sim-b').chat.completions.create({ model: 'm', messages: USER });
    const c = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Something else entirely' }] });
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
    expect(a.id).not.toBe(b.id);
    expect(c.choices[0].message.content).not.toBe(a.choices[0].message.content);
  });

  it('streams chunks whose content equals the non-streamed content, then a usage chunk', async () => {
    const full = await client().chat.completions.create({ model: 'gpt-sim', messages: USER });
    const stream = await client().chat.completions.create({
      model: 'gpt-sim',
      messages: USER,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const ch of stream) chunks.push(ch);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    const withChoices = chunks.filter((c) => c.choices.length > 0);
    const text = withChoices.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(text).toBe(full.choices[0].message.content);
    const contentCount = withChoices.filter((c) => c.choices[0].delta.content).length;
    expect(contentCount).toBe(12);
    expect(withChoices.at(-1)!.choices[0].finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(full.usage);
    expect(withChoices.every((c) => c.usage === null)).toBe(true);
  });

  it('omits usage from chunks without include_usage and ends with [DONE]', async () => {
    const res = await post('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { text } = await readAll(res);
    const data = sseData(text);
    expect(data.at(-1)).toBe('[DONE]');
    for (const d of data.slice(0, -1)) expect(JSON.parse(d)).not.toHaveProperty('usage');
  });

  it('calls the first tool with schema-conforming arguments (non-streaming)', async () => {
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, tools: [WEATHER_TOOL] });
    const c = r.choices[0];
    expect(c.finish_reason).toBe('tool_calls');
    expect(c.message.content).toBeNull();
    const call = c.message.tool_calls![0];
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    if (call.type !== 'function') throw new Error('function call expected');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example', days: 1, unit: 'celsius', detailed: true });
  });

  it('streams tool-call arguments in several pieces that reassemble to valid JSON', async () => {
    const stream = await client().chat.completions.create({
      model: 'gpt-sim',
      messages: USER,
      tools: [WEATHER_TOOL],
      stream: true,
      stream_options: { include_usage: true },
    });
    let id = '';
    let name = '';
    let args = '';
    let pieces = 0;
    let finish: string | null = null;
    for await (const ch of stream) {
      const ch0 = ch.choices[0];
      if (!ch0) continue;
      for (const tc of ch0.delta.tool_calls ?? []) {
        expect(tc.index).toBe(0);
        if (tc.id) id = tc.id;
        if (tc.function?.name) name = tc.function.name;
        if (tc.function?.arguments) {
          args += tc.function.arguments;
          pieces++;
        }
      }
      finish = ch0.finish_reason ?? finish;
    }
    expect(id).toMatch(/^call_/);
    expect(name).toBe('get_weather');
    expect(pieces).toBeGreaterThan(3);
    expect(JSON.parse(args)).toEqual({ city: 'example', days: 1, unit: 'celsius', detailed: true });
    expect(finish).toBe('tool_calls');
  });

  it('answers with text mentioning the tool result after a tool message, and honours tool_choice none', async () => {
    const r = await client().chat.completions.create({
      model: 'gpt-sim',
      tools: [WEATHER_TOOL],
      messages: [
        ...USER,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny 24C in Paris' },
      ],
    });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.content).toContain('Sunny 24C in Paris');
    const none = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, tools: [WEATHER_TOOL], tool_choice: 'none' });
    expect(none.choices[0].message.tool_calls).toBeUndefined();
    expect(none.choices[0].finish_reason).toBe('stop');
  });

  it('produces JSON matching a json_schema response_format, and JSON for json_object', async () => {
    const r = await client().chat.completions.create({
      model: 'gpt-sim',
      messages: USER,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              age: { type: 'integer' },
              score: { type: 'number' },
              tags: { type: 'array', items: { type: 'string' } },
              address: { $ref: '#/$defs/address' },
              nickname: { type: ['string', 'null'] },
            },
            required: ['name', 'age', 'score', 'tags', 'address', 'nickname'],
            $defs: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          },
        },
      },
    });
    const v = JSON.parse(r.choices[0].message.content!);
    expect(typeof v.name).toBe('string');
    expect(Number.isInteger(v.age)).toBe(true);
    expect(typeof v.score).toBe('number');
    expect(Array.isArray(v.tags) && typeof v.tags[0] === 'string').toBe(true);
    expect(typeof v.address.city).toBe('string');
    expect(typeof v.nickname).toBe('string');
    const o = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, response_format: { type: 'json_object' } });
    expect(typeof JSON.parse(o.choices[0].message.content!)).toBe('object');
  });

  it('truncates to max_completion_tokens / max_tokens with finish_reason length', async () => {
    const full = await client().chat.completions.create({ model: 'gpt-sim', messages: USER });
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, max_completion_tokens: 5 });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(5);
    expect(full.choices[0].message.content!.startsWith(r.choices[0].message.content!)).toBe(true);
    const s = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, max_tokens: 3, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const ch of s) {
      text += ch.choices[0]?.delta.content ?? '';
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('length');
    expect(text).toBe('Simulated reply to:');
  });

  it('honours stop sequences', async () => {
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER, stop: ['weather'] });
    expect(r.choices[0].message.content).toBe('Simulated reply to: Hello there, what is the ');
    expect(r.choices[0].finish_reason).toBe('stop');
  });

  it('reports cached and reasoning tokens and echoes the model knob', async () => {
    sim.setKnobs('default', { cachedTokens: 8, reasoningTokens: 20, model: 'gpt-sim-2025-01-01' });
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER });
    expect(r.model).toBe('gpt-sim-2025-01-01');
    expect(r.usage!.prompt_tokens_details!.cached_tokens).toBe(8);
    expect(r.usage!.completion_tokens_details!.reasoning_tokens).toBe(20);
    expect(r.usage!.completion_tokens).toBe(32);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + 32);
  });

  it('uses fixed content and completionTokens knobs', async () => {
    sim.setKnobs('default', { content: 'Fixed answer, always.' });
    const r = await client().chat.completions.create({ model: 'gpt-sim', messages: USER });
    expect(r.choices[0].message.content).toBe('Fixed answer, always.');
    expect(r.usage!.completion_tokens).toBe(3);
    sim.resetKnobs();
    const n = await client().chat.completions.create({ model: 'gpt-sim', messages: USER }, { headers: { 'x-sim-completion-tokens': '40' } });
    expect(n.usage!.completion_tokens).toBe(40);
  });

  it('lists models', async () => {
    const list = await client().models.list();
    expect(list.data.map((m) => m.id)).toEqual(['sim-model']);
    sim.setKnobs('sim-a', { models: ['a-1', 'a-2'] });
    const a = await client('sim-a').models.list();
    expect(a.data.map((m) => m.id)).toEqual(['a-1', 'a-2']);
    await expect(client('sim-a').chat.completions.create({ model: 'zzz', messages: USER })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
  });
});

describe('errors', () => {
  const cases: Array<[number, string | null, string]> = [
    [400, 'context_length_exceeded', 'invalid_request_error'],
    [401, 'invalid_api_key', 'invalid_request_error'],
    [404, 'model_not_found', 'invalid_request_error'],
    [429, 'rate_limit_exceeded', 'requests'],
    [500, null, 'server_error'],
    [503, 'service_unavailable', 'server_error'],
    [529, 'overloaded', 'server_error'],
  ];
  for (const [status, code, type] of cases) {
    it(`errorStatus ${status} → APIError with the OpenAI envelope`, async () => {
      sim.setKnobs('default', { errorStatus: status });
      const err = await client()
        .chat.completions.create({ model: 'gpt-sim', messages: USER })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      const e = err as APIError;
      expect(e.status).toBe(status);
      expect(e.code).toBe(code);
      expect(e.type).toBe(type);
      if (status === 429) expect(e.headers?.get('retry-after')).toBe('1');
      expect(sim.stats('default').failures).toBe(1);
    });
  }

  it('sets retry-after from the retryAfter knob', async () => {
    const res = await post('/v1/chat/completions', chatBody(), { 'x-sim-error-status': '429', 'x-sim-retry-after': '7' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    const body = await json(res);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  });

  it('requires the API key when configured', async () => {
    const locked = await createSimulator({ apiKey: 'secret' });
    try {
      const bad = new OpenAI({ baseURL: locked.url + '/v1', apiKey: 'wrong', maxRetries: 0 });
      await expect(bad.chat.completions.create({ model: 'm', messages: USER })).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
      const good = new OpenAI({ baseURL: locked.url + '/v1', apiKey: 'secret', maxRetries: 0 });
      expect((await good.chat.completions.create({ model: 'm', messages: USER })).choices).toHaveLength(1);
    } finally {
      await locked.close();
    }
  });

  it('validates the request like OpenAI', async () => {
    const expectInvalid = async (body: unknown, param: string | null) => {
      const res = await post('/v1/chat/completions', body);
      expect(res.status).toBe(400);
      const j = await json(res);
      expect(j.error.type).toBe('invalid_request_error');
      expect(j.error.param).toBe(param);
    };
    await expectInvalid('{not json', null);
    await expectInvalid({ messages: USER }, 'model');
    await expectInvalid({ model: 'm' }, 'messages');
    await expectInvalid({ model: 'm', messages: [] }, 'messages');
    await expectInvalid({ model: 'm', messages: 'hi' }, 'messages');
    await expectInvalid({ model: 'm', messages: [{ content: 'x' }] }, 'messages[0].role');
    await expectInvalid({ model: 'm', messages: USER, max_tokens: 0 }, 'max_tokens');
    const err = await client()
      .chat.completions.create({ model: 'm', messages: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('answers unknown routes with 404 and bad knob headers with 400', async () => {
    const r = await post('/v1/nothing', {});
    expect(r.status).toBe(404);
    expect((await json(r)).error.message).toContain('Invalid URL');
    const h = await post('/v1/chat/completions', chatBody(), { 'x-sim-latency-ms': 'soon' });
    expect(h.status).toBe(400);
    expect((await json(h)).error.message).toContain('latencyMs');
  });
});

describe('providers, control API and stats', () => {
  it('keeps knobs per provider and lets request headers win', async () => {
    sim.setKnobs('sim-a', { errorStatus: 503 });
    expect((await post('/sim-a/v1/chat/completions', chatBody())).status).toBe(503);
    expect((await post('/sim-b/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await post('/sim-b/v1/chat/completions', chatBody(), { 'x-sim-error-status': '500' })).status).toBe(500);
    expect((await post('/sim-a/v1/chat/completions', chatBody(), { 'x-sim-error-status': '429' })).status).toBe(429);
    expect(sim.stats('sim-a').requests).toBe(2);
    expect(sim.stats('sim-b').requests).toBe(2);
    expect(sim.stats('default').requests).toBe(1);
    expect(sim.stats('never').requests).toBe(0);
  });

  it('serves the control API', async () => {
    const set = await post('/_sim/knobs/sim-c', { latencyMs: 1, content: 'hi from c' });
    expect(set.status).toBe(200);
    expect((await json(set)).knobs).toEqual({ latencyMs: 1, content: 'hi from c' });
    expect(sim.getKnobs('sim-c')).toEqual({ latencyMs: 1, content: 'hi from c' });
    // null removes a knob
    await post('/_sim/knobs/sim-c', { latencyMs: null });
    expect(sim.getKnobs('sim-c')).toEqual({ content: 'hi from c' });
    const r = await client('sim-c').chat.completions.create({ model: 'm', messages: USER });
    expect(r.choices[0].message.content).toBe('hi from c');

    const bad = await post('/_sim/knobs/sim-c', { latencyMS: 5 });
    expect(bad.status).toBe(400);

    const stats = await json(await fetch(sim.url + '/_sim/stats'));
    expect(stats['sim-c'].requests).toBe(1);
    expect(stats['sim-c'].lastBody).toEqual({ model: 'm', messages: USER });
    expect(stats['sim-c'].lastHeaders.authorization).toBe('Bearer x');

    expect((await fetch(sim.url + '/_sim/knobs', { method: 'DELETE' })).status).toBe(200);
    expect(sim.getKnobs('sim-c')).toEqual({});
  });

  it('logs requests and records last body and headers', async () => {
    await post('/sim-a/v1/chat/completions', chatBody({ temperature: 0.5 }), { 'x-trace': 'abc' });
    await post('/sim-a/v1/chat/completions', chatBody(), { 'x-sim-error-status': '500' });
    expect(sim.requests).toHaveLength(2);
    expect(sim.requests[0]).toMatchObject({ provider: 'sim-a', method: 'POST', path: '/v1/chat/completions', status: 200 });
    expect(sim.requests[0].headers['x-trace']).toBe('abc');
    expect(sim.requests[1].status).toBe(500);
    expect(sim.stats('sim-a').lastBody).toEqual(chatBody());
  });

  it('failTimes: only the first N requests fail', async () => {
    sim.setKnobs('flaky', { failTimes: 2, errorStatus: 503 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('/flaky/v1/chat/completions', chatBody())).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    // setting failTimes again restarts the count; without errorStatus the fault is a 500
    sim.setKnobs('flaky', { failTimes: 1, errorStatus: null });
    expect((await post('/flaky/v1/chat/completions', chatBody())).status).toBe(500);
    expect((await post('/flaky/v1/chat/completions', chatBody())).status).toBe(200);
    expect(sim.stats('flaky').failures).toBe(3);
  });
});

describe('stream faults', () => {
  it('errorAfterChunks sends an in-stream error event and ends without [DONE]', async () => {
    const res = await post('/v1/chat/completions', chatBody({ stream: true }), { 'x-sim-error-after-chunks': '3' });
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res);
    expect(error).toBeUndefined();
    const data = sseData(text);
    expect(contentChunks(text)).toHaveLength(3);
    expect(JSON.parse(data.at(-1)!).error).toMatchObject({ type: 'server_error' });
    expect(text).not.toContain('[DONE]');

    // the SDK surfaces it as an APIError during iteration
    sim.setKnobs('default', { errorAfterChunks: 2 });
    const stream = await client().chat.completions.create({ model: 'm', messages: USER, stream: true });
    let got = '';
    const err = await (async () => {
      for await (const ch of stream) got += ch.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(got).toBe('Simulated reply');
  });

  it('errorAfterChunks on a non-streaming request is a 500', async () => {
    const res = await post('/v1/chat/completions', chatBody(), { 'x-sim-error-after-chunks': '3' });
    expect(res.status).toBe(500);
  });

  it('disconnectAfterChunks destroys the socket mid-stream', async () => {
    const res = await post('/v1/chat/completions', chatBody({ stream: true }), { 'x-sim-disconnect-after-chunks': '4' });
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res);
    expect(error).toBeDefined();
    expect(contentChunks(text)).toHaveLength(4);
    expect(text).not.toContain('[DONE]');
    await until(() => sim.stats('default').inFlight === 0);
    expect(sim.stats('default').aborted).toBe(0); // not a client abort
    // non-streaming: connection closed without a response
    await expect(post('/v1/chat/completions', chatBody(), { 'x-sim-disconnect-after-chunks': '1' })).rejects.toThrow();
  });

  it('malformed json: broken body / broken chunk', async () => {
    sim.setKnobs('default', { malformed: 'json' });
    const res = await post('/v1/chat/completions', chatBody());
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body.length).toBeGreaterThan(0);
    expect(() => JSON.parse(body)).toThrow();
    await expect(client().chat.completions.create({ model: 'm', messages: USER })).rejects.toThrow();

    const s = await post('/v1/chat/completions', chatBody({ stream: true }));
    const { text } = await readAll(s);
    const data = sseData(text);
    const broken = data.filter((d) => {
      if (d === '[DONE]') return false;
      try {
        JSON.parse(d);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken).toHaveLength(1);
  });

  it('malformed empty: 200 with an empty body', async () => {
    const res = await post('/v1/chat/completions', chatBody(), { 'x-sim-malformed': 'empty' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    const s = await post('/v1/chat/completions', chatBody({ stream: true }), { 'x-sim-malformed': 'empty' });
    expect(s.status).toBe(200);
    expect(await s.text()).toBe('');
  });

  it('hang never answers; a client abort is counted and cleaned up', async () => {
    sim.setKnobs('slow', { hang: true });
    const t0 = Date.now();
    await expect(post('/slow/v1/chat/completions', chatBody(), {}, AbortSignal.timeout(150))).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await until(() => sim.stats('slow').aborted === 1);
    expect(sim.stats('slow')).toMatchObject({ requests: 1, aborted: 1, inFlight: 0 });
    expect(sim.requests.at(-1)!.aborted).toBe(true);
  });

  it('a client abort during a paced stream is counted', async () => {
    sim.setKnobs('slow', { chunkGapMs: 50 });
    const ac = new AbortController();
    const res = await post('/slow/v1/chat/completions', chatBody({ stream: true }), {}, ac.signal);
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await until(() => sim.stats('slow').aborted === 1);
    expect(sim.stats('slow')).toMatchObject({ aborted: 1, inFlight: 0 });
  });
});

describe('timing knobs', () => {
  it('latencyMs delays the response headers', async () => {
    const t0 = performance.now();
    const res = await post('/v1/chat/completions', chatBody({ stream: true }), { 'x-sim-latency-ms': '120' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
    await res.text();
  });

  it('ttftMs delays the first streamed chunk, not the headers', async () => {
    sim.setKnobs('default', { ttftMs: 250 });
    const t0 = performance.now();
    const res = await post('/v1/chat/completions', chatBody({ stream: true }));
    const headersAt = performance.now() - t0;
    const reader = res.body!.getReader();
    await reader.read();
    const firstAt = performance.now() - t0;
    expect(headersAt).toBeLessThan(200);
    expect(firstAt).toBeGreaterThanOrEqual(240);
    while (!(await reader.read()).done);
  });

  it('tokensPerSecond and chunkGapMs pace content chunks', async () => {
    const timeStream = async (headers: Record<string, string>) => {
      const t0 = performance.now();
      const res = await post('/v1/chat/completions', chatBody({ stream: true }), headers);
      await res.text();
      return performance.now() - t0;
    };
    // 12 chunks: 11 gaps
    expect(await timeStream({ 'x-sim-tokens-per-second': '100' })).toBeGreaterThanOrEqual(100);
    expect(await timeStream({ 'x-sim-chunk-gap-ms': '15' })).toBeGreaterThanOrEqual(150);
    // non-streaming responses take the generation time too
    const t0 = performance.now();
    await json(await post('/v1/chat/completions', chatBody(), { 'x-sim-chunk-gap-ms': '10', 'x-sim-ttft-ms': '50' }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(150);
  });

  it('burstChunks writes content events in bursts, each one write with chunkGapMs after it', async () => {
    const t0 = performance.now();
    const res = await post('/v1/chat/completions', chatBody({ stream: true }), { 'x-sim-chunk-gap-ms': '25', 'x-sim-burst-chunks': '4' });
    const reader = res.body!.getReader();
    const perPiece: number[] = [];
    const dec = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const text = dec.decode(r.value);
      const content = text.split('\n\n').filter((e) => /"delta":\{"content":"[^"]/.test(e)).length;
      if (content > 0) perPiece.push(content);
    }
    // 12 chunks in 3 writes (the role chunk with the first, the finish, usage and [DONE] with the last), 2 pauses.
    expect(perPiece).toEqual([4, 4, 4]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
  });

  it('close() ends open connections at once', async () => {
    const s = await createSimulator();
    const pending = fetch(s.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-sim-hang': 'true' },
      body: JSON.stringify(chatBody()),
    }).catch((e: unknown) => e);
    await until(() => s.stats('default').inFlight === 1);
    const t0 = performance.now();
    await s.close();
    expect(performance.now() - t0).toBeLessThan(500);
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('CLI', () => {
  it('starts on SIM_PORT and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/sim/main.ts'], {
      env: { ...process.env, SIM_PORT: '0', SIM_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /http:\/\/\S+/.exec(out);
          if (m) resolve(m[0]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const r = await fetch(url + '/v1/models');
      expect(r.status).toBe(200);
      const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

/**
 * Provider simulator, Anthropic Messages: wire format through the official SDK (`@anthropic-ai/sdk`), the raw event
 * sequence and the behaviour knobs through raw HTTP. Local only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
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

const client = (provider = '', extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
  new Anthropic({ baseURL: `${sim.url}${provider ? '/' + provider : ''}`, apiKey: 'sk-ant-x', maxRetries: 0, ...extra });

const USER = [{ role: 'user' as const, content: 'Hello there, what is the weather like in Paris today?' }];
const base = { model: 'claude-sim', max_tokens: 1024, messages: USER };

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'days', 'unit'],
  },
};

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(sim.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (r: Response): Promise<any> => r.json();

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

/** `[event, data]` pairs of an SSE text. */
const events = (text: string): Array<[string, string]> =>
  text
    .split('\n\n')
    .filter((b) => b.startsWith('event: '))
    .map((b) => {
      const [e, d] = b.split('\n');
      return [e.slice(7), d.slice(6)];
    });

async function apiError(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof APIError) return e;
    throw e;
  }
  throw new Error('expected an APIError');
}

describe('Anthropic wire format (SDK)', () => {
  it('answers messages.create with the full Message shape', async () => {
    const m = await client().messages.create(base);
    expect(m.id).toMatch(/^msg_sim/);
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.model).toBe('claude-sim');
    expect(m.stop_reason).toBe('end_turn');
    expect(m.stop_sequence).toBeNull();
    expect(m.content).toHaveLength(1);
    expect(m.content[0].type).toBe('text');
    expect(m.content[0].type === 'text' && m.content[0].text).toMatch(/^Simulated reply to: Hello there, what is the weather/);
    // 1 message of 53 chars: ceil(53/4) + 3
    expect(m.usage).toEqual({ input_tokens: 17, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12, service_tier: 'standard' });
    expect(m._request_id).toMatch(/^req_sim/);
  });

  it('streams the documented event sequence; messages.stream().finalMessage() equals the non-streamed message', async () => {
    const plain = await client().messages.create(base);
    const res = await post('/v1/messages', { ...base, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const evs = events(await res.text());
    const names = evs.map(([e]) => e);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(3, 15)).toEqual(Array(12).fill('content_block_delta'));
    expect(names.slice(15)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    for (const [e, d] of evs) expect(JSON.parse(d).type).toBe(e);
    expect(JSON.parse(evs[16][1])).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } });

    const stream = client().messages.stream(base);
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const final = await stream.finalMessage();
    expect(final.content).toEqual(plain.content);
    expect(final.usage.output_tokens).toBe(12);
    expect(final.usage.input_tokens).toBe(17);
    expect(final.stop_reason).toBe('end_turn');
    expect(deltas).toHaveLength(12);
  });

  it('uses a tool: tool_use block with schema-conforming input, streamed as input_json_delta pieces', async () => {
    const m = await client().messages.create({ ...base, tools: [WEATHER_TOOL] });
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content.map((c) => c.type)).toEqual(['text', 'tool_use']);
    const tu = m.content[1];
    expect(tu.type === 'tool_use' && tu.name).toBe('get_weather');
    expect(tu.type === 'tool_use' && tu.id).toMatch(/^toolu_sim/);
    expect(tu.type === 'tool_use' && tu.input).toEqual({ city: 'example', days: 1, unit: 'celsius' });

    const res = await post('/v1/messages', { ...base, tools: [WEATHER_TOOL], stream: true });
    const pieces = events(await res.text())
      .map(([, d]) => JSON.parse(d))
      .filter((d) => d.type === 'content_block_delta' && d.delta.type === 'input_json_delta')
      .map((d) => d.delta.partial_json);
    expect(pieces[0]).toBe('');
    expect(pieces.length).toBeGreaterThan(3);
    expect(JSON.parse(pieces.join(''))).toEqual({ city: 'example', days: 1, unit: 'celsius' });

    const final = await client().messages.stream({ ...base, tools: [WEATHER_TOOL] }).finalMessage();
    expect(final.content[1]).toEqual({ ...m.content[1], id: expect.stringMatching(/^toolu_sim/) });
  });

  it('forced tool_choice skips the lead text; tool_choice none and a tool_result answer with text', async () => {
    const forced = await client().messages.create({ ...base, tools: [WEATHER_TOOL], tool_choice: { type: 'tool', name: 'get_weather' } });
    expect(forced.content.map((c) => c.type)).toEqual(['tool_use']);
    const none = await client().messages.create({ ...base, tools: [WEATHER_TOOL], tool_choice: { type: 'none' } });
    expect(none.content.map((c) => c.type)).toEqual(['text']);
    const after = await client().messages.create({
      ...base,
      tools: [WEATHER_TOOL],
      messages: [
        ...USER,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny and 21 degrees' }] },
      ],
    });
    expect(after.stop_reason).toBe('end_turn');
    expect(after.content[0].type === 'text' && after.content[0].text).toMatch(/^Simulated reply using tool result: Sunny and 21 degrees/);
  });

  it('thinking: a thinking block with a signature, streamed as thinking_delta then signature_delta', async () => {
    const req = { ...base, max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 } };
    const m = await client().messages.create(req);
    expect(m.content.map((c) => c.type)).toEqual(['thinking', 'text']);
    const th = m.content[0];
    expect(th.type === 'thinking' && th.thinking).toMatch(/^Let me think about: Hello there/);
    expect(th.type === 'thinking' && th.signature).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
    expect(m.usage.output_tokens).toBe(8 + 12);

    const res = await post('/v1/messages', { ...req, stream: true });
    const deltas = events(await res.text())
      .map(([, d]) => JSON.parse(d))
      .filter((d) => d.type === 'content_block_delta')
      .map((d) => `${d.index}:${d.delta.type}`);
    expect(deltas.slice(0, 9)).toEqual([...Array(8).fill('0:thinking_delta'), '0:signature_delta']);
    expect(deltas.slice(9)).toEqual(Array(12).fill('1:text_delta'));

    const final = await client().messages.stream(req).finalMessage();
    expect(final.content[0].type).toBe('thinking');
    expect(final.content[0].type === 'thinking' && final.content[0].signature).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
    expect(final.content[1]).toEqual(m.content[1]);
  });

  it('thinking validation: temperature, budget >= max_tokens and forced tools are rejected like Anthropic does', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    const t = await apiError(client().messages.create({ ...base, max_tokens: 2048, thinking, temperature: 0.5 } as Parameters<Anthropic['messages']['create']>[0] & { stream?: false }));
    expect(t.status).toBe(400);
    expect(t.type).toBe('invalid_request_error');
    const b = await apiError(client().messages.create({ ...base, max_tokens: 1024, thinking }));
    expect(b.status).toBe(400);
    expect(b.message).toMatch(/max_tokens/);
    const f = await apiError(client().messages.create({ ...base, max_tokens: 2048, thinking, tools: [WEATHER_TOOL], tool_choice: { type: 'any' } }));
    expect(f.status).toBe(400);
  });

  it('stop sequences, max_tokens truncation and structured output', async () => {
    const stopped = await client().messages.create({ ...base, stop_sequences: ['weather'] });
    expect(stopped.stop_reason).toBe('stop_sequence');
    expect(stopped.stop_sequence).toBe('weather');
    expect(stopped.content[0].type === 'text' && stopped.content[0].text).toBe('Simulated reply to: Hello there, what is the ');
    const short = await client().messages.create({ ...base, max_tokens: 3 });
    expect(short.stop_reason).toBe('max_tokens');
    expect(short.usage.output_tokens).toBe(3);
    const structured = await client().messages.create({
      ...base,
      output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } } },
    });
    expect(structured.content[0].type === 'text' && JSON.parse(structured.content[0].text)).toEqual({ answer: 'example' });
  });

  it('reports cache reads and writes; input_tokens excludes them', async () => {
    sim.setKnobs('default', { cachedTokens: 10, cacheWriteTokens: 4 });
    const m = await client().messages.create(base);
    expect(m.usage).toMatchObject({ input_tokens: 3, cache_read_input_tokens: 10, cache_creation_input_tokens: 4 });
    const final = await client().messages.stream(base).finalMessage();
    expect(final.usage).toMatchObject({ input_tokens: 3, cache_read_input_tokens: 10, cache_creation_input_tokens: 4, output_tokens: 12 });
  });

  it('counts tokens', async () => {
    const r = await client().messages.countTokens({ model: 'claude-sim', messages: USER });
    expect(r.input_tokens).toBe(17);
  });

  it('serves provider-prefixed paths with their own knobs and stats', async () => {
    sim.setKnobs('acme', { content: 'Fixed acme answer.', model: 'claude-acme' });
    const m = await client('acme').messages.create(base);
    expect(m.model).toBe('claude-acme');
    expect(m.content[0].type === 'text' && m.content[0].text).toBe('Fixed acme answer.');
    expect(sim.stats('acme').requests).toBe(1);
    expect(sim.stats('acme').lastHeaders?.['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('errors', () => {
  const cases: Array<[number, string]> = [
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [503, 'api_error'],
    [529, 'overloaded_error'],
  ];
  for (const [status, type] of cases) {
    it(`errorStatus ${status} → APIError ${status} with the Anthropic envelope (${type})`, async () => {
      sim.setKnobs('default', { errorStatus: status });
      const e = await apiError(client().messages.create(base));
      expect(e.status).toBe(status);
      expect(e.type).toBe(type);
      expect(e.error).toMatchObject({ type: 'error', error: { type }, request_id: expect.stringMatching(/^req_sim/) });
      if (status === 429) expect(e.headers?.get('retry-after')).toBe('1');
    });
  }

  it('requires the API key (x-api-key) when configured', async () => {
    const secured = await createSimulator({ apiKey: 'sk-ant-secret' });
    try {
      const c = (apiKey: string) => new Anthropic({ baseURL: secured.url, apiKey, maxRetries: 0 });
      const bad = await apiError(c('sk-ant-wrong').messages.create(base));
      expect(bad.status).toBe(401);
      expect(bad.type).toBe('authentication_error');
      expect(bad.error).toMatchObject({ error: { message: 'invalid x-api-key' } });
      const ok = await c('sk-ant-secret').messages.create(base);
      expect(ok.type).toBe('message');
      const none = await fetch(secured.url + '/v1/messages', { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: JSON.stringify(base) });
      expect(none.status).toBe(401);
      expect((await json(none)).error.message).toBe('x-api-key header is required');
    } finally {
      await secured.close();
    }
  });

  it('validates requests like Anthropic', async () => {
    const missingVersion = await fetch(sim.url + '/v1/messages', { method: 'POST', body: JSON.stringify(base) });
    expect(missingVersion.status).toBe(400);
    expect((await json(missingVersion)).error).toEqual({ type: 'invalid_request_error', message: 'anthropic-version: header is required' });
    const noMax = await apiError(client().messages.create({ model: 'claude-sim', messages: USER } as never));
    expect(noMax.status).toBe(400);
    expect(noMax.message).toMatch(/max_tokens: Field required/);
    const orphan = await apiError(
      client().messages.create({ ...base, messages: [...USER, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nope', content: 'x' }] }] }),
    );
    expect(orphan.status).toBe(400);
    expect(orphan.message).toMatch(/tool_use_id/);
    sim.setKnobs('default', { models: ['claude-a'] });
    const unknown = await apiError(client().messages.create(base));
    expect(unknown.status).toBe(404);
    expect(unknown.type).toBe('not_found_error');
    const badJson = await post('/v1/messages', '{"model":');
    expect(badJson.status).toBe(400);
    expect((await json(badJson)).type).toBe('error');
  });

  it('failTimes: only the first N requests fail', async () => {
    sim.setKnobs('default', { failTimes: 1, errorStatus: 529 });
    expect((await apiError(client().messages.create(base))).status).toBe(529);
    expect((await client().messages.create(base)).type).toBe('message');
  });
});

describe('stream faults', () => {
  it('errorAfterChunks sends the documented error event and ends without message_stop; the SDK throws', async () => {
    sim.setKnobs('default', { errorAfterChunks: 3 });
    const res = await post('/v1/messages', { ...base, stream: true });
    const evs = events((await readAll(res)).text);
    expect(evs.filter(([e, d]) => e === 'content_block_delta' && JSON.parse(d).delta.type === 'text_delta')).toHaveLength(3);
    expect(evs.at(-1)).toEqual(['error', '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}']);
    expect(evs.some(([e]) => e === 'message_stop')).toBe(false);
    const e = await apiError(client().messages.stream(base).finalMessage());
    expect(e.type).toBe('overloaded_error');
  });

  it('errorAfterChunks on a non-streaming request is a 500 api_error', async () => {
    sim.setKnobs('default', { errorAfterChunks: 2 });
    const e = await apiError(client().messages.create(base));
    expect(e.status).toBe(500);
    expect(e.type).toBe('api_error');
  });

  it('disconnectAfterChunks cuts the stream', async () => {
    sim.setKnobs('default', { disconnectAfterChunks: 2 });
    const res = await post('/v1/messages', { ...base, stream: true });
    const { text, error } = await readAll(res);
    expect(error).toBeDefined();
    expect(events(text).some(([e]) => e === 'message_stop')).toBe(false);
    await expect(client().messages.stream(base).finalMessage()).rejects.toThrow();
  });

  it('malformed json breaks the first content event; hang never answers', async () => {
    sim.setKnobs('default', { malformed: 'json' });
    const res = await post('/v1/messages', { ...base, stream: true });
    const broken = events(await res.text()).find(([e]) => e === 'content_block_delta');
    expect(() => JSON.parse(broken![1])).toThrow();
    sim.setKnobs('default', { malformed: null, hang: true });
    const ac = new AbortController();
    const pending = fetch(sim.url + '/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(base),
      signal: ac.signal,
    }).then(
      () => 'answered',
      () => 'aborted',
    );
    const raced = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still waiting'), 150))]);
    expect(raced).toBe('still waiting');
    ac.abort();
    expect(await pending).toBe('aborted');
    const end = Date.now() + 2000;
    while (sim.stats('default').aborted === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(sim.stats('default').aborted).toBe(1);
    sim.resetKnobs();
  });
});

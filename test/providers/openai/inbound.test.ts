/**
 * The chat completions API as an inbound adapter: client body → IR, IR → chat completion body, IR events → SSE
 * chunks; the encoder's output and the non-stream body are read back by the official `openai` SDK through a local
 * HTTP server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { IrResponse, IrStreamEvent } from '../../../src/core/ir.js';
import { chatInbound } from '../../../src/inbound/chat.js';
import { buildChatBody, ChatStreamDecoder } from '../../../src/providers/openai/ir-upstream.js';
import type { AnswerMeta } from '../../../src/core/adapters.js';
import { fixture, serveOnce } from './util.js';

const META: AnswerMeta = {
  id: 'gen-1700000000-abc',
  model: 'openai/gpt-4.1',
  provider: 'OpenAI',
  created: 1700000000,
  cost: 0.000123,
  cost_details: { upstream_inference_prompt_cost: 0.0001, upstream_inference_completions_cost: 0.000023, upstream_inference_cost: 0.000123 },
};

const sseData = (text: string) =>
  text
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => b.slice(6));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const chunksOf = (text: string): any[] => sseData(text).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));

describe('chat body → IR', () => {
  it('docs request examples (developer message, image URL, function tool, max_tokens)', () => {
    const ir = chatInbound.toIr(JSON.parse(fixture('openai', 'chat-request-docs.json')));
    expect(ir).toEqual({
      system: [{ type: 'text', text: 'You are a helpful assistant.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello!' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this image?' },
            { type: 'image', url: 'https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'What is the weather like in Boston today?' }] },
      ],
      tools: [
        {
          name: 'get_current_weather',
          description: 'Get the current weather in a given location',
          parameters: {
            type: 'object',
            properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
            required: ['location'],
          },
        },
      ],
      tool_choice: { type: 'auto' },
      max_tokens: 300,
      stream: false,
    });
  });

  it('every message kind and parameter', () => {
    const ir = chatInbound.toIr({
      model: 'x',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        { role: 'user', name: 'bob', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'high' } }, { type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] },
        {
          role: 'assistant',
          content: 'Calling.',
          reasoning: 'ignored when details are present',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Plan.', signature: 'sig1', format: 'anthropic-claude-v1', index: 0 },
            { type: 'reasoning.encrypted', data: 'ENC', index: 1 },
            { type: 'reasoning.summary', summary: 'Sum.', index: 2 },
          ],
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'one' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
        { role: 'developer', content: 'Late developer note.' },
        { role: 'user', content: 'Next?' },
        { role: 'assistant', content: null, refusal: 'No.', reasoning: 'Plain reasoning.' },
      ],
      tools: [
        { type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object' }, strict: true }, cache_control: { type: 'ephemeral' } },
        { type: 'openrouter:web_search' },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_completion_tokens: 100,
      max_tokens: 999,
      temperature: 0.5,
      top_p: null,
      top_k: 20,
      frequency_penalty: 0.5,
      presence_penalty: 0,
      seed: 3,
      stop: 'STOP',
      reasoning: { effort: 'low', summary: 'concise', exclude: false, max_tokens: 2000 },
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true, description: 'd' } },
      user: 'u1',
      stream: true,
    });
    expect(ir).toEqual({
      system: [
        { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'Late developer note.' },
      ],
      messages: [
        { role: 'user', name: 'bob', content: [{ type: 'text', text: 'Look' }, { type: 'image', data: '/9j/4AAQ', media_type: 'image/jpeg', detail: 'high' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Plan.', signature: 'sig1' },
            { type: 'redacted_reasoning', data: 'ENC' },
            { type: 'reasoning', text: 'Sum.', summary: true },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
            { type: 'tool_call', id: 'call_2', name: 'g', arguments: '{}' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_call_id: 'call_1', content: 'one' },
            { type: 'tool_result', tool_call_id: 'call_2', content: 'two', cache_control: { type: 'ephemeral' } },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Next?' }] },
        { role: 'assistant', content: [{ type: 'reasoning', text: 'Plain reasoning.' }, { type: 'refusal', text: 'No.' }] },
      ],
      tools: [{ name: 'f', description: 'F', parameters: { type: 'object' }, strict: true, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'tool', name: 'f' },
      parallel_tool_calls: false,
      max_tokens: 100,
      temperature: 0.5,
      top_k: 20,
      frequency_penalty: 0.5,
      presence_penalty: 0,
      seed: 3,
      stop: ['STOP'],
      response_format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true, description: 'd' },
      reasoning: { effort: 'low', max_tokens: 2000, summary: 'concise', exclude: false },
      user: 'u1',
      stream: true,
    });
  });

  it('reasoning_effort, tool_choice strings, stop arrays, response_format text/json_object', () => {
    const m = [{ role: 'user', content: 'x' }];
    expect(chatInbound.toIr({ messages: m, reasoning_effort: 'minimal' }).reasoning).toEqual({ effort: 'minimal' });
    expect(chatInbound.toIr({ messages: m, reasoning: { enabled: false } }).reasoning).toEqual({ enabled: false });
    expect(chatInbound.toIr({ messages: m }).reasoning).toBeUndefined();
    for (const c of ['none', 'auto', 'required'] as const) expect(chatInbound.toIr({ messages: m, tool_choice: c }).tool_choice).toEqual({ type: c });
    expect(chatInbound.toIr({ messages: m, stop: ['a', 'b'] }).stop).toEqual(['a', 'b']);
    expect(chatInbound.toIr({ messages: m, max_tokens: 9 }).max_tokens).toBe(9);
    expect(chatInbound.toIr({ messages: m, response_format: { type: 'json_object' } }).response_format).toEqual({ type: 'json_object' });
    expect(chatInbound.toIr({ messages: m, response_format: { type: 'text' } }).response_format).toEqual({ type: 'text' });
    expect(chatInbound.toIr({ messages: m, response_format: { type: 'grammar', grammar: 'x' } }).response_format).toBeUndefined();
  });

  it('round trip chat body → IR → upstream chat body keeps the conversation', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'result' },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'Thanks' },
    ];
    const body = { messages, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto', max_completion_tokens: 50, stop: ['x'] };
    const out = buildChatBody({ model: 'm', ...chatInbound.toIr(body) });
    expect(out).toEqual({ model: 'm', ...body });
  });
});

const RESPONSE: IrResponse = {
  id: 'chatcmpl-up',
  model: 'gpt-4.1-2025-04-14',
  content: [
    { type: 'reasoning', text: 'Let me think.', signature: 'sig==' },
    { type: 'redacted_reasoning', data: 'ENC==' },
    { type: 'text', text: 'Paris is sunny.' },
    { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ],
  finish_reason: 'tool_calls',
  native_finish_reason: 'tool_use',
  usage: { input: 100, output: 40, cache_read: 60, cache_write: 10, reasoning: 25 },
  service_tier: 'default',
  system_fingerprint: 'fp_1',
};

describe('IR → chat completion', () => {
  it('full body shape', () => {
    expect(chatInbound.fromIr(RESPONSE, { ...META, gateway_metadata: { attempts: [] } })).toEqual({
      id: 'gen-1700000000-abc',
      object: 'chat.completion',
      created: 1700000000,
      model: 'openai/gpt-4.1',
      provider: 'OpenAI',
      system_fingerprint: 'fp_1',
      service_tier: 'default',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Paris is sunny.',
            refusal: null,
            reasoning: 'Let me think.',
            reasoning_details: [
              { type: 'reasoning.text', text: 'Let me think.', signature: 'sig==', index: 0 },
              { type: 'reasoning.encrypted', data: 'ENC==', index: 1 },
            ],
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
          native_finish_reason: 'tool_use',
        },
      ],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 25 },
        cost: 0.000123,
        is_byok: false,
        cost_details: { upstream_inference_prompt_cost: 0.0001, upstream_inference_completions_cost: 0.000023, upstream_inference_cost: 0.000123 },
      },
      gateway_metadata: { attempts: [] },
    });
  });

  it('plain text: reasoning null, no details, no tool_calls, no metadata; tool-only: content null; refusal', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const b = chatInbound.fromIr({ ...RESPONSE, content: [{ type: 'text', text: 'Hi' }], usage: null, system_fingerprint: null, service_tier: null }, META) as any;
    expect(b.choices[0].message).toEqual({ role: 'assistant', content: 'Hi', refusal: null, reasoning: null });
    expect(b.gateway_metadata).toBeUndefined();
    expect(b.service_tier).toBeUndefined();
    expect(b.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const t = chatInbound.fromIr({ ...RESPONSE, content: [RESPONSE.content[3]] }, META) as any;
    expect(t.choices[0].message.content).toBeNull();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const r = chatInbound.fromIr({ ...RESPONSE, content: [{ type: 'refusal', text: 'No.' }], finish_reason: 'content_filter' }, META) as any;
    expect(r.choices[0].message).toMatchObject({ content: null, refusal: 'No.' });
  });

  it('errorBody', () => {
    expect(chatInbound.errorBody(429, 'Rate limited', { error_type: 'rate_limit_exceeded' })).toEqual({ error: { code: 429, message: 'Rate limited', metadata: { error_type: 'rate_limit_exceeded' } } });
    expect(chatInbound.errorBody(400, 'Bad', null)).toEqual({ error: { code: 400, message: 'Bad' } });
    expect(chatInbound.api).toBe('chat');
  });
});

/** A representative IR event stream: reasoning with signature, redacted, text, two tool calls, finish, usage. */
const EVENTS: IrStreamEvent[] = [
  { type: 'start', id: 'up-1', model: 'gpt-4.1' },
  { type: 'reasoning_delta', index: 0, text: 'Let me ' },
  { type: 'reasoning_delta', index: 0, text: 'think.' },
  { type: 'reasoning_signature', index: 0, signature: 'sig==' },
  { type: 'part_end', index: 0 },
  { type: 'redacted_reasoning', index: 1, data: 'ENC==' },
  { type: 'text_delta', index: 2, text: 'Paris ' },
  { type: 'text_delta', index: 2, text: 'is sunny.' },
  { type: 'part_end', index: 2 },
  { type: 'tool_call_start', index: 3, id: 'call_a', name: 'get_weather' },
  { type: 'tool_call_delta', index: 3, arguments: '{"city":' },
  { type: 'tool_call_start', index: 4, id: 'call_b', name: 'get_time' },
  { type: 'tool_call_delta', index: 4, arguments: '{}' },
  { type: 'tool_call_delta', index: 3, arguments: '"Paris"}' },
  { type: 'part_end', index: 3 },
  { type: 'part_end', index: 4 },
  { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_calls' },
  { type: 'usage', usage: { input: 10, output: 20, cache_read: 4, cache_write: 0, reasoning: 5 } },
];

function encodeAll(events: IrStreamEvent[], meta: AnswerMeta = META, usageAtFinish: 'given' | 'null' = 'given'): string {
  const enc = chatInbound.createStreamEncoder(meta);
  let out = enc.start();
  for (const ev of events) out += enc.event(ev);
  const usage = events.find((e) => e.type === 'usage');
  return out + enc.finish(usageAtFinish === 'given' && usage?.type === 'usage' ? usage.usage : null, meta);
}

describe('IR events → chat.completion.chunk SSE', () => {
  it('chunk sequence: role chunk, deltas, tool calls indexed 0/1, finish chunk, usage chunk, [DONE]', () => {
    const text = encodeAll(EVENTS, { ...META, gateway_metadata: { x: 1 } });
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = chunksOf(text);
    for (const c of chunks) expect(c).toMatchObject({ id: META.id, object: 'chat.completion.chunk', created: META.created, model: META.model, provider: 'OpenAI' });
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning: 'Let me ', reasoning_details: [{ type: 'reasoning.text', text: 'Let me ', index: 0 }] },
      { reasoning: 'think.', reasoning_details: [{ type: 'reasoning.text', text: 'think.', index: 0 }] },
      { reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'sig==', index: 0 }] },
      { reasoning_details: [{ type: 'reasoning.encrypted', data: 'ENC==', index: 1 }] },
      { content: 'Paris ' },
      { content: 'is sunny.' },
      { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      {},
      null,
    ]);
    expect(chunks.at(-2).choices[0]).toMatchObject({ finish_reason: 'tool_calls', native_finish_reason: 'tool_calls' });
    expect(chunks.slice(0, -2).every((c) => c.choices[0].finish_reason === null)).toBe(true);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 20,
      total_tokens: 30,
      prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 5 },
      cost: META.cost,
      is_byok: false,
      cost_details: META.cost_details,
    });
    expect(last.gateway_metadata).toEqual({ x: 1 });
    expect(chunks.filter((c) => c.usage).length).toBe(1);
  });

  it('the role chunk comes once, also when start() is not called; finish(null) falls back to the usage event', () => {
    const enc = chatInbound.createStreamEncoder(META);
    const a = enc.event({ type: 'text_delta', index: 0, text: 'x' });
    const b = enc.event({ type: 'text_delta', index: 0, text: 'y' });
    expect(chunksOf(a).map((c) => c.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'x' }]);
    expect(chunksOf(b).map((c) => c.choices[0].delta)).toEqual([{ content: 'y' }]);
    expect(enc.start()).toBe('');
    expect(enc.event({ type: 'part_end', index: 0 })).toBe('');
    expect(enc.event({ type: 'start', id: null, model: null })).toBe('');
    expect(enc.event({ type: 'usage', usage: { input: 1, output: 2, cache_read: 0, cache_write: 0, reasoning: 0 } })).toBe('');
    const tail = chunksOf(enc.finish(null, META));
    expect(tail.at(-1).usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('error(): error chunk with finish_reason error, then [DONE]', () => {
    const enc = chatInbound.createStreamEncoder(META);
    enc.start();
    const text = enc.error(502, 'Provider error during the stream', 'provider_unavailable', { ...META, gateway_metadata: { attempts: 1 } });
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(chunksOf(text)).toEqual([
      {
        id: META.id,
        object: 'chat.completion.chunk',
        created: META.created,
        model: META.model,
        provider: 'OpenAI',
        error: { code: 502, message: 'Provider error during the stream', metadata: { error_type: 'provider_unavailable' } },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
        gateway_metadata: { attempts: 1 },
      },
    ]);
    expect(enc.event({ type: 'error', status: 502, message: 'x', error_type: 'server' })).toBe('');
  });
});

describe('through the official openai SDK', () => {
  let server: Awaited<ReturnType<typeof serveOnce>>;
  let reply: { contentType: string; body: string; status?: number } = { contentType: 'application/json', body: '{}' };
  let client: OpenAI;
  beforeAll(async () => {
    server = await serveOnce(() => reply);
    client = new OpenAI({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => server.close());

  const params = { model: 'openai/gpt-4.1', messages: [{ role: 'user' as const, content: 'Weather?' }] };

  it('stream: create({stream:true}) yields every chunk; content, reasoning and tool calls reassemble', async () => {
    reply = { contentType: 'text/event-stream', body: encodeAll(EVENTS) };
    const stream = await client.chat.completions.create({ ...params, stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toHaveLength(14);
    const deltas = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0].delta);
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Paris is sunny.');
    expect(deltas.map((d) => (d as { reasoning?: string }).reasoning ?? '').join('')).toBe('Let me think.');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 });
  });

  it('stream: the SDK stream helper builds the final completion (tool calls by index)', async () => {
    reply = { contentType: 'text/event-stream', body: encodeAll(EVENTS) };
    const runner = client.chat.completions.stream(params);
    const final = await runner.finalChatCompletion();
    expect(final.id).toBe(META.id);
    expect(final.choices[0].message.content).toBe('Paris is sunny.');
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(final.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 20 });
  });

  it('stream: an error chunk surfaces as APIError in the SDK', async () => {
    const enc = chatInbound.createStreamEncoder(META);
    reply = { contentType: 'text/event-stream', body: enc.start() + enc.event({ type: 'text_delta', index: 0, text: 'Hi' }) + enc.error(502, 'Provider error during the stream', 'provider_unavailable', META) };
    const stream = await client.chat.completions.create({ ...params, stream: true });
    const seen: string[] = [];
    let err: unknown;
    try {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? '');
    } catch (e) {
      err = e;
    }
    expect(seen.join('')).toBe('Hi');
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toMatch(/Provider error during the stream/);
  });

  it('non-stream body parses as a ChatCompletion', async () => {
    reply = { contentType: 'application/json', body: JSON.stringify(chatInbound.fromIr(RESPONSE, META)) };
    const r = await client.chat.completions.create(params);
    expect(r.id).toBe(META.id);
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0].message.content).toBe('Paris is sunny.');
    expect(r.choices[0].message.tool_calls?.[0]).toMatchObject({ id: 'call_1', function: { name: 'get_weather' } });
    expect(r.usage?.prompt_tokens_details?.cached_tokens).toBe(60);
    expect(r.usage?.completion_tokens_details?.reasoning_tokens).toBe(25);
  });

  it('upstream docs stream → decoder → encoder → SDK gives the upstream text and tool call', async () => {
    for (const name of ['chat-stream.sse', 'chat-stream-tool-calls.sse']) {
      const dec = new ChatStreamDecoder();
      const events = [...dec.push(fixture('openai', name)), ...dec.end()];
      reply = { contentType: 'text/event-stream', body: encodeAll(events) };
      const final = await client.chat.completions.stream(params).finalChatCompletion();
      if (name === 'chat-stream.sse') {
        expect(final.choices[0].message.content).toBe('Hello! How can I assist you today?');
        expect(final.usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 10 });
      } else {
        expect(final.choices[0].message.tool_calls?.[0].function).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris, France"}' });
        expect(final.choices[0].finish_reason).toBe('tool_calls');
      }
    }
  });
});

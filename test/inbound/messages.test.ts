/**
 * The Anthropic Messages skin: request → IR and IR → Message with fixtures from Anthropic's documentation
 * (test/inbound/fixtures/anthropic, each citing its page), the error envelope, the /messages validation helpers, and
 * the stream encoder, whose output is served from a local HTTP server and reassembled by the official
 * `@anthropic-ai/sdk` (`messages.stream(...).finalMessage()`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import type { IrPart, IrResponse, IrStreamEvent } from '../../src/core/ir.js';
import { HttpError } from '../../src/core/errors.js';
import {
  anthropicErrorType,
  checkMessagesBody,
  checkMessagesFallbacks,
  messagesFallbackModels,
  messagesInbound,
  stopReason,
} from '../../src/inbound/messages.js';
import { encode, fixture, meta, parseSse, sseEvents, startServer, usage, type Json, type TestServer } from './util.js';

const basic = fixture('anthropic', 'basic');
const toolUse = fixture('anthropic', 'tool-use');
const thinking = fixture('anthropic', 'extended-thinking');
const vision = fixture('anthropic', 'vision');
const caching = fixture('anthropic', 'prompt-caching');
const streaming = fixture('anthropic', 'streaming');

function irResponse(content: IrPart[], over: Partial<IrResponse> = {}): IrResponse {
  return { id: 'msg_upstream', model: 'claude-sonnet-4-20250514', content, finish_reason: 'stop', native_finish_reason: 'end_turn', usage: usage(), ...over };
}

function expect400(fn: () => unknown, text: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(400);
    expect((e as HttpError).message).toMatch(text);
    return;
  }
  throw new Error('expected a 400');
}

// ---- request → IR ------------------------------------------------------------------------------------------------

describe('messages: request → IR (docs fixtures)', () => {
  it('basic request (docs: Create a Message)', () => {
    expect(messagesInbound.toIr(basic.request)).toEqual({
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, world' }] }],
      max_tokens: 1024,
      stream: false,
    });
  });

  it('tools, tool_choice {type:tool} with disable_parallel_tool_use (docs: tool use overview)', () => {
    const ir = messagesInbound.toIr(toolUse.request);
    expect(ir.tools).toEqual([
      { name: 'get_weather', description: 'Get the current weather in a given location', parameters: toolUse.request.tools[0].input_schema },
    ]);
    expect(ir.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(ir.parallel_tool_calls).toBe(false);
  });

  it('tool_choice auto/any/none map to auto/required/none', () => {
    const base = { messages: basic.request.messages };
    expect(messagesInbound.toIr({ ...base, tool_choice: { type: 'auto' } }).tool_choice).toEqual({ type: 'auto' });
    expect(messagesInbound.toIr({ ...base, tool_choice: { type: 'any' } }).tool_choice).toEqual({ type: 'required' });
    expect(messagesInbound.toIr({ ...base, tool_choice: { type: 'none' } }).tool_choice).toEqual({ type: 'none' });
    expect(messagesInbound.toIr({ ...base, tool_choice: { type: 'auto' } }).parallel_tool_calls).toBeUndefined();
  });

  it('tool_use → tool_call (arguments = JSON of input) and tool_result → tool_result (docs: handle tool calls)', () => {
    const ir = messagesInbound.toIr(toolUse.followup);
    expect(ir.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather like in San Francisco?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll check the current weather in San Francisco for you." },
          { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: JSON.stringify({ location: 'San Francisco, CA', unit: 'celsius' }) },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: '15 degrees' }] },
    ]);
  });

  it('tool_result with text+image blocks, and with is_error', () => {
    const ir = messagesInbound.toIr({ messages: [{ role: 'user', content: [toolUse.tool_result_blocks, toolUse.tool_result_error] }] });
    expect(ir.messages[0].content).toEqual([
      {
        type: 'tool_result',
        tool_call_id: 'toolu_01A09q90qw90lq917835lq9',
        content: [
          { type: 'text', text: '15 degrees' },
          { type: 'image', data: '/9j/4AAQSkZJRg...', media_type: 'image/jpeg' },
        ],
      },
      { type: 'tool_result', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: "Error: Missing required 'location' parameter", is_error: true },
    ]);
  });

  it('thinking {enabled, budget_tokens} → reasoning; thinking / redacted_thinking blocks → reasoning (signed) / redacted (docs: extended thinking)', () => {
    const ir = messagesInbound.toIr({ ...thinking.request, messages: [...thinking.request.messages, { role: 'assistant', content: thinking.response.content }] });
    expect(ir.reasoning).toEqual({ enabled: true, max_tokens: 10000 });
    expect(ir.max_tokens).toBe(16000);
    expect(ir.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me analyze this step by step...', signature: thinking.response.content[0].signature },
        { type: 'redacted_reasoning', data: thinking.response.content[1].data },
        { type: 'text', text: 'Based on my analysis...' },
      ],
    });
  });

  it('thinking disabled → effort none; adaptive → enabled; output_config.effort → effort', () => {
    const m = basic.request.messages;
    expect(messagesInbound.toIr({ messages: m, thinking: { type: 'disabled' } }).reasoning).toEqual({ effort: 'none' });
    expect(messagesInbound.toIr({ messages: m, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }).reasoning).toEqual({ enabled: true, effort: 'high' });
    expect(messagesInbound.toIr({ messages: m }).reasoning).toBeUndefined();
  });

  it('image blocks: base64 and url sources (docs: vision)', () => {
    const ir = messagesInbound.toIr(vision.request);
    expect(ir.messages[0].content).toEqual([
      { type: 'text', text: 'Image 1:' },
      { type: 'image', data: '/9j/4AAQSkZJRgABAQEASABIAAD...', media_type: 'image/jpeg' },
      { type: 'text', text: 'Image 2:' },
      { type: 'image', url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' },
      { type: 'text', text: 'How are these images different?' },
    ]);
  });

  it('system text blocks and tools keep cache_control (docs: prompt caching)', () => {
    const ir = messagesInbound.toIr(caching.request);
    expect(ir.system).toEqual([
      { type: 'text', text: caching.request.system[0].text },
      { type: 'text', text: "<the entire contents of 'Pride and Prejudice'>", cache_control: { type: 'ephemeral' } },
    ]);
    expect(ir.tools?.[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    const blocks = messagesInbound.toIr({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'big doc', cache_control: { type: 'ephemeral', ttl: '5m' } }] }],
    });
    expect(blocks.messages[0].content[0]).toEqual({ type: 'text', text: 'big doc', cache_control: { type: 'ephemeral', ttl: '5m' } });
  });

  it('gateway server tools (openrouter:*, web_search*) stay out of the IR tool list', () => {
    const ir = messagesInbound.toIr({
      messages: basic.request.messages,
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }, { type: 'openrouter:datetime' }, toolUse.request.tools[0]],
    });
    expect(ir.tools?.map((t) => t.name)).toEqual(['get_weather']);
  });

  it('string system, sampling, stop_sequences, metadata.user_id, stream', () => {
    const ir = messagesInbound.toIr({
      system: 'You are a helpful assistant.',
      messages: basic.request.messages,
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['\n\nHuman:'],
      metadata: { user_id: '13803d75-b4b5-4c3e-b2a2-6f21399b021b' },
      stream: true,
    });
    expect(ir).toEqual({
      system: [{ type: 'text', text: 'You are a helpful assistant.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, world' }] }],
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop: ['\n\nHuman:'],
      user: '13803d75-b4b5-4c3e-b2a2-6f21399b021b',
      stream: true,
    });
  });

  it('never refuses what Anthropic accepts: blocks, tools and fields the IR cannot carry are listed as dropped', () => {
    // Deliberate change (issue 15): these were 400s; they reach Anthropic upstreams in the passed-through body.
    const user = (content: unknown) => ({ messages: [{ role: 'user', content }] });
    const ir = messagesInbound.toIr({
      ...user([
        { type: 'text', text: 'x' },
        { type: 'document', source: { type: 'file', file_id: 'file_2' } },
        { type: 'image', source: { type: 'file', file_id: 'file_1' } },
        { type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'r' }] },
      ]),
      tools: [{ type: 'bash_20250124', name: 'bash' }, { name: 'Read', input_schema: { type: 'object' }, defer_loading: true }],
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'medium' },
      container: 'c_1',
    });
    expect(ir.messages[0].content).toEqual([{ type: 'text', text: 'x' }]);
    expect(ir.tools).toEqual([{ name: 'Read', parameters: { type: 'object' } }]);
    expect(ir.reasoning).toEqual({ enabled: true, effort: 'medium' });
    expect(ir.dropped_fields).toEqual([
      'context_management',
      'thinking.display',
      'container',
      'messages[0].content[1] (document source file)',
      'messages[0].content[2] (image source file)',
      'messages[0].content[3] (search_result)',
      'tools[0] (bash_20250124)',
      'tools[1].defer_loading',
    ]);
  });

  it('document blocks → IR documents (base64 PDF, text, URL; title as file name); malformed ones are 400s', () => {
    const ir = messagesInbound.toIr({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'a.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, cache_control: { type: 'ephemeral' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } },
            { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } },
          ],
        },
      ],
    });
    expect(ir.messages[0].content).toEqual([
      { type: 'document', filename: 'a.pdf', data: 'JVBERi0=', media_type: 'application/pdf', cache_control: { type: 'ephemeral' } },
      { type: 'document', data: Buffer.from('hello').toString('base64'), media_type: 'text/plain' },
      { type: 'document', url: 'https://x/a.pdf' },
    ]);
    expect(ir.dropped_fields ?? []).toEqual([]);
    expect(() => messagesInbound.toIr({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'x' } }] }] })).toThrow(/messages\[0\]\.content\[0\]\.source needs media_type and data/);
    expect(() => messagesInbound.toIr({ messages: [{ role: 'user', content: [{ type: 'document' }] }] })).toThrow(/messages\[0\]\.content\[0\]\.source is required/);
  });

  it('carries system messages anywhere in messages as system turns', () => {
    const ir = messagesInbound.toIr({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: 'ok' },
        { role: 'system', content: 'Now in French.' },
      ],
    });
    expect(ir.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'system']);
    expect(ir.messages[1].content).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    expect(ir.messages[3].content).toEqual([{ type: 'text', text: 'Now in French.' }]);
    expect400(() => messagesInbound.toIr({ messages: [{ role: 'system', content: [{ type: 'image', source: {} }] }] }), /messages\[0\].content\[0\] must be a text block/);
    expect400(() => messagesInbound.toIr({ messages: [{ role: 'tool', content: 'x' }] }), /role must be one of: user, assistant, system/);
  });

  it('refuses what the IR cannot carry with a 400', () => {
    const user = (content: unknown) => ({ messages: [{ role: 'user', content }] });
    expect400(() => messagesInbound.toIr(user([{ type: 'text', text: 'x', cache_control: { type: 'forever' } }])), /cache_control/);
    expect400(() => messagesInbound.toIr({ ...user('x'), tool_choice: { type: 'tool' } }), /tool_choice.name/);
    expect400(() => messagesInbound.toIr(user([{ type: 'tool_use', id: 'a', name: 'b', input: {} }])), /assistant/);
    expect400(() => messagesInbound.toIr({ messages: [] }), /messages/);
  });
});

// ---- IR → Message ------------------------------------------------------------------------------------------------

describe('messages: IR → Message (docs fixtures)', () => {
  it('text answer: the docs response shape, gateway id and model, cost', () => {
    const body = messagesInbound.fromIr(
      irResponse([{ type: 'text', text: 'Hi! My name is Claude.' }], { usage: usage({ input: 2095, output: 503 }) }),
      meta(),
    );
    expect(body).toMatchObject({
      id: 'gen-1700000000-AbCdEf0123456789',
      type: 'message',
      role: 'assistant',
      model: 'anthropic/claude-sonnet-4',
      content: [{ type: 'text', text: basic.response.content[0].text }],
      stop_reason: basic.response.stop_reason,
      stop_sequence: null,
      usage: { ...basic.response.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost: 0.00123 },
    });
    expect(body.gateway_metadata).toBeUndefined();
    expect(messagesInbound.fromIr(irResponse([]), meta({ gateway_metadata: { attempt: 1 } })).gateway_metadata).toEqual({ attempt: 1 });
  });

  it('tool call → tool_use with parsed input, stop_reason tool_use (docs: tool use)', () => {
    const body = messagesInbound.fromIr(
      irResponse(
        [
          { type: 'text', text: toolUse.response.content[0].text },
          { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
        ],
        { finish_reason: 'tool_calls', native_finish_reason: 'tool_calls' },
      ),
      meta(),
    );
    expect(body.stop_reason).toBe('tool_use');
    expect(body.content).toEqual([
      { ...toolUse.response.content[0], citations: null },
      { ...toolUse.response.content[1], caller: { type: 'direct' } },
    ]);
  });

  it('reasoning → thinking with signature, redacted → redacted_thinking (docs: extended thinking)', () => {
    const [t, r, x] = thinking.response.content;
    const body = messagesInbound.fromIr(
      irResponse([
        { type: 'reasoning', text: t.thinking, signature: t.signature },
        { type: 'redacted_reasoning', data: r.data },
        { type: 'text', text: x.text },
      ]),
      meta(),
    );
    expect(body.content).toEqual([t, r, { ...x, citations: null }]);
  });

  it('usage: input_tokens exclude cache reads and writes (docs: prompt caching)', () => {
    const u = caching.response_usage;
    const body = messagesInbound.fromIr(
      irResponse([{ type: 'text', text: 'x' }], { usage: usage({ input: u.input_tokens + u.cache_creation_input_tokens, output: u.output_tokens, cache_write: u.cache_creation_input_tokens }) }),
      meta(),
    );
    expect(body.usage).toMatchObject(u);
    const read = messagesInbound.fromIr(irResponse([], { usage: usage({ input: 1000, cache_read: 900, cache_write: 50, output: 5, reasoning: 3 }) }), meta());
    expect(read.usage).toMatchObject({ input_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 50, output_tokens: 5, output_tokens_details: { thinking_tokens: 3 } });
  });

  it('stop reasons', () => {
    expect(stopReason('stop', 'stop')).toBe('end_turn');
    expect(stopReason('stop', 'end_turn')).toBe('end_turn');
    expect(stopReason('stop', 'stop_sequence')).toBe('stop_sequence');
    expect(stopReason('stop', 'pause_turn')).toBe('pause_turn');
    expect(stopReason('length', 'length')).toBe('max_tokens');
    expect(stopReason('length', 'model_context_window_exceeded')).toBe('model_context_window_exceeded');
    expect(stopReason('tool_calls', 'tool_calls')).toBe('tool_use');
    expect(stopReason('content_filter', 'content_filter')).toBe('refusal');
    expect(stopReason('content_filter', 'SAFETY')).toBe('refusal');
    expect(stopReason('error', null)).toBe('end_turn');
    // A native value that contradicts the normalized reason is not trusted.
    expect(stopReason('length', 'end_turn')).toBe('max_tokens');
    // A refusal part makes the stop reason `refusal`.
    expect(messagesInbound.fromIr(irResponse([{ type: 'refusal', text: 'I cannot help with that.' }], { native_finish_reason: 'stop' }), meta()).stop_reason).toBe('refusal');
  });
});

// ---- errors and validation ---------------------------------------------------------------------------------------

describe('messages: error envelope and validation helpers', () => {
  it('error.type per status, error_type from metadata (or derived), request_id, extra metadata', () => {
    const cases: Array<[number, string]> = [
      [400, 'invalid_request_error'],
      [401, 'authentication_error'],
      [402, 'billing_error'],
      [403, 'permission_error'],
      [404, 'not_found_error'],
      [408, 'timeout_error'],
      [413, 'invalid_request_error'],
      [429, 'rate_limit_error'],
      [500, 'api_error'],
      [502, 'api_error'],
      [503, 'overloaded_error'],
      [524, 'api_error'],
      [529, 'overloaded_error'],
    ];
    for (const [status, type] of cases) expect(anthropicErrorType(status)).toBe(type);
    expect(messagesInbound.errorBody(400, 'Invalid request: messages is required', null)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Invalid request: messages is required', error_type: 'invalid_request' },
      request_id: null,
    });
    expect(messagesInbound.errorBody(502, 'Provider returned error', { error_type: 'provider_unavailable', provider_code: 500, raw: 'boom' }, 'gen-1')).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'Provider returned error', error_type: 'provider_unavailable' },
      request_id: 'gen-1',
      metadata: { provider_code: 500, raw: 'boom' },
    });
  });

  it('fallbacks: at most 3, model only, not with models; messages required', () => {
    const m = { messages: basic.request.messages };
    expect(checkMessagesBody(m)).toBeNull();
    expect(checkMessagesBody({})).toMatch(/messages/);
    expect(checkMessagesBody({ ...m, fallbacks: [{ model: 'a/b' }, { model: 'c/d' }, { model: 'e/f' }] })).toBeNull();
    expect(checkMessagesFallbacks({ fallbacks: [{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }] })).toMatch(/at most 3/);
    expect(checkMessagesFallbacks({ fallbacks: [{ model: 'a', temperature: 0 }] })).toMatch(/only "model".*temperature/);
    expect(checkMessagesFallbacks({ fallbacks: [{}] })).toMatch(/fallbacks\[0\].model is required/);
    expect(checkMessagesFallbacks({ fallbacks: [{ model: 'a' }], models: ['b'] })).toMatch(/cannot be combined with models/);
    expect(checkMessagesFallbacks({ fallbacks: [], models: ['b'] })).toBeNull();
    expect(messagesFallbackModels({ fallbacks: [{ model: 'claude-opus-4-8' }, { model: 'x/y' }] })).toEqual(['claude-opus-4-8', 'x/y']);
    expect(messagesFallbackModels({})).toEqual([]);
  });
});

// ---- SDK: non-stream, errors, streams ----------------------------------------------------------------------------

describe('messages: through the official @anthropic-ai/sdk', () => {
  let server: TestServer;
  let client: Anthropic;
  beforeAll(async () => {
    server = await startServer();
    client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  afterAll(async () => server?.close());

  const params = { model: 'anthropic/claude-sonnet-4', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Hello' }] };

  function streamOf(events: IrStreamEvent[], end: Parameters<typeof encode>[2], m = meta()): string[] {
    return encode(messagesInbound.createStreamEncoder(m), events, end, m);
  }

  it('non-stream body parses into a Message', async () => {
    const m = meta();
    server.reply = {
      json: messagesInbound.fromIr(
        irResponse(
          [
            { type: 'reasoning', text: 'hmm', signature: 'sig' },
            { type: 'text', text: 'Hi!' },
            { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
          ],
          { finish_reason: 'tool_calls', native_finish_reason: 'tool_use', usage: usage({ input: 30, output: 9, cache_read: 10 }) },
        ),
        m,
      ),
    };
    const msg = await client.messages.create(params);
    expect(msg.id).toBe(m.id);
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text: 'Hi!', citations: null },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' }, caller: { type: 'direct' } },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 20, cache_read_input_tokens: 10, output_tokens: 9 });
    expect(server.requests.at(-1)?.path).toBe('/v1/messages');
  });

  it('error envelope surfaces as APIError with status and Anthropic error type', async () => {
    server.reply = { status: 429, json: messagesInbound.errorBody(429, 'Rate limit exceeded', { error_type: 'rate_limit_exceeded' }, 'gen-x') };
    const err = await client.messages.create(params).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(429);
    expect((err as APIError).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', error_type: 'rate_limit_exceeded' }, request_id: 'gen-x' });
  });

  it('text stream: exact event sequence, and the SDK reassembles it (docs: basic streaming)', async () => {
    const [a, b] = streaming.text_deltas as string[];
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'msg_up', model: 'claude' },
      { type: 'usage', usage: usage({ input: 25, output: 1 }) },
      { type: 'text_delta', index: 0, text: a },
      { type: 'text_delta', index: 0, text: b },
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn' },
    ];
    const pieces = streamOf(events, { usage: usage({ input: 25, output: 15 }) });
    const parsed = sseEvents(pieces.join(''));
    expect(parsed.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(parsed[0].message).toMatchObject({ id: meta().id, content: [], stop_reason: null, usage: { input_tokens: 25, output_tokens: 0 } });
    expect(parsed[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } });
    expect(parsed[2]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: a } });
    expect(parsed[5]).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15, input_tokens: 25, cost: 0.00123 } });

    server.reply = { sse: pieces };
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const msg = await stream.finalMessage();
    expect(texts).toEqual([a, b]);
    expect(msg.content).toEqual([{ type: 'text', text: a + b, citations: null }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage).toMatchObject({ input_tokens: 25, output_tokens: 15 });
  });

  it('tool-use stream with partial JSON pieces (docs: streaming request with tool use)', async () => {
    const { id, name } = streaming.tool_use;
    const events: IrStreamEvent[] = [
      { type: 'start', id: null, model: null },
      { type: 'text_delta', index: 0, text: streaming.tool_text },
      { type: 'tool_call_start', index: 1, id, name },
      ...(streaming.partial_json as string[]).map((s): IrStreamEvent => ({ type: 'tool_call_delta', index: 1, arguments: s })),
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use' },
    ];
    const pieces = streamOf(events, { usage: usage({ input: streaming.usage.input_tokens, output: streaming.usage.output_tokens }) });
    const types = sseEvents(pieces.join('')).map((e) => `${e.type}${e.index ?? ''}`);
    expect(types.slice(0, 4)).toEqual(['message_start', 'content_block_start0', 'content_block_delta0', 'content_block_stop0']);
    expect(types[4]).toBe('content_block_start1');
    expect(types.slice(-3)).toEqual(['content_block_stop1', 'message_delta', 'message_stop']);

    server.reply = { sse: pieces };
    const msg = await client.messages.stream({ ...params, tools: streaming.tool_request.tools, tool_choice: { type: 'any' } }).finalMessage();
    expect(msg.content).toEqual([
      { type: 'text', text: streaming.tool_text, citations: null },
      { type: 'tool_use', id, name, input: { location: 'San Francisco, CA', unit: 'fahrenheit' }, caller: { type: 'direct' } },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject(streaming.usage);
  });

  it('interleaved thinking (signed) + redacted + text + tool call; non-contiguous IR indexes; metadata on message_stop', async () => {
    const [t1, t2, sig, text] = thinking.stream as Json[];
    const redacted = thinking.response.content[1].data as string;
    const ir: IrPart[] = [
      { type: 'reasoning', text: t1.thinking + t2.thinking, signature: sig.signature },
      { type: 'redacted_reasoning', data: redacted },
      { type: 'text', text: text.text },
      { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
    ];
    const events: IrStreamEvent[] = [
      { type: 'start', id: null, model: null },
      { type: 'reasoning_delta', index: 2, text: t1.thinking },
      { type: 'reasoning_delta', index: 2, text: t2.thinking },
      { type: 'reasoning_signature', index: 2, signature: sig.signature },
      { type: 'redacted_reasoning', index: 5, data: redacted },
      { type: 'text_delta', index: 7, text: text.text },
      { type: 'tool_call_start', index: 9, id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather' },
      { type: 'tool_call_delta', index: 9, arguments: '{"location":' },
      { type: 'tool_call_delta', index: 9, arguments: '"San Francisco, CA"}' },
      { type: 'part_end', index: 9 },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use' },
      { type: 'usage', usage: usage({ input: 1200, output: 90, cache_read: 1000, cache_write: 100, reasoning: 40 }) },
    ];
    const m = meta({ gateway_metadata: { strategy: 'direct', attempt: 1 } });
    const pieces = streamOf(events, { usage: null }, m);
    const parsed = sseEvents(pieces.join(''));
    // Blocks are sequential, indexes 0..3, each closed before the next starts.
    const blockEvents = parsed.filter((e) => e.type.startsWith('content_block_')).map((e) => `${e.type.replace('content_block_', '')}${e.index}`);
    expect(blockEvents).toEqual([
      'start0', 'delta0', 'delta0', 'delta0', 'stop0',
      'start1', 'stop1',
      'start2', 'delta2', 'stop2',
      'start3', 'delta3', 'delta3', 'stop3',
    ]);
    expect(parsed.at(-1)).toEqual({ type: 'message_stop', gateway_metadata: { strategy: 'direct', attempt: 1 } });

    server.reply = { sse: pieces };
    const msg = await client.messages.stream(params).finalMessage();
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: ir[0].type === 'reasoning' ? ir[0].text : '', signature: sig.signature },
      { type: 'redacted_thinking', data: redacted },
      { type: 'text', text: text.text, citations: null },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA' }, caller: { type: 'direct' } },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 100, output_tokens: 90 });

    // Both ways: the reassembled message sent back as an assistant turn gives the IR parts again.
    const back = messagesInbound.toIr({ messages: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: msg.content }] });
    expect(back.messages[1].content).toEqual(ir);
  });

  it('message_start carries input usage when the upstream gave it before the content', () => {
    const parsed = sseEvents(
      streamOf(
        [
          { type: 'usage', usage: usage({ input: 500, cache_read: 400 }) },
          { type: 'text_delta', index: 0, text: 'x' },
        ],
        { usage: usage({ input: 500, cache_read: 400, output: 1 }) },
      ).join(''),
    );
    expect(parsed[0].message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 400, output_tokens: 0 });
    const none = sseEvents(streamOf([{ type: 'text_delta', index: 0, text: 'x' }], { usage: null }).join(''));
    expect(none[0].message.usage.input_tokens).toBe(0);
  });

  it('error after the stream started: `event: error`, and the SDK raises it', async () => {
    const m = meta({ gateway_metadata: { attempt: 1 } });
    const pieces = streamOf(
      [
        { type: 'start', id: null, model: null },
        { type: 'text_delta', index: 0, text: 'Partial answer' },
      ],
      { error: { status: 529, message: 'Provider is overloaded', type: 'provider_overloaded' } },
      m,
    );
    const frames = parseSse(pieces.join(''));
    expect(frames.at(-1)?.event).toBe('error');
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Provider is overloaded', error_type: 'provider_overloaded' },
      gateway_metadata: { attempt: 1 },
    });
    // Nothing more after an error.
    const enc = messagesInbound.createStreamEncoder(m);
    enc.error(502, 'x', 'provider_unavailable', m);
    expect(enc.finish(null, m)).toBe('');

    server.reply = { sse: pieces };
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Provider is overloaded' } });
    expect(texts).toEqual(['Partial answer']);
  });

  it('an IR error event inside the stream is encoded the same way', () => {
    const frames = parseSse(
      streamOf(
        [
          { type: 'text_delta', index: 0, text: 'a' },
          { type: 'error', status: 502, message: 'Provider returned error', error_type: 'provider_unavailable' },
        ],
        { usage: null },
      ).join(''),
    );
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error']);
    expect(JSON.parse(frames[3].data).error).toEqual({ type: 'api_error', message: 'Provider returned error', error_type: 'provider_unavailable' });
  });

  it('finish without a finish event: tool_use when a tool was called, refusal on refusal text', () => {
    const lastDelta = (events: IrStreamEvent[]) => sseEvents(streamOf(events, { usage: null }).join('')).find((e) => e.type === 'message_delta')!;
    expect(lastDelta([{ type: 'tool_call_start', index: 0, id: 't', name: 'f' }]).delta.stop_reason).toBe('tool_use');
    expect(lastDelta([{ type: 'refusal_delta', index: 0, text: 'No.' }]).delta.stop_reason).toBe('refusal');
    expect(lastDelta([{ type: 'text_delta', index: 0, text: 'Hi' }]).delta.stop_reason).toBe('end_turn');
    expect(lastDelta([{ type: 'finish', finish_reason: 'length', native_finish_reason: 'length' }]).delta.stop_reason).toBe('max_tokens');
  });
});

/**
 * OpenAI chat completions as an upstream protocol: IR → request body, answers (docs fixtures, see fixtures/README.md)
 * → IR, SSE streams → IR events at every chunking, errors.
 */
import { describe, expect, it } from 'vitest';
import type { IrRequest, IrStreamEvent } from '../../../src/core/ir.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { buildChatBody, ChatStreamDecoder, openaiChatAdapter } from '../../../src/providers/openai/ir-upstream.js';
import { assemble, chunkings, ctx, decode, fixture } from './util.js';

const fx = (name: string) => fixture('openai', name);
const base = (over: Partial<IrRequest> = {}): IrRequest => ({ model: 'gpt-4.1', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, ...over });

/** A full IR conversation exercising every part type. */
const CONVERSATION: IrRequest = {
  model: 'gpt-4.1',
  system: [
    { type: 'text', text: 'You are terse.' },
    { type: 'text', text: 'Long shared context.', cache_control: { type: 'ephemeral', ttl: '1h' } },
  ],
  messages: [
    {
      role: 'user',
      name: 'alice',
      content: [
        { type: 'text', text: 'Weather in Paris? See map.' },
        { type: 'image', url: 'https://example.com/map.png', detail: 'low' },
        { type: 'image', data: 'iVBORw0KGgo=', media_type: 'image/png' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Need the weather tool.', signature: 'sig-abc' },
        { type: 'redacted_reasoning', data: 'ENCRYPTED==' },
        { type: 'reasoning', text: 'Summary.', summary: true },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '{}' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_call_id: 'call_1', content: '18C, sunny' },
        { type: 'tool_result', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:00' }, { type: 'image', url: 'https://example.com/clock.png' }], is_error: false },
        { type: 'text', text: 'Thanks, summarize.' },
      ],
    },
    { role: 'assistant', content: [{ type: 'refusal', text: 'I cannot help with that.' }] },
  ],
  tools: [
    { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true, cache_control: { type: 'ephemeral' } },
    { name: 'get_time', parameters: { type: 'object', properties: {} } },
  ],
  tool_choice: { type: 'tool', name: 'get_weather' },
  parallel_tool_calls: false,
  max_tokens: 500,
  temperature: 0.2,
  top_p: 0.9,
  top_k: 40,
  frequency_penalty: 0.1,
  presence_penalty: -0.1,
  seed: 7,
  stop: ['END'],
  response_format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true, description: 'The answer' },
  reasoning: { effort: 'high' },
  user: 'user-42',
  stream: true,
};

describe('IR → chat completions body', () => {
  it('maps every part and parameter', () => {
    expect(buildChatBody(CONVERSATION)).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Long shared context.' }] },
        {
          role: 'user',
          name: 'alice',
          content: [
            { type: 'text', text: 'Weather in Paris? See map.' },
            { type: 'image_url', image_url: { url: 'https://example.com/map.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
          reasoning: 'Need the weather tool.Summary.',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Need the weather tool.', signature: 'sig-abc', index: 0 },
            { type: 'reasoning.encrypted', data: 'ENCRYPTED==', index: 1 },
            { type: 'reasoning.summary', summary: 'Summary.', index: 2 },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C, sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: '14:00' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/clock.png' } },
            { type: 'text', text: 'Thanks, summarize.' },
          ],
        },
        { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_completion_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      frequency_penalty: 0.1,
      presence_penalty: -0.1,
      seed: 7,
      stop: ['END'],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true, description: 'The answer' } },
      reasoning_effort: 'high',
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('keeps cache_control when asked, uses the developer role and legacy max_tokens, omits reasoning history', () => {
    const b = buildChatBody(CONVERSATION, { cacheControl: true, systemRole: 'developer', legacyMaxTokens: true, reasoningHistory: false });
    const msgs = b.messages as Array<Record<string, unknown>>;
    expect(msgs[0]).toEqual({
      role: 'developer',
      content: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Long shared context.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    });
    expect((b.tools as Array<Record<string, unknown>>)[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(b.max_tokens).toBe(500);
    expect(b.max_completion_tokens).toBeUndefined();
    expect(msgs[2].reasoning).toBeUndefined();
    expect(msgs[2].reasoning_details).toBeUndefined();
    const tr = base({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_call_id: 'c1', content: 'big', cache_control: { type: 'ephemeral' } }] }] });
    expect(buildChatBody(tr, { cacheControl: true }).messages).toEqual([{ role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'big', cache_control: { type: 'ephemeral' } }] }]);
    expect(buildChatBody(tr).messages).toEqual([{ role: 'tool', tool_call_id: 'c1', content: 'big' }]);
    expect(buildChatBody(base({ messages: [{ role: 'user', content: [] }] })).messages).toEqual([{ role: 'user', content: '' }]);
  });

  it('uses plain strings for single text parts and simple choices, and omits unset parameters', () => {
    const b = buildChatBody(base({ system: [{ type: 'text', text: 'Be kind.' }], tool_choice: { type: 'required' }, response_format: { type: 'json_object' } }));
    expect(b).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'Hi' },
      ],
      tool_choice: 'required',
      response_format: { type: 'json_object' },
    });
    expect(buildChatBody(base({ tool_choice: { type: 'none' } })).tool_choice).toBe('none');
    expect(buildChatBody(base({ tool_choice: { type: 'auto' } })).tool_choice).toBe('auto');
    expect(buildChatBody(base({ response_format: { type: 'text' } })).response_format).toEqual({ type: 'text' });
  });

  it('maps reasoning settings to reasoning_effort', () => {
    expect(buildChatBody(base({ reasoning: { effort: 'max' } })).reasoning_effort).toBe('xhigh');
    expect(buildChatBody(base({ reasoning: { effort: 'minimal' } })).reasoning_effort).toBe('minimal');
    expect(buildChatBody(base({ reasoning: { enabled: false } })).reasoning_effort).toBe('none');
    expect(buildChatBody(base({ reasoning: { max_tokens: 1000 } })).reasoning_effort).toBeUndefined();
  });

  it('builds the HTTP request: URL, headers, body; max_tokens for endpoints that only take that name', () => {
    const r = openaiChatAdapter.buildRequest(base({ max_tokens: 10, stream: true }), ctx({ headers: { 'x-extra': '1' } }));
    expect(r.url.href).toBe('https://api.openai.example/v1/chat/completions');
    expect(r.headers).toMatchObject({ authorization: 'Bearer sk-test', 'content-type': 'application/json', accept: 'text/event-stream', 'x-extra': '1' });
    const body = JSON.parse(r.body);
    expect(body.max_completion_tokens).toBe(10);
    expect(body.stream_options).toEqual({ include_usage: true });
    const legacy = openaiChatAdapter.buildRequest(base({ max_tokens: 10 }), ctx({}, { supported_parameters: ['max_tokens'] }, null));
    expect(JSON.parse(legacy.body)).toMatchObject({ max_tokens: 10 });
    expect(JSON.parse(legacy.body).max_completion_tokens).toBeUndefined();
    expect(legacy.headers.authorization).toBeUndefined();
    expect(legacy.headers.accept).toBe('application/json');
    expect(openaiChatAdapter.protocol).toBe('openai');
  });
});

describe('chat completion → IR', () => {
  it('docs chat completion object', () => {
    expect(openaiChatAdapter.parseResponse(fx('chat-completion.json'))).toEqual({
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      model: 'gpt-4o-2024-08-06',
      content: [
        {
          type: 'text',
          text: 'The image shows a wooden boardwalk path running through a lush green field or meadow. The sky is bright blue with some scattered clouds, giving the scene a serene and peaceful atmosphere. Trees and shrubs are visible in the background.',
        },
      ],
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      usage: { input: 1117, output: 46, cache_read: 0, cache_write: 0, reasoning: 0 },
      service_tier: 'default',
      system_fingerprint: 'fp_fc9f1d7035',
    });
  });

  it('docs tool-call response', () => {
    const r = openaiChatAdapter.parseResponse(fx('chat-completion-tool-calls.json'));
    expect(r.content).toEqual([{ type: 'tool_call', id: 'call_abc123', name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}' }]);
    expect(r.finish_reason).toBe('tool_calls');
    expect(r.usage).toEqual({ input: 82, output: 17, cache_read: 0, cache_write: 0, reasoning: 0 });
    expect(r.system_fingerprint).toBeNull();
  });

  it('OpenRouter reasoning_details: text with signature, summary, encrypted → reasoning / redacted parts', () => {
    const r = openaiChatAdapter.parseResponse(fx('openrouter-reasoning-details.json'));
    expect(r.content).toEqual([
      { type: 'reasoning', text: 'The model analyzed the problem by first identifying key constraints, then evaluating possible solutions...', summary: true },
      { type: 'redacted_reasoning', data: 'eyJlbmNyeXB0ZWQiOiJ0cnVlIiwiY29udGVudCI6IltSRURBQ1RFRF0ifQ==' },
      { type: 'reasoning', text: "Let me work through this step by step:\n1. First, I need to understand the user's question...", signature: 'sha256:abc123def456...' },
      { type: 'text', text: 'The answer is 42.' },
    ]);
    expect(r.usage?.reasoning).toBe(100);
  });

  it('DeepSeek reasoning_content → reasoning part', () => {
    const r = openaiChatAdapter.parseResponse(fx('deepseek-reasoning-content.json'));
    expect(r.content[0]).toEqual({ type: 'reasoning', text: 'Comparing 9.11 and 9.8: the tenths digit 1 is smaller than 8, so 9.11 < 9.8.' });
    expect(r.content[1]).toEqual({ type: 'text', text: '9.11 is less than 9.8.' });
    expect(r.usage).toEqual({ input: 13, output: 80, cache_read: 0, cache_write: 0, reasoning: 62 });
  });

  it('refusal, cache reads/writes, finish reason normalization', () => {
    const body = (msg: object, finish: string, usage?: object) =>
      JSON.stringify({ id: 'x', model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...msg }, finish_reason: finish }], usage });
    const r = openaiChatAdapter.parseResponse(
      body({ content: null, refusal: "I'm sorry, I can't help with that." }, 'content_filter', {
        prompt_tokens: 100,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      }),
    );
    expect(r.content).toEqual([{ type: 'refusal', text: "I'm sorry, I can't help with that." }]);
    expect(r.finish_reason).toBe('content_filter');
    expect(r.usage).toEqual({ input: 100, output: 5, cache_read: 60, cache_write: 30, reasoning: 0 });
    expect(openaiChatAdapter.parseResponse(body({ content: 'a' }, 'max_tokens')).finish_reason).toBe('length');
    const eos = openaiChatAdapter.parseResponse(body({ content: 'a' }, 'eos'));
    expect([eos.finish_reason, eos.native_finish_reason, eos.usage]).toEqual(['stop', 'eos', null]);
  });

  it('invalid answers throw UpstreamError', () => {
    const expectErr = (text: string, status: number, match: RegExp) => {
      try {
        openaiChatAdapter.parseResponse(text);
      } catch (e) {
        expect(e).toBeInstanceOf(UpstreamError);
        expect((e as UpstreamError).status).toBe(status);
        expect((e as UpstreamError).message).toMatch(match);
        return;
      }
      throw new Error('expected a throw');
    };
    expectErr('not json', 502, /non-JSON/);
    expectErr('{"id":"x"}', 502, /no choices/);
    expectErr('[1]', 502, /invalid response/);
    expectErr('{"error":{"message":"Rate limited","code":429}}', 429, /Rate limited/);
  });

  it('parseError is the OpenAI error mapping', () => {
    const e429 = openaiChatAdapter.parseError(429, '{"error":{"message":"Slow down","type":"requests","code":"rate_limit_exceeded"}}', { 'retry-after': '3' });
    expect([e429.status, e429.type, e429.retryAfter, e429.message]).toEqual([429, 'rate_limit_exceeded', 3, 'Slow down']);
    const ctxLen = openaiChatAdapter.parseError(400, '{"error":{"message":"too long","code":"context_length_exceeded"}}', {});
    expect([ctxLen.status, ctxLen.type]).toEqual([400, 'context_length_exceeded']);
    expect(openaiChatAdapter.parseError(500, 'oops', {}).status).toBe(502);
    expect(openaiChatAdapter.parseError(401, '{}', {}).type).toBe('authentication');
    expect(openaiChatAdapter.parseError(504, '', {}).status).toBe(524);
  });
});

describe('chat stream → IR events', () => {
  const stream = fx('chat-stream.sse');
  const EXPECTED: IrStreamEvent[] = [
    { type: 'start', id: 'chatcmpl-123', model: 'gpt-4o-mini' },
    { type: 'text_delta', index: 0, text: 'Hello' },
    { type: 'text_delta', index: 0, text: '!' },
    { type: 'text_delta', index: 0, text: ' How can I assist you today?' },
    { type: 'part_end', index: 0 },
    { type: 'finish', finish_reason: 'stop', native_finish_reason: 'stop' },
    { type: 'usage', usage: { input: 19, output: 10, cache_read: 0, cache_write: 0, reasoning: 0 } },
  ];

  it.each(chunkings(stream))('docs stream, $name chunks → identical IR events', ({ parts }) => {
    expect(decode(openaiChatAdapter.createStreamDecoder(), parts)).toEqual(EXPECTED);
  });

  it('CRLF line endings and keep-alive comments are handled', () => {
    const crlf = ': OPENROUTER PROCESSING\r\n\r\n' + stream.replace(/\n/g, '\r\n');
    for (const { parts } of chunkings(crlf)) expect(decode(new ChatStreamDecoder(), parts)).toEqual(EXPECTED);
  });

  it('usage-only chunk with empty choices gives the usage event (once, at [DONE])', () => {
    const s =
      'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}],"usage":null}\n\n' +
      'data: {"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":0}}}\n\n' +
      'data: [DONE]\n\n';
    const ev = decode(new ChatStreamDecoder(), [s]);
    expect(ev.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: { input: 5, output: 1, cache_read: 2, cache_write: 0, reasoning: 0 } }]);
    expect(ev.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'length', native_finish_reason: 'length' });
  });

  it('a stream cut before [DONE] makes end() throw a 502', () => {
    for (const cut of [stream.indexOf('data: [DONE]'), stream.indexOf('"finish_reason":"stop"'), 10, 0]) {
      const d = new ChatStreamDecoder();
      d.push(stream.slice(0, cut));
      expect(() => d.end()).toThrowError(UpstreamError);
      try {
        d.end();
      } catch (e) {
        expect((e as UpstreamError).status).toBe(502);
      }
    }
  });

  it('[DONE] without the final blank line still completes', () => {
    const ev = decode(new ChatStreamDecoder(), [stream.trimEnd()]);
    expect(ev).toEqual(EXPECTED);
  });

  it('[DONE] without a finish_reason chunk still finishes', () => {
    const ev = decode(new ChatStreamDecoder(), ['data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n']);
    expect(ev.slice(-2)).toEqual([
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: null },
    ]);
  });

  it('an in-stream error becomes an IR error event and ends decoding', () => {
    const s =
      'data: {"id":"c","choices":[{"index":0,"delta":{"content":"partial"}}]}\n\n' +
      'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n' +
      'data: {"id":"c","choices":[{"index":0,"delta":{"content":"ignored"}}]}\n\n';
    for (const { parts } of chunkings(s)) {
      const ev = decode(new ChatStreamDecoder(), parts);
      expect(ev.slice(1)).toEqual([
        { type: 'text_delta', index: 0, text: 'partial' },
        {
          type: 'error',
          status: 502,
          message: 'The server had an error while processing your request.',
          error_type: 'provider_unavailable',
          raw: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } },
        },
      ]);
    }
    const rl = decode(new ChatStreamDecoder(), ['data: {"error":{"message":"Rate limit","code":429}}\n\n']);
    expect(rl[0]).toMatchObject({ type: 'error', status: 429, error_type: 'rate_limit_exceeded' });
  });

  it('invalid JSON in an event throws a 502', () => {
    const d = new ChatStreamDecoder();
    expect(() => d.push('data: {"id":\n\n')).toThrowError(/invalid stream event/);
  });

  it('docs tool-call stream: argument pieces reassemble at every chunking', () => {
    const s = fx('chat-stream-tool-calls.sse');
    let first: IrStreamEvent[] | null = null;
    for (const { parts } of chunkings(s)) {
      const ev = decode(new ChatStreamDecoder(), parts);
      first ??= ev;
      expect(ev).toEqual(first);
      expect(assemble(ev)).toEqual([{ type: 'tool_call', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', arguments: '{"location":"Paris, France"}' }]);
    }
    expect(first!.filter((e) => e.type === 'tool_call_start')).toEqual([{ type: 'tool_call_start', index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather' }]);
    expect(first!.filter((e) => e.type === 'tool_call_delta')).toHaveLength(7);
    expect(first!.at(-1)).toEqual({ type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_calls' });
  });

  it('parallel tool calls interleaved by index; name arriving after arguments is buffered', () => {
    const chunk = (tc: object[], finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: tc }, finish_reason: finish }] })}\n\n`;
    const s =
      chunk([{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x"' } }]) +
      chunk([{ index: 1, id: 'call_b', type: 'function', function: { arguments: '{"y"' } }]) +
      chunk([{ index: 0, function: { arguments: ':1}' } }]) +
      chunk([{ index: 1, function: { name: 'b', arguments: ':2' } }]) +
      chunk([{ index: 1, function: { arguments: '}' } }]) +
      'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    for (const { parts } of chunkings(s)) {
      expect(assemble(decode(new ChatStreamDecoder(), parts))).toEqual([
        { type: 'tool_call', id: 'call_a', name: 'a', arguments: '{"x":1}' },
        { type: 'tool_call', id: 'call_b', name: 'b', arguments: '{"y":2}' },
      ]);
    }
  });

  it('reasoning deltas from reasoning, reasoning_content and reasoning_details (signature, encrypted)', () => {
    const c = (delta: object) => `data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta }] })}\n\n`;
    const viaReasoning = c({ reasoning: 'Think ' }) + c({ reasoning: 'hard.' }) + c({ content: 'Answer' }) + 'data: [DONE]\n\n';
    const viaContent = c({ reasoning_content: 'Think ' }) + c({ reasoning_content: 'hard.' }) + c({ content: 'Answer' }) + 'data: [DONE]\n\n';
    for (const s of [viaReasoning, viaContent]) {
      expect(assemble(decode(new ChatStreamDecoder(), [s]))).toEqual([
        { type: 'reasoning', text: 'Think hard.' },
        { type: 'text', text: 'Answer' },
      ]);
    }
    // OpenRouter sends `reasoning` and `reasoning_details` together: the details win, nothing is doubled.
    const details =
      c({ reasoning: 'Think ', reasoning_details: [{ type: 'reasoning.text', text: 'Think ', index: 0, format: 'anthropic-claude-v1' }] }) +
      c({ reasoning: 'hard.', reasoning_details: [{ type: 'reasoning.text', text: 'hard.', index: 0 }] }) +
      c({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'sig==', index: 0 }] }) +
      c({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'REDACTED', index: 1 }] }) +
      c({ content: 'Answer' }) +
      'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
    for (const { parts } of chunkings(details)) {
      const ev = decode(new ChatStreamDecoder(), parts);
      expect(assemble(ev)).toEqual([
        { type: 'reasoning', text: 'Think hard.', signature: 'sig==' },
        { type: 'redacted_reasoning', data: 'REDACTED' },
        { type: 'text', text: 'Answer' },
      ]);
      expect(ev.filter((e) => e.type === 'part_end').map((e) => (e as { index: number }).index)).toEqual([0, 1, 2]);
    }
  });

  it('the stream and the non-stream answer give the same parts', () => {
    const full = openaiChatAdapter.parseResponse(
      JSON.stringify({
        id: 'c',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello! How can I assist you today?', tool_calls: [{ id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    const text = assemble(decode(new ChatStreamDecoder(), [fx('chat-stream.sse')]));
    const tools = assemble(decode(new ChatStreamDecoder(), [fx('chat-stream-tool-calls.sse')]));
    expect([...text, ...tools]).toEqual(full.content);
  });
});

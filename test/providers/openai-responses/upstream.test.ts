/**
 * OpenAI Responses API as an upstream protocol: IR → request body, response objects (docs fixtures, see
 * fixtures/README.md) → IR, typed SSE events → IR events at every chunking, errors.
 */
import { describe, expect, it } from 'vitest';
import type { IrRequest, IrStreamEvent } from '../../../src/core/ir.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { buildResponsesBody, openaiResponsesAdapter, ResponsesStreamDecoder } from '../../../src/providers/openai-responses/index.js';
import { assemble, chunkings, ctx, decode, fixture } from '../openai/util.js';

const fx = (name: string) => fixture('openai-responses', name);
const base = (over: Partial<IrRequest> = {}): IrRequest => ({ model: 'o4-mini', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, ...over });

function expectUpstreamError(fn: () => unknown, status: number, match?: RegExp): UpstreamError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UpstreamError);
    expect((e as UpstreamError).status).toBe(status);
    if (match) expect((e as UpstreamError).message).toMatch(match);
    return e as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

describe('IR → Responses request', () => {
  it('maps instructions, input items, tools and parameters', () => {
    const req: IrRequest = {
      model: 'o4-mini',
      system: [{ type: 'text', text: 'Be terse.' }, { type: 'text', text: 'Use metric units.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }, { type: 'image', url: 'https://example.com/a.png', detail: 'high' }, { type: 'image', data: 'AAAA', media_type: 'image/jpeg' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: '**Planning**', summary: true },
            { type: 'reasoning', text: '**Checking**', summary: true },
            { type: 'redacted_reasoning', data: 'gAAAAABenc' },
            { type: 'reasoning', text: 'Foreign thinking without encrypted content.', signature: 'sig' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_call_id: 'call_1', content: '18C' },
            { type: 'tool_result', tool_call_id: 'call_2', content: [{ type: 'text', text: 'chart' }, { type: 'image', url: 'https://example.com/c.png' }] },
            { type: 'text', text: 'Summarize.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'refusal', text: 'No.' }] },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'strict_fn', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
      ],
      tool_choice: { type: 'tool', name: 'get_weather' },
      parallel_tool_calls: true,
      max_tokens: 2048,
      temperature: 0.3,
      top_p: 0.8,
      top_k: 5,
      seed: 1,
      stop: ['x'],
      frequency_penalty: 1,
      presence_penalty: 1,
      response_format: { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true },
      reasoning: { effort: 'high', summary: 'auto' },
      user: 'u-1',
      stream: true,
    };
    expect(buildResponsesBody(req)).toEqual({
      model: 'o4-mini',
      instructions: 'Be terse.\n\nUse metric units.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather in Paris?' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
            { type: 'input_image', image_url: 'data:image/jpeg;base64,AAAA', detail: 'auto' },
          ],
        },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: '**Planning**' }, { type: 'summary_text', text: '**Checking**' }], encrypted_content: 'gAAAAABenc' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18C' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'chart' },
            { type: 'input_image', image_url: 'https://example.com/c.png', detail: 'auto' },
          ],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Summarize.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      ],
      tools: [
        { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
        { type: 'function', name: 'strict_fn', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: true,
      max_output_tokens: 2048,
      temperature: 0.3,
      top_p: 0.8,
      text: { format: { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true } },
      reasoning: { effort: 'high', summary: 'auto' },
      user: 'u-1',
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
  });

  it('reasoning off: no include, no reasoning object; effort none; simple choices and formats', () => {
    const plain = buildResponsesBody(base());
    expect(plain).toEqual({ model: 'o4-mini', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }], store: false });
    expect(buildResponsesBody(base({ reasoning: { effort: 'none', summary: 'auto' } }))).toMatchObject({ reasoning: { effort: 'none' } });
    expect(buildResponsesBody(base({ reasoning: { effort: 'none' } })).include).toBeUndefined();
    expect(buildResponsesBody(base({ reasoning: { enabled: true } })).include).toEqual(['reasoning.encrypted_content']);
    expect(buildResponsesBody(base({ reasoning: { effort: 'max' } })).reasoning).toEqual({ effort: 'xhigh' });
    expect(buildResponsesBody(base({ tool_choice: { type: 'required' } })).tool_choice).toBe('required');
    expect(buildResponsesBody(base({ response_format: { type: 'json_object' } })).text).toEqual({ format: { type: 'json_object' } });
  });

  it('HTTP request: POST {baseUrl}/responses with the OpenAI headers', () => {
    const r = openaiResponsesAdapter.buildRequest(base({ stream: true }), ctx({ protocol: 'openai-responses' }));
    expect(r.url.href).toBe('https://api.openai.example/v1/responses');
    expect(r.headers).toMatchObject({ authorization: 'Bearer sk-test', accept: 'text/event-stream', 'content-type': 'application/json' });
    expect(JSON.parse(r.body)).toMatchObject({ model: 'o4-mini', stream: true, store: false });
    expect(openaiResponsesAdapter.protocol).toBe('openai-responses');
  });
});

describe('Responses object → IR', () => {
  it('docs response object (text)', () => {
    expect(openaiResponsesAdapter.parseResponse(fx('response-text.json'))).toEqual({
      id: 'resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41',
      model: 'gpt-4o-2024-08-06',
      content: [
        {
          type: 'text',
          text: 'The image depicts a scenic landscape with a wooden boardwalk or pathway leading through lush, green grass under a blue sky with some clouds. The setting suggests a peaceful natural area, possibly a park or nature reserve. There are trees and shrubs in the background.',
        },
      ],
      finish_reason: 'stop',
      native_finish_reason: 'completed',
      usage: { input: 328, output: 52, cache_read: 0, cache_write: 0, reasoning: 0 },
      service_tier: null,
      system_fingerprint: null,
    });
  });

  it('function call: call_id is the tool call id, finish tool_calls, cached tokens', () => {
    const r = openaiResponsesAdapter.parseResponse(fx('response-function-call.json'));
    expect(r.content).toEqual([{ type: 'tool_call', id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' }]);
    expect(r.finish_reason).toBe('tool_calls');
    expect(r.usage).toEqual({ input: 291, output: 23, cache_read: 256, cache_write: 0, reasoning: 0 });
  });

  it('reasoning: summary parts, then the encrypted content as redacted reasoning; reasoning tokens', () => {
    const r = openaiResponsesAdapter.parseResponse(fx('response-reasoning.json'));
    expect(r.content).toEqual([
      { type: 'reasoning', text: "**Determining the best bash script for matrix transposition**\n\nThe user is asking for a bash script to transpose a matrix formatted as '[1,2],[3,4],[5,6]'.", summary: true },
      { type: 'reasoning', text: '**Considering edge cases**\n\nI should handle whitespace and empty input.', summary: true },
      { type: 'redacted_reasoning', data: 'gAAAAABoISQ24OyVRYbkYfukdOPjzAi5Pmh6FgMVm8...' },
      { type: 'text', text: "Here's a self-contained Bash script that transposes a matrix." },
    ]);
    expect(r.usage).toEqual({ input: 75, output: 1186, cache_read: 0, cache_write: 0, reasoning: 1024 });
  });

  it('round trip: parsed reasoning answer → next request replays the reasoning item and the message', () => {
    const r = openaiResponsesAdapter.parseResponse(fx('response-reasoning.json'));
    const body = buildResponsesBody(base({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Q' }] }, { role: 'assistant', content: r.content }], reasoning: { effort: 'medium' } }));
    expect((body.input as unknown[]).slice(1)).toEqual([
      {
        type: 'reasoning',
        summary: [
          { type: 'summary_text', text: "**Determining the best bash script for matrix transposition**\n\nThe user is asking for a bash script to transpose a matrix formatted as '[1,2],[3,4],[5,6]'." },
          { type: 'summary_text', text: '**Considering edge cases**\n\nI should handle whitespace and empty input.' },
        ],
        encrypted_content: 'gAAAAABoISQ24OyVRYbkYfukdOPjzAi5Pmh6FgMVm8...',
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: "Here's a self-contained Bash script that transposes a matrix." }] },
    ]);
  });

  it('incomplete (max_output_tokens) → length; content_filter; failed → throws; invalid → 502', () => {
    const inc = openaiResponsesAdapter.parseResponse(fx('response-incomplete.json'));
    expect([inc.finish_reason, inc.native_finish_reason, inc.content]).toEqual(['length', 'max_output_tokens', []]);
    expect(inc.usage?.reasoning).toBe(300);
    const cf = openaiResponsesAdapter.parseResponse(JSON.stringify({ id: 'r', status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] }));
    expect(cf.finish_reason).toBe('content_filter');
    expectUpstreamError(() => openaiResponsesAdapter.parseResponse(JSON.stringify({ id: 'r', status: 'failed', error: { code: 'server_error', message: 'The model failed to generate a response.' }, output: [] })), 502, /failed to generate/);
    expectUpstreamError(() => openaiResponsesAdapter.parseResponse(JSON.stringify({ id: 'r', status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow' }, output: [] })), 429);
    expectUpstreamError(() => openaiResponsesAdapter.parseResponse('{'), 502, /non-JSON/);
    expectUpstreamError(() => openaiResponsesAdapter.parseResponse('{"id":"r"}'), 502, /no output/);
  });

  it('refusal and reasoning_text content', () => {
    const r = openaiResponsesAdapter.parseResponse(
      JSON.stringify({
        id: 'r',
        status: 'completed',
        output: [
          { id: 'rs', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'raw thinking' }] },
          { id: 'm', type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }] },
          { id: 'ws', type: 'web_search_call', status: 'completed' },
        ],
      }),
    );
    expect(r.content).toEqual([
      { type: 'reasoning', text: 'raw thinking' },
      { type: 'refusal', text: "I'm sorry, I can't help with that." },
    ]);
  });

  it('parseError follows the OpenAI mapping', () => {
    const e = openaiResponsesAdapter.parseError(429, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}', { 'retry-after': '2' });
    expect([e.status, e.type, e.retryAfter]).toEqual([429, 'rate_limit_exceeded', 2]);
    expect(openaiResponsesAdapter.parseError(400, '{"error":{"message":"Bad","type":"invalid_request_error","code":null}}', {}).status).toBe(400);
    expect(openaiResponsesAdapter.parseError(503, '', {}).status).toBe(502);
  });
});

describe('Responses stream → IR events', () => {
  const TEXT_EVENTS: IrStreamEvent[] = [
    { type: 'start', id: 'resp_67ccfcdd16748190a91872c75d38539e09e4d4aac714747c', model: 'gpt-4o-2024-08-06' },
    ...['Hi', ' there', '!', ' How', ' can', ' I', ' assist', ' you', ' today', '?'].map((text) => ({ type: 'text_delta' as const, index: 0, text })),
    { type: 'part_end', index: 0 },
    { type: 'finish', finish_reason: 'stop', native_finish_reason: 'completed' },
    { type: 'usage', usage: { input: 37, output: 11, cache_read: 0, cache_write: 0, reasoning: 0 } },
  ];

  it.each(chunkings(fx('stream-text.sse')))('docs text stream, $name chunks → identical IR events', ({ parts }) => {
    expect(decode(openaiResponsesAdapter.createStreamDecoder(), parts)).toEqual(TEXT_EVENTS);
  });

  it('docs function-call stream: arguments streamed in pieces reassemble at every chunking', () => {
    for (const { parts } of chunkings(fx('stream-function-call.sse'))) {
      const ev = decode(new ResponsesStreamDecoder(), parts);
      expect(ev[0]).toEqual({ type: 'start', id: 'resp_1234xyz', model: 'gpt-4.1-2025-04-14' });
      expect(ev[1]).toEqual({ type: 'tool_call_start', index: 0, id: 'call_1234xyz', name: 'get_weather' });
      expect(ev.filter((e) => e.type === 'tool_call_delta')).toHaveLength(7);
      expect(assemble(ev)).toEqual([{ type: 'tool_call', id: 'call_1234xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' }]);
      expect(ev.slice(-3)).toEqual([
        { type: 'part_end', index: 0 },
        { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'completed' },
        { type: 'usage', usage: { input: 64, output: 18, cache_read: 0, cache_write: 0, reasoning: 0 } },
      ]);
    }
  });

  it('custom (free-form) and namespaced tool calls: arguments {"input": …} with the namespace, plain and streamed', () => {
    const input = 'say("a \\"quoted\\" 😀")\n';
    const call = { id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_c1', name: 'exec', namespace: 'functions', input, status: 'completed' };
    const usage = { input_tokens: 10, output_tokens: 5 };
    const r = openaiResponsesAdapter.parseResponse(JSON.stringify({ id: 'resp_c', object: 'response', status: 'completed', model: 'gpt-6.1-sol', output: [call], usage }));
    expect(r.content).toEqual([{ type: 'tool_call', id: 'call_c1', name: 'exec', namespace: 'functions', arguments: JSON.stringify({ input }) }]);
    expect(r.finish_reason).toBe('tool_calls');
    const fn = openaiResponsesAdapter.parseResponse(JSON.stringify({ id: 'resp_f', status: 'completed', output: [{ type: 'function_call', call_id: 'call_f', name: 'read', namespace: 'fs', arguments: '{}' }], usage }));
    expect(fn.content).toEqual([{ type: 'tool_call', id: 'call_f', name: 'read', namespace: 'fs', arguments: '{}' }]);
    // Streamed in pieces (the emoji's surrogate pair split across two deltas): the arguments parse to the same input.
    const cut = input.indexOf('😀') + 1; // inside the pair
    const deltas = [input.slice(0, 5), input.slice(5, cut), input.slice(cut)];
    expect(deltas.join('')).toBe(input);
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const sse = [
      ev('response.created', { response: { id: 'resp_s', model: 'gpt-6.1-sol', status: 'in_progress', output: [] } }),
      ev('response.output_item.added', { output_index: 0, item: { ...call, status: 'in_progress', input: '' } }),
      ...deltas.map((delta) => ev('response.custom_tool_call_input.delta', { output_index: 0, item_id: 'ctc_1', delta })),
      ev('response.custom_tool_call_input.done', { output_index: 0, item_id: 'ctc_1', input }),
      ev('response.output_item.done', { output_index: 0, item: call }),
      ev('response.completed', { response: { id: 'resp_s', model: 'gpt-6.1-sol', status: 'completed', output: [call], usage } }),
    ].join('');
    for (const { parts } of chunkings(sse)) {
      const events = decode(new ResponsesStreamDecoder(), parts);
      expect(events[1]).toEqual({ type: 'tool_call_start', index: 0, id: 'call_c1', name: 'exec', namespace: 'functions' });
      const args = events.filter((e) => e.type === 'tool_call_delta').map((e) => (e as { arguments: string }).arguments).join('');
      expect(JSON.parse(args)).toEqual({ input });
      expect(events.find((e) => e.type === 'finish')).toMatchObject({ finish_reason: 'tool_calls' });
    }
  });

  it('reasoning summary deltas, encrypted content on output_item.done, then text', () => {
    for (const { parts } of chunkings(fx('stream-reasoning.sse'))) {
      const ev = decode(new ResponsesStreamDecoder(), parts);
      expect(assemble(ev)).toEqual([
        {
          type: 'reasoning',
          text: "**Responding to a greeting**\n\nThe user just said, \"Hello!\" So, it seems I need to engage. I'll greet them back and offer help since they're looking to chat. I could ask whether they need assistance or just want to talk. I'll keep it friendly and open-ended.",
        },
        { type: 'redacted_reasoning', data: 'gAAAAABoBr_KencryptedExample==' },
        { type: 'text', text: 'Hello! How can I help you today?' },
      ]);
      expect(ev.filter((e) => e.type === 'part_end')).toEqual([
        { type: 'part_end', index: 0 },
        { type: 'part_end', index: 1 },
        { type: 'part_end', index: 2 },
      ]);
      expect(ev.at(-1)).toEqual({ type: 'usage', usage: { input: 8, output: 140, cache_read: 0, cache_write: 0, reasoning: 128 } });
    }
  });

  it('response.failed and error events become IR error events; end() does not throw after them', () => {
    const failed = decode(new ResponsesStreamDecoder(), [fx('stream-failed.sse')]);
    expect(failed[1]).toMatchObject({ type: 'error', status: 502, message: 'The model failed to generate a response.', error_type: 'provider_unavailable' });
    const err = decode(new ResponsesStreamDecoder(), [fx('stream-error.sse')]);
    expect(err[1]).toMatchObject({ type: 'error', status: 502, message: 'Something went wrong' });
    const rl = decode(new ResponsesStreamDecoder(), ['event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}\n\n']);
    expect(rl).toMatchObject([{ type: 'error', status: 429, error_type: 'rate_limit_exceeded' }]);
  });

  it('a stream cut before response.completed makes end() throw a 502', () => {
    const s = fx('stream-text.sse');
    for (const cut of [s.indexOf('event: response.completed'), s.indexOf('response.output_text.done'), 5]) {
      const d = new ResponsesStreamDecoder();
      d.push(s.slice(0, cut));
      expectUpstreamError(() => d.end(), 502, /ended before completion/);
    }
  });

  it('response.incomplete → finish length; unknown events ignored; output only in the final response is still emitted', () => {
    const s = [
      { type: 'response.created', response: { id: 'r1', model: 'm' } },
      { type: 'response.some_future_event', foo: 1 },
      { type: 'response.output_text.annotation.added', item_id: 'x', output_index: 0 },
      {
        type: 'response.incomplete',
        response: {
          id: 'r1',
          status: 'incomplete',
          incomplete_details: { reason: 'max_output_tokens' },
          output: [{ id: 'm1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Partial ans' }] }],
          usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 1, cache_write_tokens: 2 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 } },
        },
      },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('');
    expect(decode(new ResponsesStreamDecoder(), [s])).toEqual([
      { type: 'start', id: 'r1', model: 'm' },
      { type: 'text_delta', index: 0, text: 'Partial ans' },
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'length', native_finish_reason: 'max_output_tokens' },
      { type: 'usage', usage: { input: 5, output: 3, cache_read: 1, cache_write: 2, reasoning: 0 } },
    ]);
  });

  it('data-only events (no event: line) and a trailing [DONE] are accepted; invalid JSON throws', () => {
    const s = fx('stream-text.sse').replace(/^event: .*\n/gm, '') + 'data: [DONE]\n\n';
    expect(decode(new ResponsesStreamDecoder(), [s])).toEqual(TEXT_EVENTS);
    expect(() => new ResponsesStreamDecoder().push('event: response.created\ndata: {oops\n\n')).toThrowError(/invalid stream event/);
  });

  it('the stream and the non-stream answer give the same parts', () => {
    const full = openaiResponsesAdapter.parseResponse(JSON.stringify(JSON.parse(fx('stream-reasoning.sse').split('\n').filter((l) => l.includes('"response.completed"'))[0].slice(6)).response));
    const streamed = assemble(decode(new ResponsesStreamDecoder(), [fx('stream-reasoning.sse')]));
    // The stream has no summary marker; otherwise identical.
    expect(streamed).toEqual(full.content.map((p) => (p.type === 'reasoning' ? { type: 'reasoning', text: p.text } : p)));
  });
});

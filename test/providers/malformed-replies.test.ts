/**
 * Malformed upstream replies, per protocol: a body or a stream event whose fields have the wrong type, JSON that is
 * not JSON, a stream cut short — each is an UpstreamError 502 naming what was wrong (never a TypeError, never a
 * silently wrong answer). The schemas are in src/providers/<protocol>/schemas.ts, the check in wire-schema.ts.
 */
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import type { UpstreamAdapter } from '../../src/core/adapters.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import { openaiChatAdapter } from '../../src/providers/openai/ir-upstream.js';
import { anthropicAdapter } from '../../src/providers/anthropic/index.js';
import { googleAdapter } from '../../src/providers/google/index.js';
import { openaiResponsesAdapter } from '../../src/providers/openai-responses/index.js';
import { Count, expected, fieldPath, Opt, wireCheck } from '../../src/providers/wire-schema.js';

function upstreamError(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UpstreamError);
    return e as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

function expect502(fn: () => unknown, message: string | RegExp): void {
  const e = upstreamError(fn);
  expect(e.status).toBe(502);
  expect(e.type).toBe('provider_unavailable');
  if (typeof message === 'string') expect(e.message).toBe(message);
  else expect(e.message).toMatch(message);
}

const sse = (events: unknown[], named = false): string =>
  events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

/** Feeds a whole body to a fresh decoder, then ends it. */
const decode = (a: UpstreamAdapter, body: string) => () => {
  const d = a.createStreamDecoder();
  d.push(body);
  d.end();
};

describe('wire schema check', () => {
  const check = wireCheck(Type.Object({ items: Type.Array(Type.Object({ n: Count, s: Opt(Type.String()) })) }), 'thing');

  it('names the field, what it must be and what came', () => {
    expect502(() => check({ items: [{ n: 1 }, { n: 'x' }] }), 'Provider returned an invalid thing: items[1].n must be a number or null (got "x")');
    expect502(() => check({}), 'Provider returned an invalid thing: items is missing');
    expect502(() => check({ items: {} }), 'Provider returned an invalid thing: items must be an array (got an object)');
    expect502(() => check({ items: [{ s: 3 }] }, 'wrapper'), 'Provider returned an invalid thing: wrapper.items[0].s must be a string or null (got 3)');
  });

  it('lets unknown fields and nulls through and returns the value', () => {
    const v = { items: [{ n: null, s: null, extra: [1] }], more: true };
    expect(check(v)).toBe(v);
  });

  it('paths and expectations in words', () => {
    expect(fieldPath('/choices/0/message/tool_calls/2/function')).toBe('choices[0].message.tool_calls[2].function');
    expect(fieldPath('/a~1b')).toBe('a/b');
    expect(expected(Type.Union([Type.Integer(), Type.Boolean(), Type.Null()]))).toBe('an integer or a boolean or null');
  });
});

describe('OpenAI chat completions', () => {
  const a = openaiChatAdapter;
  const chunk = (extra: Record<string, unknown>) => ({ id: 'c', object: 'chat.completion.chunk', model: 'm', ...extra });

  it('a reply with wrong types is a 502 naming the field', () => {
    expect502(() => a.parseResponse(JSON.stringify({ choices: [{ message: { content: 42 } }] })), 'Provider returned an invalid response: choices[0].message.content must be a string or an array or null (got 42)');
    expect502(() => a.parseResponse(JSON.stringify({ choices: [{ message: { content: 'hi' } }], usage: { prompt_tokens: '12', completion_tokens: 3 } })), /usage\.prompt_tokens must be a number or null \(got "12"\)/);
    expect502(() => a.parseResponse(JSON.stringify({ choices: [{ message: { tool_calls: [{ function: 'get_weather' }] } }] })), /choices\[0\]\.message\.tool_calls\[0\]\.function must be an object or null/);
    expect502(() => a.parseResponse(JSON.stringify({ choices: ['x'] })), /choices\[0\] must be an object/);
  });

  it('stream events with wrong types, invalid JSON and a cut stream are 502s', () => {
    expect502(decode(a, sse([chunk({ choices: [{ index: 0, delta: { content: ['not', 'parts'], tool_calls: 'x' } }] })])), /stream event: choices\[0\]\.delta\.tool_calls must be an array or null \(got "x"\)/);
    expect502(decode(a, sse([chunk({ choices: 'none' })])), /stream event: choices must be an array or null/);
    expect502(decode(a, sse([chunk({ choices: [] , usage: { completion_tokens: true } })])), /usage\.completion_tokens must be a number or null \(got true\)/);
    expect502(decode(a, 'data: {"choices":[{"delta":\n\n'), 'Provider sent an invalid stream event');
    expect502(decode(a, sse([chunk({ choices: [{ index: 0, delta: { content: 'Hel' } }] })])), 'Provider stream ended before completion');
  });
});

describe('Anthropic Messages', () => {
  const a = anthropicAdapter;
  const msg = (extra: Record<string, unknown>) => JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 }, ...extra });

  it('a message with wrong types is a 502 naming the field', () => {
    expect502(() => a.parseResponse(msg({ content: [{ type: 'text', text: 7 }] })), 'Provider returned an invalid response: content[0].text must be a string (got 7)');
    expect502(() => a.parseResponse(msg({ content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 'tu', input: {} }] })), 'Provider returned an invalid response: content[1].name is missing');
    expect502(() => a.parseResponse(msg({ content: [{ text: 'no type' }] })), /content\[0\]\.type is missing/);
    expect502(() => a.parseResponse(msg({ content: [], usage: { input_tokens: '5' } })), /usage\.input_tokens must be a number or null/);
    // Block types added later pass untouched.
    expect(a.parseResponse(msg({ content: [{ type: 'future_block', text: 1 }, { type: 'text', text: 'ok' }] })).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('stream events with wrong types, invalid JSON and a cut stream are 502s', () => {
    const start = { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 3, output_tokens: 0 } } };
    expect502(decode(a, sse([start, { type: 'content_block_start', index: 'zero', content_block: { type: 'text', text: '' } }], true)), /stream event: content_block_start\.index must be an integer \(got "zero"\)/);
    expect502(
      decode(a, sse([start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: null } }], true)),
      'Provider returned an invalid stream event: content_block_delta.delta.text must be a string (got null)',
    );
    expect502(decode(a, sse([start, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 'many' } }], true)), /message_delta\.usage\.output_tokens must be a number or null/);
    expect502(decode(a, sse([{ type: 'message_start', message: 'hi' }], true)), /message_start\.message must be an object \(got "hi"\)/);
    expect502(decode(a, 'event: message_start\ndata: {"type":"message_start",\n\n'), 'Provider sent an invalid stream event');
    expect502(decode(a, sse([start], true)), 'Provider stream ended before message_stop');
  });
});

describe('Google Gemini', () => {
  const a = googleAdapter;

  it('an answer with wrong types is a 502 naming the field', () => {
    expect502(() => a.parseResponse(JSON.stringify({ candidates: [{ content: { parts: [{ text: 1 }] }, finishReason: 'STOP' }] })), 'Provider returned an invalid response: candidates[0].content.parts[0].text must be a string or null (got 1)');
    expect502(() => a.parseResponse(JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] })), /candidates\[0\]\.content\.parts\[0\]\.functionCall\.name is missing/);
    expect502(() => a.parseResponse(JSON.stringify({ candidates: {}, usageMetadata: {} })), /candidates must be an array or null \(got an object\)/);
    expect502(() => a.parseResponse(JSON.stringify({ candidates: [{ content: { parts: [] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: '4' } })), /usageMetadata\.promptTokenCount must be a number or null/);
  });

  it('stream chunks with wrong types, invalid JSON and a cut stream are 502s', () => {
    expect502(decode(a, sse([{ candidates: [{ content: { parts: 'text' } }] }])), 'Provider returned an invalid stream event: candidates[0].content.parts must be an array or null (got "text")');
    expect502(decode(a, sse([{ candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 3 }] }])), /candidates\[0\]\.finishReason must be a string or null \(got 3\)/);
    expect(upstreamError(decode(a, 'data: {"candidates":[{"content":\n\n')).status).toBe(502);
    expect502(decode(a, sse([{ candidates: [{ content: { parts: [{ text: 'a' }] } }] }])), 'Provider stream ended before a finishReason');
  });
});

describe('OpenAI Responses', () => {
  const a = openaiResponsesAdapter;
  const resp = (extra: Record<string, unknown>) => JSON.stringify({ id: 'resp_1', object: 'response', model: 'm', status: 'completed', ...extra });

  it('a response with wrong types is a 502 naming the field', () => {
    expect502(() => a.parseResponse(resp({ output: [{ type: 'message', content: [{ type: 'output_text', text: ['a'] }] }] })), 'Provider returned an invalid response: output[0].content[0].text must be a string or null (got an array)');
    expect502(() => a.parseResponse(resp({ output: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] })), 'Provider returned an invalid response: output[0].name is missing');
    expect502(() => a.parseResponse(resp({ output: [], usage: { input_tokens: 1, output_tokens_details: { reasoning_tokens: '2' } } })), /usage\.output_tokens_details\.reasoning_tokens must be a number or null/);
    expect502(() => a.parseResponse(resp({ output: [{ id: 'no type' }] })), /output\[0\]\.type is missing/);
  });

  it('stream events with wrong types, invalid JSON and a cut stream are 502s', () => {
    const created = { type: 'response.created', response: { id: 'resp_1', model: 'm' } };
    expect502(decode(a, sse([created, { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 5 }], true)), 'Provider returned an invalid stream event: response.output_text.delta.delta must be a string (got 5)');
    expect502(decode(a, sse([created, { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'c', name: 9 } }], true)), /response\.output_item\.added\.item\.name must be a string \(got 9\)/);
    expect502(decode(a, sse([created, { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 'x' } } }], true)), /response\.completed\.response\.usage\.input_tokens must be a number or null/);
    expect502(decode(a, 'event: response.created\ndata: {oops\n\n'), /invalid stream event/);
    expect502(decode(a, sse([created, { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hi' }], true)), 'Provider stream ended before completion');
  });
});

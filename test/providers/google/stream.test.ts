/**
 * Gemini adapter, stream decoding (`streamGenerateContent?alt=sse`): documented SSE bodies → IR events, identical
 * whatever the chunk boundaries; cut streams, in-stream errors and broken chunks.
 */
import { describe, expect, it } from 'vitest';
import type { IrStreamEvent } from '../../../src/core/ir.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { googleAdapter } from '../../../src/providers/google/index.js';
import { fixture, randomChunks } from './helpers.js';

function decode(pieces: string[]): IrStreamEvent[] {
  const d = googleAdapter.createStreamDecoder();
  const out: IrStreamEvent[] = [];
  for (const p of pieces) out.push(...d.push(p));
  out.push(...d.end());
  return out;
}

/** Concatenated deltas per index. */
function assemble(events: IrStreamEvent[]): Record<number, string> {
  const out: Record<number, string> = {};
  for (const e of events) {
    if (e.type === 'text_delta' || e.type === 'reasoning_delta') out[e.index] = (out[e.index] ?? '') + e.text;
    if (e.type === 'tool_call_delta') out[e.index] = (out[e.index] ?? '') + e.arguments;
  }
  return out;
}

const FIXTURES = ['stream-text.sse', 'thinking-function-call.sse', 'thinking-text-signature.sse'];

describe('stream decoding', () => {
  it('documented text stream: one text part, finish once at the end (finishReason repeated on every chunk)', () => {
    const events = decode([fixture('stream-text.sse')]);
    expect(events[0]).toEqual({ type: 'start', id: null, model: null });
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas).toHaveLength(6);
    expect(new Set(deltas.map((e) => e.index))).toEqual(new Set([0]));
    const text = assemble(events)[0];
    expect(text.startsWith('In the quaint, sunlit cottage')).toBe(true);
    expect(text.endsWith('for adventure stronger than ever.')).toBe(true);
    expect(text).toContain('"冒险伙伴"');
    expect(events.slice(-2)).toEqual([
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'STOP' },
    ]);
    expect(events.filter((e) => e.type === 'usage')).toHaveLength(0);
  });

  it('thoughts then a whole function call carrying its signature', () => {
    const events = decode([fixture('thinking-function-call.sse')]);
    expect(events).toEqual([
      { type: 'start', id: 'vqIpaYWMBqmFkdUP4-2bgAk', model: 'gemini-2.5-flash' },
      { type: 'reasoning_delta', index: 0, text: '**Checking the weather request**\n\nThe user wants the current weather in Paris, ' },
      { type: 'reasoning_delta', index: 0, text: 'so I should call `get_weather` with the city.' },
      { type: 'part_end', index: 0 },
      { type: 'reasoning_signature', index: 1, signature: 'CtMBAdHtim9PlaceholderSignatureB==', origin: 'google' },
      { type: 'part_end', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'call_vqIpaYWMBqmFkdUP4-2bgAk_0', name: 'get_weather' },
      { type: 'tool_call_delta', index: 2, arguments: '{"city":"Paris","unit":"celsius"}' },
      { type: 'part_end', index: 2 },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'STOP' },
      { type: 'usage', usage: { input: 74, output: 21 + 88, cache_read: 0, cache_write: 0, reasoning: 88 } },
    ]);
  });

  it('a signature on the empty text part of the last chunk becomes its own reasoning part; usage from the last chunk', () => {
    const events = decode([fixture('thinking-text-signature.sse')]);
    expect(events).toEqual([
      { type: 'start', id: 'vqIpaYWMBqmFkdUP4-2bgAk', model: 'gemini-2.5-flash' },
      { type: 'reasoning_delta', index: 0, text: 'Planning a short answer.' },
      { type: 'part_end', index: 0 },
      { type: 'text_delta', index: 1, text: 'Paris is ' },
      { type: 'text_delta', index: 1, text: 'the capital of France.' },
      { type: 'part_end', index: 1 },
      { type: 'reasoning_signature', index: 2, signature: 'EvsBAdHtim9PlaceholderSignatureC==', origin: 'google' },
      { type: 'part_end', index: 2 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'STOP' },
      { type: 'usage', usage: { input: 9, output: 51, cache_read: 4, cache_write: 0, reasoning: 44 } },
    ]);
  });

  it.each(FIXTURES)('%s: random chunk boundaries give identical events', (name) => {
    const text = fixture(name);
    const whole = decode([text]);
    for (let seed = 1; seed <= 40; seed++) expect(decode(randomChunks(text, seed, 1 + (seed % 7) * 9))).toEqual(whole);
    expect(decode([...text])).toEqual(whole); // one character at a time, including split CRLFs
  });

  it('accepts LF-only and CR-only line endings, comments and multi-line data', () => {
    const crlf = fixture('thinking-function-call.sse');
    const whole = decode([crlf]);
    expect(decode([crlf.replace(/\r\n/g, '\n')])).toEqual(whole);
    expect(decode([crlf.replace(/\r\n/g, '\r')])).toEqual(whole);
    expect(decode([': keep-alive\n\n' + crlf])).toEqual(whole);
    const multi = 'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]},\ndata: "finishReason":"STOP"}]}\n\n';
    expect(decode([multi]).filter((e) => e.type === 'text_delta' || e.type === 'finish')).toEqual([
      { type: 'text_delta', index: 0, text: 'hi' },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'STOP' },
    ]);
  });

  it('uses a complete last event that lacks its blank line', () => {
    const text = fixture('thinking-function-call.sse').replace(/\r\n\r\n$/, '');
    expect(decode([text])).toEqual(decode([fixture('thinking-function-call.sse')]));
  });

  it('a cut stream (no finishReason) makes end() throw a 502', () => {
    const text = fixture('thinking-function-call.sse');
    const cut = text.slice(0, text.lastIndexOf('data:'));
    const d = googleAdapter.createStreamDecoder();
    const events = d.push(cut);
    expect(events.some((e) => e.type === 'reasoning_delta')).toBe(true);
    expect(() => d.end()).toThrow(UpstreamError);
    const d2 = googleAdapter.createStreamDecoder();
    d2.push(text.slice(0, text.length - 40)); // inside the last event
    expect(() => d2.end()).toThrow(expect.objectContaining({ status: 502 }));
    expect(() => googleAdapter.createStreamDecoder().end()).toThrow(UpstreamError); // empty body
  });

  it('an error object in the stream → an IR error event, no finish, end() does not throw', () => {
    const text =
      'data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}]}\r\n\r\n' +
      'data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}\r\n\r\n';
    const events = decode([text]);
    expect(events).toEqual([
      { type: 'start', id: null, model: null },
      { type: 'text_delta', index: 0, text: 'Hel' },
      { type: 'part_end', index: 0 },
      {
        type: 'error',
        status: 529,
        message: 'The model is overloaded. Please try again later.',
        error_type: 'provider_overloaded',
        raw: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
      },
    ]);
    const internal = decode(['data: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}\n\n']);
    expect(internal).toEqual([expect.objectContaining({ type: 'error', status: 502, error_type: 'provider_unavailable' })]);
  });

  it('a broken chunk throws a 502', () => {
    const d = googleAdapter.createStreamDecoder();
    expect(() => d.push('data: {"candidates":[{"content":\n\n')).toThrow(expect.objectContaining({ status: 502 }));
  });

  it('a prompt blocked in a stream → content_filter finish', () => {
    const events = decode([`data: ${JSON.stringify(JSON.parse(fixture('prompt-blocked-response.json')))}\r\n\r\n`]);
    expect(events).toEqual([
      { type: 'start', id: null, model: null },
      { type: 'finish', finish_reason: 'content_filter', native_finish_reason: 'SAFETY' },
    ]);
  });

  it('MAX_TOKENS → length, and a candidate finishing for safety → content_filter', () => {
    const len = decode(['data: {"candidates":[{"content":{"parts":[{"text":"abc"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}\n\n']);
    expect(len.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'length', native_finish_reason: 'MAX_TOKENS' }]);
    const safety = decode([`data: ${JSON.stringify(JSON.parse(fixture('safety-candidate-response.json')))}\n\n`]);
    expect(safety.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'content_filter', native_finish_reason: 'SAFETY' }]);
  });
});

/**
 * Gemini adapter, non-streaming responses: documented GenerateContentResponse bodies → IR.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { googleAdapter, mapFinishReason, mapUsage } from '../../../src/providers/google/index.js';
import { fixture, fixtureJson } from './helpers.js';

const parse = (name: string) => googleAdapter.parseResponse(fixture(name));

describe('parseResponse', () => {
  it('text answer with usage, model version and response id (Firebase docs example)', () => {
    const r = parse('text-response.json');
    const doc = fixtureJson('text-response.json');
    expect(r.id).toBe('3w4Vad6yF-y1vdIP_q_zgAw');
    expect(r.model).toBe('gemini-3-flash-preview');
    expect(r.content).toEqual([{ type: 'text', text: doc.candidates[0].content.parts[0].text }]);
    expect(r.finish_reason).toBe('stop');
    expect(r.native_finish_reason).toBe('STOP');
    // Thoughts are counted apart by Gemini; IR output includes them.
    expect(r.usage).toEqual({ input: 34, output: 418 + 438, cache_read: 0, cache_write: 0, reasoning: 438 });
  });

  it('function call → tool_call with JSON arguments and a generated id; finish tool_calls', () => {
    const r = parse('function-call-response.json');
    expect(r.content).toEqual([{ type: 'tool_call', id: 'call_0', name: 'find_theaters', arguments: '{"movie":"Barbie","location":"Mountain View, CA"}' }]);
    expect(r.finish_reason).toBe('tool_calls');
    expect(r.native_finish_reason).toBe('STOP');
    expect(r.id).toBeNull();
    expect(r.usage).toBeNull();
  });

  it('parallel calls: ids from the response id, the signature on the first call kept before it', () => {
    const r = parse('parallel-calls-response.json');
    expect(r.content).toEqual([
      { type: 'reasoning', text: '', signature: '<Signature_A>', origin: 'google' },
      { type: 'tool_call', id: 'call_Xk0pabCDEfGh_0', name: 'get_current_temperature', arguments: '{"location":"Paris"}' },
      { type: 'tool_call', id: 'call_Xk0pabCDEfGh_1', name: 'get_current_temperature', arguments: '{"location":"London"}' },
    ]);
    expect(r.usage).toEqual({ input: 86, output: 104, cache_read: 0, cache_write: 0, reasoning: 74 });
  });

  it('ids are deterministic: the same body gives the same ids', () => {
    expect(parse('parallel-calls-response.json')).toEqual(parse('parallel-calls-response.json'));
  });

  it('thought summary → reasoning; the answer signature → a signed empty reasoning before the text', () => {
    const r = parse('thinking-response.json');
    const parts = fixtureJson('thinking-response.json').candidates[0].content.parts;
    expect(r.content).toEqual([
      { type: 'reasoning', text: parts[0].text },
      { type: 'reasoning', text: '', signature: parts[1].thoughtSignature, origin: 'google' },
      { type: 'text', text: parts[1].text },
    ]);
    expect(r.usage).toEqual({ input: 271, output: 154 + 968, cache_read: 0, cache_write: 0, reasoning: 968 });
  });

  it('cached content tokens → cache_read (input still includes them)', () => {
    const r = parse('cached-usage-response.json');
    expect(r.usage).toEqual({ input: 323388, output: 397, cache_read: 323383, cache_write: 0, reasoning: 0 });
    expect(r.content).toHaveLength(1);
  });

  it('a blocked prompt → content_filter, empty content, native block reason', () => {
    const r = parse('prompt-blocked-response.json');
    expect(r).toEqual({ id: null, model: null, content: [], finish_reason: 'content_filter', native_finish_reason: 'SAFETY', usage: null });
  });

  it('a candidate stopped for safety → content_filter with no content', () => {
    const r = parse('safety-candidate-response.json');
    expect(r.content).toEqual([]);
    expect(r.finish_reason).toBe('content_filter');
    expect(r.native_finish_reason).toBe('SAFETY');
    expect(r.usage).toEqual({ input: 12, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 });
  });

  it('merges adjacent text parts and thought parts; a signed thought part keeps its signature', () => {
    const r = googleAdapter.parseResponse(
      JSON.stringify({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'th1 ', thought: true },
                { text: 'th2', thought: true, thoughtSignature: 'S1' },
                { text: 'th3', thought: true },
                { text: 'a' },
                { text: '' },
                { text: 'b' },
                { text: 'c', thoughtSignature: 'S2' },
                { functionCall: { name: 'f', args: { x: 1 }, id: 'upstream-id' } },
                { text: 'd' },
              ],
            },
            finishReason: 'MAX_TOKENS',
          },
        ],
      }),
    );
    expect(r.content).toEqual([
      { type: 'reasoning', text: 'th1 th2', signature: 'S1', origin: 'google' },
      { type: 'reasoning', text: 'th3' },
      { type: 'text', text: 'ab' },
      { type: 'reasoning', text: '', signature: 'S2', origin: 'google' },
      { type: 'text', text: 'c' },
      { type: 'tool_call', id: 'upstream-id', name: 'f', arguments: '{"x":1}' },
      { type: 'text', text: 'd' },
    ]);
    expect(r.finish_reason).toBe('length');
  });

  it('rejects bodies that are not an answer with 502', () => {
    for (const text of ['not json', '[]', '{}', '{"candidates":[]}']) {
      let err: unknown;
      try {
        googleAdapter.parseResponse(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).status).toBe(502);
    }
  });

  it('an error envelope in a 200 body is mapped like an error answer', () => {
    expect(() => googleAdapter.parseResponse(fixture('error-429-resource-exhausted.json'))).toThrow(
      expect.objectContaining({ status: 429, retryAfter: 37 }),
    );
  });
});

describe('finish reasons and usage', () => {
  it('maps every documented finish reason', () => {
    expect(mapFinishReason('STOP', false)).toBe('stop');
    expect(mapFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapFinishReason(null, false)).toBe('stop');
    expect(mapFinishReason('MAX_TOKENS', true)).toBe('length');
    for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']) {
      expect(mapFinishReason(r, false)).toBe('content_filter');
    }
    for (const r of ['MALFORMED_FUNCTION_CALL', 'OTHER', 'FINISH_REASON_UNSPECIFIED', 'UNEXPECTED_TOOL_CALL']) {
      expect(mapFinishReason(r, false)).toBe('error');
    }
  });

  it('adds tool-use prompt tokens to input and tolerates missing counts', () => {
    expect(mapUsage({ promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 30, toolUsePromptTokenCount: 5, totalTokenCount: 155 })).toEqual({
      input: 105,
      output: 50,
      cache_read: 40,
      cache_write: 0,
      reasoning: 30,
    });
    expect(mapUsage({})).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 });
    expect(mapUsage(undefined)).toBeNull();
  });
});

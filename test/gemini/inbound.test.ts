/**
 * The Gemini skin's adapter without HTTP: GenerateContentRequest → IR (roles, thoughts and signatures, function call
 * ids, schemas, tool config, thinking, refusals of what other protocols cannot carry), IR → GenerateContentResponse,
 * and the stream encoder's chunks.
 */
import { describe, expect, it } from 'vitest';
import type { AnswerMeta } from '../../src/core/adapters.js';
import { HttpError } from '../../src/core/errors.js';
import type { IrStreamEvent } from '../../src/core/ir.js';
import { geminiCountBody } from '../../src/inbound/gemini-count.js';
import { geminiFinishReason, GeminiStreamEncoder } from '../../src/inbound/gemini-output.js';
import { geminiInbound, geminiModelId, geminiToIr, openApiToJsonSchema } from '../../src/inbound/gemini.js';

type Json = Record<string, any>;
const meta: AnswerMeta = {
  id: 'gen-1-abc',
  model: 'google/gemini-2.5-pro',
  provider: 'Google',
  created: 1,
  cost: 0.0001,
  cost_details: { upstream_inference_prompt_cost: 0.00004, upstream_inference_completions_cost: 0.00006, upstream_inference_cost: 0.0001 },
};

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

describe('gemini: model ids', () => {
  const has = (id: string) => id === 'google/gemini-2.5-pro';
  it.each([
    ['gemini-2.5-pro', 'google/gemini-2.5-pro'],
    ['models/gemini-2.5-pro', 'google/gemini-2.5-pro'],
    ['google/gemini-2.5-pro', 'google/gemini-2.5-pro'],
    ['anthropic/claude-sonnet-4.5', 'anthropic/claude-sonnet-4.5'],
    ['gemini-9-unknown', 'gemini-9-unknown'],
  ])('%s → %s', (given, want) => expect(geminiModelId(given, has)).toBe(want));
});

describe('gemini: request → IR', () => {
  it('roles, system instruction, consecutive same-role contents merged, generation config', () => {
    const ir = geminiToIr({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use French.' }] },
      contents: [
        { parts: [{ text: 'Hi' }] },
        { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } }] },
        { role: 'model', parts: [{ text: 'Bon' }, { text: 'jour' }] },
      ],
      generationConfig: { temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 100, stopSequences: ['END'], seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2 },
    });
    expect(ir).toEqual({
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use French.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image', data: 'AAAA', media_type: 'image/png' }, { type: 'document', url: 'gs://b/x.pdf', media_type: 'application/pdf' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
      ],
      stream: false,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 100,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
    });
  });

  it('function calls get ids (given or generated); responses pair by id, else by name in order; result text conventions', () => {
    const ir = geminiToIr({
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris and Rome?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'w', args: { c: 'Paris' } } }, { functionCall: { name: 'w', args: { c: 'Rome' } } }, { functionCall: { id: 'x9', name: 't', args: {} } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'x9', name: 't', response: { error: 'no clock' } } },
            { functionResponse: { name: 'w', response: { output: '12C' } } },
            { functionResponse: { name: 'w', response: { temp: 20 } } },
          ],
        },
      ],
    });
    expect(ir.messages[1].content).toEqual([
      { type: 'tool_call', id: 'call_0', name: 'w', arguments: '{"c":"Paris"}' },
      { type: 'tool_call', id: 'call_1', name: 'w', arguments: '{"c":"Rome"}' },
      { type: 'tool_call', id: 'x9', name: 't', arguments: '{}' },
    ]);
    expect(ir.messages[2].content).toEqual([
      { type: 'tool_result', tool_call_id: 'x9', content: 'no clock', is_error: true },
      { type: 'tool_result', tool_call_id: 'call_0', content: '12C' },
      { type: 'tool_result', tool_call_id: 'call_1', content: '{"temp":20}' },
    ]);
    expect400(() => geminiToIr({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'w', response: {} } }] }] }), /contents\[0\]\.parts\[0\]\.functionResponse/);
  });

  it('thoughts merge until a signature; a signature on another part rides before it; redacted thoughts come back', () => {
    const ir = geminiToIr({
      contents: [
        { role: 'user', parts: [{ text: 'q' }] },
        {
          role: 'model',
          parts: [
            { text: 'think ', thought: true },
            { text: 'more', thought: true },
            { text: '', thought: true, thoughtSignature: 'sigA' },
            { text: '', thought: true, thoughtSignature: 'gateway-redacted:ENC' },
            { functionCall: { name: 'f', args: {} }, thoughtSignature: 'sigB' },
          ],
        },
      ],
    });
    expect(ir.messages[1].content).toEqual([
      { type: 'reasoning', text: 'think more', signature: 'sigA', origin: 'google' },
      { type: 'redacted_reasoning', data: 'ENC' },
      { type: 'reasoning', text: '', signature: 'sigB', origin: 'google' },
      { type: 'tool_call', id: 'call_0', name: 'f', arguments: '{}' },
    ]);
  });

  it('tools: JSON Schema as is, OpenAPI schemas converted; tool config modes', () => {
    const ir = geminiToIr({
      contents: [{ parts: [{ text: 'x' }] }],
      tools: [
        {
          functionDeclarations: [
            { name: 'a', description: 'A', parametersJsonSchema: { type: 'object', properties: { q: { type: 'string' } } } },
            { name: 'b', parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } }, propertyOrdering: ['n'] } },
            { name: 'c' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'b'] } },
    });
    expect(ir.tools).toEqual([
      { name: 'a', description: 'A', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'b', parameters: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } },
    ]);
    expect(ir.tool_choice).toEqual({ type: 'required' });
    const one = geminiToIr({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: 'a' }] }], toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] } } });
    expect(one.tool_choice).toEqual({ type: 'tool', name: 'a' });
    expect(one.tools).toEqual([{ name: 'a', parameters: { type: 'object', properties: {} } }]);
    const none = geminiToIr({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: 'a' }] }], toolConfig: { functionCallingConfig: { mode: 'NONE' } } });
    expect(none.tool_choice).toEqual({ type: 'none' });
    expect(openApiToJsonSchema({ type: 'STRING', nullable: true, enum: ['x'] })).toEqual({ type: ['string', 'null'], enum: ['x'] });
  });

  it('thinking config and JSON answers', () => {
    const base = { contents: [{ parts: [{ text: 'x' }] }] };
    expect(geminiToIr({ ...base, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).reasoning).toEqual({ effort: 'none' });
    expect(geminiToIr({ ...base, generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }).reasoning).toEqual({ enabled: true });
    expect(geminiToIr({ ...base, generationConfig: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } } }).reasoning).toEqual({ enabled: true, max_tokens: 2048, summary: 'auto' });
    expect(geminiToIr({ ...base, generationConfig: { thinkingConfig: { thinkingLevel: 'high' } } }).reasoning).toEqual({ effort: 'high' });
    expect(geminiToIr({ ...base, generationConfig: { responseMimeType: 'application/json' } }).response_format).toEqual({ type: 'json_object' });
    expect(geminiToIr({ ...base, generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { a: { type: 'NUMBER' } } } } }).response_format).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: { type: 'object', properties: { a: { type: 'number' } } },
      strict: true,
    });
  });

  it('refuses what other protocols cannot carry, naming the field', () => {
    const base = { contents: [{ parts: [{ text: 'x' }] }] };
    expect400(() => geminiToIr({ ...base, tools: [{ codeExecution: {} }] }), /tools\[0\]\.codeExecution is not supported/);
    expect400(() => geminiToIr({ ...base, cachedContent: 'cachedContents/abc' }), /cachedContent/);
    expect400(() => geminiToIr({ ...base, generationConfig: { candidateCount: 2 } }), /candidateCount/);
    expect400(() => geminiToIr({ ...base, generationConfig: { responseMimeType: 'text/x.enum' } }), /responseMimeType/);
    expect400(() => geminiToIr({ ...base, generationConfig: { thinkingConfig: { thinkingLevel: 'ULTRA' } } }), /thinkingLevel/);
    expect400(() => geminiToIr({ contents: [{ role: 'model', parts: [{ executableCode: { code: '1' } }] }] }), /contents\[0\]\.parts\[0\]: part kind "executableCode"/);
    expect400(() => geminiToIr({ contents: [] }), /contents is required/);
  });

  it('countTokens bodies become the Messages body the counting service counts', () => {
    expect(geminiCountBody({ generateContentRequest: { systemInstruction: { parts: [{ text: 'S' }] }, contents: [{ parts: [{ text: 'hello' }] }], tools: [{ functionDeclarations: [{ name: 'f' }] }] } })).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      system: [{ type: 'text', text: 'S' }],
      tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }],
    });
  });
});

describe('gemini: IR → response', () => {
  it('parts, signatures, ids, finish and usage (thoughts counted apart)', () => {
    const body = geminiInbound.fromIr(
      {
        id: 'up-1',
        model: 'm',
        content: [
          { type: 'reasoning', text: 'hmm', signature: 'S1' },
          { type: 'reasoning', text: '', signature: 'S2' },
          { type: 'tool_call', id: 'call_7', name: 'f', arguments: '{"a":1}' },
          { type: 'redacted_reasoning', data: 'ENC' },
          { type: 'text', text: 'done' },
        ],
        finish_reason: 'tool_calls',
        native_finish_reason: 'tool_use',
        usage: { input: 100, output: 30, cache_read: 40, cache_write: 10, reasoning: 12 },
      },
      meta,
    );
    expect(body).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'hmm', thought: true, thoughtSignature: 'S1' },
              { functionCall: { id: 'call_7', name: 'f', args: { a: 1 } }, thoughtSignature: 'S2' },
              { text: '', thought: true, thoughtSignature: 'gateway-redacted:ENC' },
              { text: 'done' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 18, totalTokenCount: 130, cachedContentTokenCount: 40, thoughtsTokenCount: 12, cost: 0.0001, cost_details: meta.cost_details },
      modelVersion: 'google/gemini-2.5-pro',
      responseId: 'gen-1-abc',
    });
  });

  it.each([
    ['stop', null, 'STOP'],
    ['length', 'max_tokens', 'MAX_TOKENS'],
    ['content_filter', 'RECITATION', 'RECITATION'],
    ['content_filter', 'refusal', 'SAFETY'],
    ['error', 'MALFORMED_FUNCTION_CALL', 'MALFORMED_FUNCTION_CALL'],
    ['error', 'error', 'OTHER'],
  ] as const)('finish %s (native %s) → %s', (finish, native, want) => expect(geminiFinishReason(finish, native)).toBe(want));

  it('errors in Google’s shape', () => {
    expect(geminiInbound.errorBody(429, 'slow down', { error_type: 'rate_limit_exceeded' })).toEqual({ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED', metadata: { error_type: 'rate_limit_exceeded' } } });
    expect(geminiInbound.errorBody(524, 't', null)).toEqual({ error: { code: 524, message: 't', status: 'DEADLINE_EXCEEDED' } });
  });
});

describe('gemini: stream encoder', () => {
  const run = (events: IrStreamEvent[]) => {
    const enc = new GeminiStreamEncoder(meta);
    let out = enc.start();
    for (const e of events) out += enc.event(e);
    out += enc.finish({ input: 10, output: 8, cache_read: 0, cache_write: 0, reasoning: 3 }, meta);
    return out
      .split('\n\n')
      .filter(Boolean)
      .map((f) => {
        expect(f.startsWith('data: ')).toBe(true);
        return JSON.parse(f.slice(6)) as Json;
      });
  };

  it('text and thoughts as they come, whole calls at their end, the signature on the next part, finish and usage last', () => {
    const chunks = run([
      { type: 'start', id: 'up', model: 'm' },
      { type: 'reasoning_delta', index: 0, text: 'a' },
      { type: 'reasoning_delta', index: 0, text: 'b' },
      { type: 'part_end', index: 0 },
      { type: 'reasoning_signature', index: 1, signature: 'SIG' },
      { type: 'part_end', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'call_1', name: 'f' },
      { type: 'tool_call_delta', index: 2, arguments: '{"x"' },
      { type: 'tool_call_delta', index: 2, arguments: ':1}' },
      { type: 'part_end', index: 2 },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'STOP' },
    ]);
    expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([
      [{ text: 'a', thought: true }],
      [{ text: 'b', thought: true }],
      [{ functionCall: { id: 'call_1', name: 'f', args: { x: 1 } }, thoughtSignature: 'SIG' }],
      [],
    ]);
    for (const c of chunks) expect(c).toMatchObject({ responseId: 'gen-1-abc', modelVersion: 'google/gemini-2.5-pro' });
    expect(chunks[3].candidates[0].finishReason).toBe('STOP');
    expect(chunks[3].usageMetadata).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 18, cost: 0.0001 });
    expect(chunks.slice(0, 3).every((c) => c.usageMetadata === undefined && c.candidates[0].finishReason === undefined)).toBe(true);
  });

  it('a signature on a thought with text stays on a thought part; a trailing one goes on an empty text part', () => {
    const chunks = run([
      { type: 'reasoning_delta', index: 0, text: 'why' },
      { type: 'reasoning_signature', index: 0, signature: 'S0' },
      { type: 'text_delta', index: 1, text: 'ok' },
      { type: 'reasoning_signature', index: 2, signature: 'S2' },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn' },
    ]);
    expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([[{ text: 'why', thought: true }], [{ text: '', thought: true, thoughtSignature: 'S0' }], [{ text: 'ok' }], [{ text: '', thoughtSignature: 'S2' }]]);
  });

  it('an error after content is Google’s error object, and nothing follows it', () => {
    const enc = new GeminiStreamEncoder(meta);
    const out = enc.event({ type: 'text_delta', index: 0, text: 'x' }) + enc.error(502, 'Provider error during the stream', 'provider_unavailable', meta) + enc.finish(null, meta);
    const frames = out.split('\n\n').filter(Boolean);
    expect(frames).toHaveLength(2);
    expect(JSON.parse(frames[1].slice(6))).toEqual({ error: { code: 502, message: 'Provider error during the stream', status: 'UNAVAILABLE', metadata: { error_type: 'provider_unavailable' } } });
  });
});

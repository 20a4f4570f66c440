/**
 * Anthropic adapter, non-streaming responses: the documented Message shapes (fixtures/, sources in
 * fixtures/SOURCES.md) → IR responses, with usage normalized (IR input = input + cache writes + cache reads).
 */
import { describe, expect, it } from 'vitest';
import { anthropicAdapter, JSON_TOOL_NAME } from '../../../src/providers/anthropic/index.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { fixture } from './helpers.js';

const parse = (text: string) => anthropicAdapter.parseResponse(text);
const message = (extra: object) =>
  JSON.stringify({ id: 'msg_x', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: 'end_turn', stop_sequence: null, ...extra });

describe('parseResponse', () => {
  it('text (Messages API reference example)', () => {
    // https://docs.anthropic.com/en/api/messages
    expect(parse(fixture('response-text.json'))).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      model: 'claude-3-5-sonnet-20240620',
      content: [{ type: 'text', text: 'Hi! My name is Claude.' }],
      finish_reason: 'stop',
      native_finish_reason: 'end_turn',
      usage: { input: 2095, output: 503, cache_read: 0, cache_write: 0, reasoning: 0 },
      service_tier: null,
    });
  });

  it('tool_use (tool use docs example; no usage in the example)', () => {
    // https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
    const r = parse(fixture('response-tool-use.json'));
    expect(r.finish_reason).toBe('tool_calls');
    expect(r.native_finish_reason).toBe('tool_use');
    expect(r.usage).toBeNull();
    expect(r.content).toHaveLength(2);
    expect(r.content[0]).toEqual({ type: 'text', text: "I'll check the current weather in San Francisco for you." });
    const call = r.content[1];
    expect(call).toMatchObject({ type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather' });
    expect(call.type === 'tool_call' && JSON.parse(call.arguments)).toEqual({ location: 'San Francisco, CA', unit: 'celsius' });
  });

  it('thinking with its signature (extended thinking docs example)', () => {
    // https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
    const r = parse(fixture('response-thinking.json'));
    expect(r.content).toEqual([
      {
        type: 'reasoning',
        text: 'Let me analyze this step by step...',
        signature: 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL....',
        origin: 'anthropic',
      },
      { type: 'text', text: 'Based on my analysis...' },
    ]);
    expect(r.id).toBeNull();
    expect(r.finish_reason).toBe('stop');
    expect(r.native_finish_reason).toBeNull();
  });

  it('redacted thinking (thinking redaction example)', () => {
    const r = parse(fixture('response-redacted-thinking.json'));
    expect(r.content.map((p) => p.type)).toEqual(['reasoning', 'redacted_reasoning', 'text']);
    expect(r.content[1]).toEqual({
      type: 'redacted_reasoning',
      data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP1oLs9yTcMnKVf2wRpEGjH9XZaBt4UvDcPrQ...',
    });
  });

  it('usage with prompt caching: input = input_tokens + cache_creation + cache_read', () => {
    // usage block from https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
    expect(parse(fixture('response-cache-usage.json')).usage).toEqual({ input: 2048 + 248 + 1800, output: 503, cache_read: 1800, cache_write: 248, reasoning: 0 });
    const tier = parse(message({ usage: { input_tokens: 1, output_tokens: 2, service_tier: 'priority' } }));
    expect(tier.service_tier).toBe('priority');
  });

  it('maps every stop_reason and keeps the native one', () => {
    const cases: Array<[string | null, string]> = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
      ['pause_turn', 'stop'],
      [null, 'stop'],
      ['some_future_reason', 'stop'],
    ];
    for (const [native, ir] of cases) {
      const r = parse(message({ stop_reason: native }));
      expect(r.finish_reason, String(native)).toBe(ir);
      expect(r.native_finish_reason).toBe(native);
    }
  });

  it('turns the json_output tool into text and finishes with stop', () => {
    const r = parse(
      message({
        content: [{ type: 'tool_use', id: 'toolu_1', name: JSON_TOOL_NAME, input: { name: 'Ada', age: 36 } }],
        stop_reason: 'tool_use',
      }),
    );
    expect(r.content).toEqual([{ type: 'text', text: '{"name":"Ada","age":36}' }]);
    expect(r.finish_reason).toBe('stop');
    expect(r.native_finish_reason).toBe('tool_use');
    // next to a real tool call it stays a tool-call turn
    const mixed = parse(
      message({
        content: [
          { type: 'tool_use', id: 't1', name: 'get_weather', input: {} },
          { type: 'tool_use', id: 't2', name: JSON_TOOL_NAME, input: {} },
        ],
        stop_reason: 'tool_use',
      }),
    );
    expect(mixed.finish_reason).toBe('tool_calls');
  });

  it('skips server-tool blocks and other unknown block types', () => {
    const r = parse(
      message({
        content: [
          { type: 'text', text: "I'll check." },
          { type: 'server_tool_use', id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB', name: 'web_search', input: { query: 'weather NYC today' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB', content: [] },
          { type: 'text', text: 'Sunny.', citations: [{ type: 'web_search_result_location', url: 'https://x' }] },
        ],
      }),
    );
    expect(r.content).toEqual([
      { type: 'text', text: "I'll check." },
      { type: 'text', text: 'Sunny.' },
    ]);
  });

  it('rejects non-JSON and content-less bodies with 502, and maps an error envelope', () => {
    for (const bad of ['<html>502 Bad Gateway</html>', '{"id":"msg"}', '']) {
      let err: unknown;
      try {
        parse(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).status).toBe(502);
    }
    let err: UpstreamError | undefined;
    try {
      parse('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
    } catch (e) {
      err = e as UpstreamError;
    }
    expect(err?.status).toBe(529);
    expect(err?.type).toBe('provider_overloaded');
  });
});

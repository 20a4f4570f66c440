/**
 * Anthropic adapter, stream decoding: the documented event streams (fixtures/, from
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming) fed at any chunk boundary give the same IR events.
 */
import { describe, expect, it } from 'vitest';
import type { IrStreamEvent } from '../../../src/core/ir.js';
import { anthropicAdapter, JSON_TOOL_NAME, SseParser } from '../../../src/providers/anthropic/index.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { decode, decodeRandom, fixture } from './helpers.js';

const BASIC = fixture('stream-basic.sse');
const TOOL = fixture('stream-tool-use.sse');
const THINKING = fixture('stream-thinking.sse');
const ERROR_EVENT = fixture('stream-error-event.sse');

const sse = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function thrown(f: () => unknown): UpstreamError {
  try {
    f();
  } catch (e) {
    if (e instanceof UpstreamError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

const text = (events: IrStreamEvent[], type: 'text_delta' | 'reasoning_delta', index: number) =>
  events
    .filter((e): e is Extract<IrStreamEvent, { type: 'text_delta' | 'reasoning_delta' }> => e.type === type && e.index === index)
    .map((e) => e.text)
    .join('');

describe('documented streams', () => {
  it('basic streaming request → start, text deltas, part_end, finish, usage', () => {
    expect(decode(BASIC)).toEqual([
      { type: 'start', id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', model: 'claude-sonnet-4-5-20250929' },
      { type: 'text_delta', index: 0, text: 'Hello' },
      { type: 'text_delta', index: 0, text: '!' },
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn' },
      // input from message_start, output from message_delta (cumulative)
      { type: 'usage', usage: { input: 25, output: 15, cache_read: 0, cache_write: 0, reasoning: 0 } },
    ]);
  });

  it('streaming request with tool use → text part 0, tool call part 1 with reassembled arguments', () => {
    const events = decode(TOOL);
    expect(events[0]).toEqual({ type: 'start', id: 'msg_014p7gG3wDgGV9EUtLvnow3U', model: 'claude-sonnet-4-5-20250929' });
    expect(text(events, 'text_delta', 0)).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(events).toContainEqual({ type: 'tool_call_start', index: 1, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' });
    const args = events.filter((e) => e.type === 'tool_call_delta').map((e) => (e.type === 'tool_call_delta' ? e.arguments : ''));
    expect(args.every((a) => a !== '')).toBe(true); // the empty first partial_json is not forwarded
    expect(JSON.parse(args.join(''))).toEqual({ location: 'San Francisco, CA', unit: 'fahrenheit' });
    expect(events.filter((e) => e.type === 'part_end')).toEqual([
      { type: 'part_end', index: 0 },
      { type: 'part_end', index: 1 },
    ]);
    expect(events.slice(-2)).toEqual([
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use' },
      { type: 'usage', usage: { input: 472, output: 89, cache_read: 0, cache_write: 0, reasoning: 0 } },
    ]);
    // the tool-call start precedes its deltas
    const start = events.findIndex((e) => e.type === 'tool_call_start');
    expect(events.findIndex((e) => e.type === 'tool_call_delta')).toBeGreaterThan(start);
  });

  it('streaming with extended thinking → reasoning deltas, signature, text; no usage when none is reported', () => {
    const events = decode(THINKING);
    expect(text(events, 'reasoning_delta', 0)).toBe(
      'Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231',
    );
    expect(events).toContainEqual({ type: 'reasoning_signature', index: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...', origin: 'anthropic' });
    expect(text(events, 'text_delta', 1)).toBe('27 * 453 = 12,231');
    const sigAt = events.findIndex((e) => e.type === 'reasoning_signature');
    expect(events[sigAt + 1]).toEqual({ type: 'part_end', index: 0 });
    expect(events[events.length - 1]).toEqual({ type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn' });
    expect(events.some((e) => e.type === 'usage')).toBe(false);
  });

  for (const [name, stream] of [
    ['basic', BASIC],
    ['tool use', TOOL],
    ['thinking', THINKING],
  ] as const) {
    it(`${name}: 1-byte, 7-byte, random and whole chunks give identical events (LF and CRLF)`, () => {
      const whole = decode(stream);
      expect(decode(stream, 1)).toEqual(whole);
      expect(decode(stream, 7)).toEqual(whole);
      for (let seed = 1; seed <= 20; seed++) expect(decodeRandom(stream, seed)).toEqual(whole);
      const crlf = stream.replace(/\n/g, '\r\n');
      expect(decode(crlf, 1)).toEqual(whole);
      expect(decodeRandom(crlf, 99, 5)).toEqual(whole);
      expect(decode(stream.replace(/\n/g, '\r'), 3)).toEqual(whole);
    });
  }
});

describe('robustness', () => {
  it('ignores unknown event types, unknown delta types, server-tool blocks and comments', () => {
    const [head, tail] = [BASIC.slice(0, BASIC.indexOf('event: content_block_stop')), BASIC.slice(BASIC.indexOf('event: content_block_stop'))];
    const noisy =
      ': keep-alive comment\n\n' +
      head +
      sse('future_event', { type: 'future_event', payload: { x: 1 } }) +
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: { type: 'char_location' } } }) +
      tail.replace(
        'event: message_delta',
        sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }) +
          sse('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }) +
          sse('content_block_stop', { type: 'content_block_stop', index: 1 }) +
          'event: message_delta',
      );
    expect(decode(noisy)).toEqual(decode(BASIC));
    expect(decode(noisy, 1)).toEqual(decode(BASIC));
  });

  it('a stream cut mid-event, or before message_stop, makes end() throw 502', () => {
    for (const cut of [BASIC.length - 10, BASIC.indexOf('event: message_stop'), BASIC.indexOf('"text": "Hello"') + 5, 0]) {
      const d = anthropicAdapter.createStreamDecoder();
      d.push(BASIC.slice(0, cut));
      const e = thrown(() => d.end());
      expect(e.status).toBe(502);
      expect(e.type).toBe('provider_unavailable');
    }
  });

  it('a final message_stop without the blank line after it still completes', () => {
    const events = decode(BASIC.trimEnd());
    expect(events).toEqual(decode(BASIC));
  });

  it('invalid JSON in an event throws 502 from push', () => {
    const d = anthropicAdapter.createStreamDecoder();
    const e = thrown(() => d.push('event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n'));
    expect(e.status).toBe(502);
  });

  it('an error event mid-stream → IR error with the gateway status; end() does not throw; later events ignored', () => {
    const cut = BASIC.indexOf('event: content_block_stop');
    const stream = BASIC.slice(0, cut) + ERROR_EVENT + BASIC.slice(cut);
    const events = decode(stream, 5);
    expect(events.map((e) => e.type)).toEqual(['start', 'text_delta', 'text_delta', 'error']);
    expect(events[3]).toEqual({
      type: 'error',
      status: 529,
      message: 'Overloaded',
      error_type: 'provider_overloaded',
      raw: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    // an error as the last event: the stream may end right after it
    expect(decode(BASIC.slice(0, cut) + ERROR_EVENT).at(-1)?.type).toBe('error');
  });

  it('maps in-stream error types to gateway statuses', () => {
    const cases: Array<[string, number]> = [
      ['overloaded_error', 529],
      ['rate_limit_error', 429],
      ['api_error', 502],
      ['invalid_request_error', 400],
      ['authentication_error', 502],
      ['timeout_error', 524],
      ['some_new_error', 502],
    ];
    for (const [type, status] of cases) {
      const events = decode(sse('error', { type: 'error', error: { type, message: 'm' } }));
      expect(events, type).toEqual([expect.objectContaining({ type: 'error', status })]);
    }
  });

  it('message_delta usage overwrites message_start counts (cumulative, never added)', () => {
    // usage shapes from the documented web-search stream: message_delta repeats input and cache counts
    const s =
      sse('message_start', {
        type: 'message_start',
        message: { id: 'msg_01G', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 2679, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 } },
      }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 200 } }) +
      sse('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 10682, cache_creation_input_tokens: 10, cache_read_input_tokens: 20, output_tokens: 510, server_tool_use: { web_search_requests: 1 } },
      }) +
      sse('message_stop', { type: 'message_stop' });
    const events = decode(s);
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: { input: 10712, output: 510, cache_read: 20, cache_write: 10, reasoning: 0 } }]);
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
  });

  it('streams the json_output tool as text and finishes with stop', () => {
    const s =
      sse('message_start', { type: 'message_start', message: { id: 'm', model: 'c', usage: { input_tokens: 10, output_tokens: 1 } } }) +
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_j', name: JSON_TOOL_NAME, input: {} } }) +
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }) +
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"name": "Ad' } }) +
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'a"}' } }) +
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }) +
      sse('message_stop', { type: 'message_stop' });
    expect(decode(s, 3)).toEqual([
      { type: 'start', id: 'm', model: 'c' },
      { type: 'text_delta', index: 0, text: '{"name": "Ad' },
      { type: 'text_delta', index: 0, text: 'a"}' },
      { type: 'part_end', index: 0 },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'tool_use' },
      { type: 'usage', usage: { input: 10, output: 9, cache_read: 0, cache_write: 0, reasoning: 0 } },
    ]);
  });

  it('emits redacted thinking and content present in content_block_start', () => {
    const s =
      sse('message_start', { type: 'message_start', message: { id: 'm', model: 'c' } }) +
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' } }) +
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: 'Hi' } }) +
      sse('content_block_stop', { type: 'content_block_stop', index: 1 }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 1 } }) +
      sse('message_stop', { type: 'message_stop' });
    expect(decode(s)).toEqual([
      { type: 'start', id: 'm', model: 'c' },
      { type: 'redacted_reasoning', index: 0, data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'part_end', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'part_end', index: 1 },
      { type: 'finish', finish_reason: 'length', native_finish_reason: 'max_tokens' },
      { type: 'usage', usage: { input: 0, output: 1, cache_read: 0, cache_write: 0, reasoning: 0 } },
    ]);
  });
});

describe('SseParser', () => {
  it('handles data without a space, multi-line data, comments and events without a name', () => {
    const p = new SseParser();
    expect(p.feed('data:{"a":1}\n\n: comment\nevent: x\ndata: line1\ndata: line2\n\ndata: no-name\n\nretry: 5\nid: 7\n\n')).toEqual([
      { data: '{"a":1}' },
      { event: 'x', data: 'line1\nline2' },
      { data: 'no-name' },
    ]);
    expect(p.flush()).toEqual([]);
  });
});

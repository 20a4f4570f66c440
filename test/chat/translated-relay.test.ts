/**
 * The translated stream's byte-level fast path (services/codec-ir-bytes.ts), unit by unit: the Anthropic recognizer
 * of plain `content_block_delta` events (providers/anthropic/stream-scan.ts) admits exactly the forms it may, the
 * decoded length of a JSON string token is counted without decoding it, and a stream relayed through the fast path
 * gives the client the same events (the same bytes where the upstream escapes as JSON.stringify does), the same
 * output count, usage, finish and failures as the IR path — at any read boundary, with CR line ends, with bytes that
 * are not UTF-8, with an error after content.
 */
import { describe, expect, it } from 'vitest';
import { events, relayThrough, SIZES, type Run } from './translated-harness.js';
import type { AnswerMeta, RawDelta, StreamDecoder, StreamEncoder } from '../../src/core/adapters.js';
import { jsonStringLength } from '../../src/core/json-scan.js';
import { anthropicAdapter } from '../../src/providers/anthropic/index.js';
import { scanContentDelta } from '../../src/providers/anthropic/stream-scan.js';
import { ChatStreamEncoder } from '../../src/providers/openai/ir-inbound.js';
import { chatAdapter } from '../../src/providers/registry.js';
import { MessagesStreamEncoder } from '../../src/inbound/messages-stream.js';
import { plainChunkDelta } from '../../src/providers/openai/chunk-scan.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import { fixture } from '../providers/anthropic/helpers.js';
import { readBytes } from '../../src/core/byte-shape.js';

const meta: AnswerMeta = { id: 'gen-1-abc', model: 'test/claude', provider: 'Sim "A" é', created: 1700000000, cost: 0.25, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };

const latin1 = (s: string) => Buffer.from(s).toString('latin1');

/** scanContentDelta on one event (given as UTF-8 text, without its blank line). */
function scan(event: string): RawDelta | null {
  const buf = latin1(`${event}\n\n`);
  const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
  return scanContentDelta(buf, 0, buf.length - 2, d) ? d : null;
}
const tokenOf = (d: RawDelta) => Buffer.from(d.buf.slice(d.from, d.to), 'latin1').toString('utf8');

const textEvent = (text: string, index = 0) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${text}}}`;
const jsonEvent = (json: string, index = 1) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${json}}}`;

describe('Anthropic content_block_delta recognizer', () => {
  it('admits text and input_json deltas with any valid JSON string, and finds index and token', () => {
    const cases: Array<[string, 'text_delta' | 'tool_call_delta', number, string]> = [
      [textEvent('"Hello"'), 'text_delta', 0, '"Hello"'],
      [textEvent('"Hi \\"there\\" \\\\ \\/ \\b\\f\\n\\r\\t"', 7), 'text_delta', 7, '"Hi \\"there\\" \\\\ \\/ \\b\\f\\n\\r\\t"'],
      [textEvent('"\\u00e9\\uD83D\\uDE00 é 😀 中"', 123456789), 'text_delta', 123456789, '"\\u00e9\\uD83D\\uDE00 é 😀 中"'],
      [jsonEvent('"{\\"city\\": \\"Paris\\"}"'), 'tool_call_delta', 1, '"{\\"city\\": \\"Paris\\"}"'],
      [textEvent('"}}"'), 'text_delta', 0, '"}}"'],
      // Without the `event:` line: the type is in the data.
      [textEvent('"x"', 10).slice('event: content_block_delta\n'.length), 'text_delta', 10, '"x"'],
    ];
    for (const [event, kind, index, token] of cases) {
      const d = scan(event);
      expect(d, event).not.toBeNull();
      expect({ kind: d!.kind, index: d!.index, token: tokenOf(d!) }).toEqual({ kind, index, token });
      expect(JSON.parse(token)).toBeTypeOf('string');
    }
  });

  it('refuses every other form: the full parser decides', () => {
    const data = (json: string) => `event: content_block_delta\ndata: ${json}`;
    for (const no of [
      textEvent('""'), // empty: no IR event
      jsonEvent('""'),
      textEvent('"a\\x"'), // invalid escape
      textEvent('"a\\u12"'),
      textEvent('"a\tb"'), // raw control character
      textEvent('"a'), // unterminated
      textEvent('"a"b"'),
      textEvent('"a"', -1),
      textEvent('"a"').replace('"index":0', '"index":01'),
      textEvent('"a"').replace('"index":0', '"index":1.5'),
      `${textEvent('"a"')} `, // trailing space
      `${textEvent('"a"')}\nid: 5`, // another field
      `id: 5\n${textEvent('"a"')}`,
      textEvent('"a"').replace('event: ', 'event:'),
      textEvent('"a"').replace('data: ', 'data:'),
      textEvent('"a"').replace('content_block_delta\n', 'ping\n'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","citations":[]}}'),
      data('{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}'),
      data('{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"a"}}'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","partial_json":"a"}}'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","text":"a"}}'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a"}}'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}'),
      data('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}'),
      `${textEvent('"a"')}\ndata: {}`, // two data lines
    ]) {
      expect(scan(no), no).toBeNull();
    }
  });

  it('only in the middle of a started block of the right kind does the decoder take the event raw', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    const raw = (event: string) => {
      const read = readBytes(Buffer.from(`${event}\n\n`));
      return decoder.rawDelta!(read, 0, read.text.length - 2)?.kind ?? null;
    };
    expect(raw(textEvent('"a"'))).toBeNull(); // not started
    decoder.push('event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1,"output_tokens":0}}}\n\n');
    expect(raw(textEvent('"a"'))).toBeNull(); // no such block
    decoder.push('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
    expect(raw(textEvent('"a"'))).toBe('text_delta');
    expect(raw(jsonEvent('"a"', 0))).toBeNull(); // input JSON in a text block
    decoder.push('event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}\n\n');
    expect(raw(jsonEvent('"{"', 1))).toBe('tool_call_delta');
    expect(raw(textEvent('"a"', 1))).toBeNull();
    decoder.push('event: content_block_start\ndata: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"j","name":"json_output","input":{}}}\n\n');
    expect(raw(jsonEvent('"{"', 2))).toBe('text_delta'); // the JSON-output tool streams as text
    decoder.push('event: content_block_start\ndata: {"type":"content_block_start","index":3,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}\n\n');
    expect(raw(jsonEvent('"{"', 3))).toBeNull(); // an ignored block
    decoder.push('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(raw(textEvent('"a"'))).toBeNull(); // stopped
  });
});

describe('the decoded length of a JSON string token', () => {
  it('is what String#length gives after JSON.parse', () => {
    for (const s of ['', 'abc', 'é', '中文', '😀', 'a😀b', '\\"', '\n\t', '\u00e9', '\ud83d\ude00', 'mixed é 中 😀 "q" \\ \u0001']) {
      for (const token of [JSON.stringify(s), JSON.stringify(s).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)]) {
        const buf = latin1(token);
        expect(jsonStringLength(buf, 0, buf.length - 1), token).toBe((JSON.parse(token) as string).length);
      }
    }
  });
});

// ---- the session: fast path against the IR path ---------------------------------------------------------------

const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** A stream as the simulator and Anthropic write it: message_start, blocks of deltas, message_delta, message_stop. */
function anthropicStream(blocks: Array<{ start: object; deltas: string[]; kind?: 'text' | 'json' | 'thinking' }>, stop = 'end_turn'): string {
  let out = ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, cache_read_input_tokens: 3, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    out += ev('content_block_start', { type: 'content_block_start', index, content_block: b.start });
    if (index === 0) out += ev('ping', '{"type":"ping"}');
    for (const d of b.deltas) {
      const delta = b.kind === 'json' ? `{"type":"input_json_delta","partial_json":${d}}` : b.kind === 'thinking' ? `{"type":"thinking_delta","thinking":${d}}` : `{"type":"text_delta","text":${d}}`;
      out += ev('content_block_delta', `{"type":"content_block_delta","index":${index},"delta":${delta}}`);
    }
    out += ev('content_block_stop', `{"type":"content_block_stop","index":${index}}`);
  });
  out += ev('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 42 } });
  return out + ev('message_stop', { type: 'message_stop' });
}

const words = (n: number, f = (i: number) => JSON.stringify(` w${i}`)) => Array.from({ length: n }, (_, i) => f(i));

type PairName = 'anthropic→chat' | 'chat→messages';
const PAIRS: Record<PairName, () => [StreamDecoder, StreamEncoder]> = {
  'anthropic→chat': () => [anthropicAdapter.createStreamDecoder(), new ChatStreamEncoder(meta)],
  'chat→messages': () => [chatAdapter('openai').createStreamDecoder(), new MessagesStreamEncoder(meta)],
};

/** Relays `bytes` read in pieces of the given sizes (cycled) through a session; what the client gets. */
function relay(bytes: Buffer, sizes: number[], fast: boolean, pair: PairName = 'anthropic→chat'): Run {
  const [decoder, encoder] = PAIRS[pair]();
  return relayThrough(decoder, encoder, meta, bytes, sizes, fast);
}

/**
 * The fast path and the IR path agree at every read boundary given (the same reads on both: whether an error after
 * content is thrown or left in `failure` depends on what else its read held); returns the largest count of deltas
 * relayed raw, and the fast run on whole reads.
 */
function same(stream: string | Buffer, opts: { bytes?: boolean; raw?: boolean; sizes?: number[][]; pair?: PairName } = {}): Run {
  const bytes = typeof stream === 'string' ? Buffer.from(stream) : stream;
  let first: Run | null = null;
  let raw = 0;
  for (const sizes of opts.sizes ?? SIZES) {
    const slow = relay(bytes, sizes, false, opts.pair);
    const fast = relay(bytes, sizes, true, opts.pair);
    first ??= fast;
    raw = Math.max(raw, fast.raw);
    expect(events(fast.out), String(sizes)).toEqual(events(slow.out));
    if (opts.bytes !== false) expect(fast.out, String(sizes)).toBe(slow.out);
    expect({ ...fast, out: '', raw: 0, thrown: String(fast.thrown) }).toEqual({ ...slow, out: '', raw: 0, thrown: String(slow.thrown) });
  }
  if (opts.raw !== false) expect(raw).toBeGreaterThan(0);
  return first!;
}

describe('translated stream relay, Anthropic upstream → chat client', () => {
  it('text deltas: the same bytes as the IR path, most of them relayed raw', () => {
    const run = same(anthropicStream([{ start: { type: 'text', text: '' }, deltas: words(50) }]));
    expect(run.raw).toBe(49); // the first delta starts the content through the IR path
    expect(run.finish).toBe('stop');
    expect(run.upstreamId).toBe('msg_1');
    expect(events(run.out).at(-2)).toMatchObject({ usage: { prompt_tokens: 15, completion_tokens: 42, cost: 0.25 } });
  });

  it('escaped quotes, backslashes, unicode escapes and multi-byte text: the same JSON (escapes kept as they came)', () => {
    const deltas = ['"\\"quoted\\""', '"back\\\\slash"', '"\\u00e9\\u4e2d\\ud83d\\ude00"', '"é 中 😀"', '"line\\nbreak\\ttab"', '"\\/"', '"}}\\n\\n"'];
    const run = same(anthropicStream([{ start: { type: 'text', text: '' }, deltas: ['"start"', ...deltas] }]), { bytes: false });
    const text = events(run.out)
      .map((e) => (e as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(`start${deltas.map((d) => JSON.parse(d) as string).join('')}`);
    expect(run.raw).toBe(deltas.length);
  });

  it('a tool call: its start through the IR path, its argument pieces raw; the JSON-output tool as text', () => {
    const tool = same(
      anthropicStream(
        [
          { start: { type: 'text', text: '' }, deltas: ['"Let me check."', '" Now."'] },
          { start: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }, deltas: ['""', '"{\\"city\\":"', '" \\"Par"', '"is\\"}"'], kind: 'json' },
        ],
        'tool_use',
      ),
    );
    expect(tool.raw).toBe(4);
    expect(tool.finish).toBe('tool_calls');
    const json = same(anthropicStream([{ start: { type: 'tool_use', id: 'toolu_2', name: 'json_output', input: {} }, deltas: ['"{\\"a\\":"', '"1}"', '" "'], kind: 'json' }], 'tool_use'));
    expect(json.raw).toBe(2);
    expect(json.finish).toBe('stop');
  });

  it('thinking, signatures and other events go through the IR path, in order with the raw ones', () => {
    const stream = anthropicStream([
      { start: { type: 'thinking', thinking: '', signature: '' }, deltas: ['"hmm"', '" ok"'], kind: 'thinking' },
      { start: { type: 'text', text: '' }, deltas: words(5) },
      { start: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} }, deltas: ['"{}"'], kind: 'json' },
      { start: { type: 'text', text: 'x' }, deltas: words(3) },
    ]).replace('event: content_block_stop', ': a comment\n\nevent: content_block_stop');
    expect(same(stream).raw).toBe(8);
  });

  it('CR line ends: the IR path from then on, the same output', () => {
    const lf = anthropicStream([{ start: { type: 'text', text: '' }, deltas: words(20) }]);
    same(lf.replace(/\n/g, '\r\n'), { raw: false });
    // CRs that start mid-stream: the first events were relayed raw.
    const half = lf.indexOf('w10');
    const mixed = lf.slice(0, half) + lf.slice(half).replace(/\n/g, '\r\n');
    same(mixed, { raw: false });
  });

  it('bytes that are not UTF-8 are decoded with replacement characters, as the IR path does', () => {
    const text = anthropicStream([{ start: { type: 'text', text: '' }, deltas: [...words(3), '"bad é here"', ...words(3)] }]);
    const bytes = Buffer.from(text);
    const at = bytes.indexOf(Buffer.from('é'));
    bytes[at] = 0xff; // an invalid lead byte
    same(bytes);
    // A character cut short (a lead byte followed by an ASCII byte), which a read boundary may split from what follows.
    const cut = Buffer.from(text);
    cut[at] = 0xe4;
    cut[at + 1] = 0x61;
    same(cut);
  });

  it('an error event after content: what came before is sent, the failure is raised once, as on the IR path', () => {
    const stream = anthropicStream([{ start: { type: 'text', text: '' }, deltas: words(10) }]);
    const cut = stream.slice(0, stream.indexOf('event: content_block_stop')) + ev('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) + ev('content_block_delta', textEvent('"late"').split('data: ')[1]);
    const run = same(cut);
    expect(run.failure).toBeInstanceOf(UpstreamError);
    expect(run.out).not.toContain('late');
  });

  it('a stream that ends before message_stop fails as on the IR path; invalid JSON in an event too', () => {
    const stream = anthropicStream([{ start: { type: 'text', text: '' }, deltas: words(10) }]);
    const cut = same(stream.slice(0, stream.indexOf('event: content_block_stop')));
    expect(cut.thrown).toBeInstanceOf(UpstreamError);
    // An event that is not JSON: the IR path's decoder throws for the whole text it was given, so the events before
    // it in the same read are lost there, where the fast path sends them and then fails. Read by read they agree.
    const bad = stream.replace(textEvent(JSON.stringify(' w5')), textEvent('"w5" broken'));
    const run = same(bad, { sizes: [[1], [7]] });
    expect(run.thrown).toBeInstanceOf(UpstreamError);
    const whole = relay(Buffer.from(bad), [Infinity], true);
    expect(whole.failure).toBeInstanceOf(UpstreamError);
    expect(events(whole.out)).toEqual(events(run.out));
  });

  it('the documented fixture streams (compact JSON, and the spaced JSON of the docs, which takes the IR path)', () => {
    expect(same(fixture('stream-tool-use.sse')).raw).toBeGreaterThan(0);
    same(fixture('stream-basic.sse'), { raw: false });
    same(fixture('stream-thinking.sse'), { raw: false });
  });
});

// ---- chat upstream → Messages client --------------------------------------------------------------------------

const HEAD = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model","service_tier":"default","system_fingerprint":"fp_1","choices":[';
const chunk = (delta: string, finish = 'null') => `data: ${HEAD}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`;
const USAGE = 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":30,"total_tokens":39}}\n\n';

describe('chat upstream plain chunks (the decoder side)', () => {
  it('finds the content or the tool call arguments of a plain chunk, and nothing in any other', () => {
    const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
    const at = (event: string) => {
      const read = readBytes(Buffer.from(event));
      return plainChunkDelta(read, 0, read.text.length - 2, d) ? { kind: d.kind, index: d.index, token: Buffer.from(read.text.slice(d.from, d.to), 'latin1').toString() } : null;
    };
    expect(at(chunk('{"content":"Hi \\"x\\" é"}'))).toEqual({ kind: 'text_delta', index: 0, token: '"Hi \\"x\\" é"' });
    expect(at(chunk('{"content":"a"}').replace(',"logprobs":null', ''))).toEqual({ kind: 'text_delta', index: 0, token: '"a"' });
    expect(at(chunk('{"tool_calls":[{"index":12,"function":{"arguments":"{\\"a\\":"}}]}'))).toEqual({ kind: 'tool_call_delta', index: 12, token: '"{\\"a\\":"' });
    for (const no of [
      chunk('{"tool_calls":[{"index":0,"function":{"arguments":""}}]}'), // no output
      chunk('{"content":""}'),
      chunk('{"role":"assistant","content":"a"}'),
      chunk('{"content":"a"}', '"stop"'),
      chunk('{"content":"a"}').replace('"usage":null', '"usage":{"prompt_tokens":1}'),
      chunk('{"reasoning_content":"a"}'),
      chunk('{"content":"a"}').replace('data: {"id"', 'data: {"object":"x","id"'),
      USAGE,
      'data: [DONE]\n\n',
    ]) {
      expect(at(no), no).toBeNull();
    }
  });
});

describe('translated stream relay, chat upstream → Messages client', () => {
  const role = chunk('{"role":"assistant","content":""}');
  it('content chunks: the same bytes as the IR path, most of them relayed raw', () => {
    const stream = role + words(30).map((w) => chunk(`{"content":${w}}`)).join('') + chunk('{}', '"stop"') + USAGE + 'data: [DONE]\n\n';
    const run = same(stream, { pair: 'chat→messages' });
    expect(run.raw).toBe(29);
    expect(run.finish).toBe('stop');
  });

  it('escapes kept as they came, tool call arguments raw after the call started, reasoning through the IR path', () => {
    const stream =
      role +
      chunk('{"reasoning_content":"think"}') +
      ['"a"', '"\\u00e9\\"q\\""', '"é 😀"'].map((t) => chunk(`{"content":${t}}`)).join('') +
      chunk('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}') +
      ['"{\\"x\\":"', '"1}"'].map((t) => chunk(`{"tool_calls":[{"index":0,"function":{"arguments":${t}}}]}`)).join('') +
      chunk('{}', '"tool_calls"') +
      USAGE +
      'data: [DONE]\n\n';
    const run = same(stream, { pair: 'chat→messages', bytes: false });
    expect(run.raw).toBe(4); // "a" opens the text block through the IR path
    expect(run.finish).toBe('tool_calls');
  });

  it('an in-stream error after content, and a stream without [DONE]', () => {
    const body = role + words(5).map((w) => chunk(`{"content":${w}}`)).join('');
    const err = same(body + 'data: {"error":{"message":"overloaded","code":503}}\n\n' + chunk('{"content":"late"}'), { pair: 'chat→messages' });
    expect(err.out).not.toContain('late');
    expect(err.failure ?? err.thrown).toBeInstanceOf(UpstreamError);
    expect(same(body, { pair: 'chat→messages' }).thrown).toBeInstanceOf(UpstreamError);
  });
});

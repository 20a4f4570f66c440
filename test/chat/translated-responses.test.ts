/**
 * The translated stream's byte-level fast path from an OpenAI Responses upstream (services/codec-ir-bytes.ts): the
 * recognizer of plain `response.output_text.delta` / `response.function_call_arguments.delta` events
 * (providers/openai-responses/stream-scan.ts) admits exactly the forms it may; the decoder takes a delta raw only for
 * a part already started and records its text only once the encoder took it (`rawTaken`), so that a final item
 * carrying more text is completed as on the IR path; and a stream relayed through the fast path to a Gemini, chat or
 * Messages client gives the same events (the same bytes where the upstream escapes as JSON.stringify does), output
 * count, usage, finish and failures as the IR path — at any read boundary, with a non-plain event mid-stream, with an
 * error after content.
 */
import { describe, expect, it } from 'vitest';
import { events, relayThrough, SIZES, type Run } from './translated-harness.js';
import type { AnswerMeta, RawDelta, StreamDecoder, StreamEncoder } from '../../src/core/adapters.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import { GeminiStreamEncoder } from '../../src/inbound/gemini-output.js';
import { MessagesStreamEncoder } from '../../src/inbound/messages-stream.js';
import { openaiResponsesAdapter } from '../../src/providers/openai-responses/index.js';
import { scanResponsesDelta, type ScannedDelta } from '../../src/providers/openai-responses/stream-scan.js';
import { ChatStreamEncoder } from '../../src/providers/openai/ir-inbound.js';
import { readBytes } from '../../src/core/byte-shape.js';

const meta: AnswerMeta = { id: 'gen-1-abc', model: 'test/gpt é', provider: 'Sim "A"', created: 1700000000, cost: 0.25, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };
const latin1 = (s: string) => Buffer.from(s).toString('latin1');

// ---- the recognizer --------------------------------------------------------------------------------------------

function scan(event: string): { kind: string; item: number; part: number; token: string } | null {
  const read = readBytes(Buffer.from(`${event}\n\n`));
  const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
  const at: ScannedDelta = { item: -1, part: -1 };
  if (!scanResponsesDelta(read, 0, read.text.length - 2, d, at)) return null;
  return { kind: d.kind, item: at.item, part: at.part, token: Buffer.from(d.buf.slice(d.from, d.to), 'latin1').toString('utf8') };
}

const textEvent = (delta: string, item = 0, part = 0, seq = 5) =>
  `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${seq},"item_id":"msg_1","output_index":${item},"content_index":${part},"delta":${delta},"logprobs":[]}`;
const argsEvent = (delta: string, item = 1, seq = 9) => `event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":${seq},"item_id":"fc_1","output_index":${item},"delta":${delta}}`;

describe('Responses delta recognizer', () => {
  it('admits text and function-call-argument deltas with any valid JSON string, and finds the indexes and token', () => {
    const cases: Array<[string, string, number, number, string]> = [
      [textEvent('"Hello"'), 'text_delta', 0, 0, '"Hello"'],
      [textEvent('"Hi \\"there\\" \\\\ \\/ \\b\\f\\n\\r\\t"', 3, 2), 'text_delta', 3, 2, '"Hi \\"there\\" \\\\ \\/ \\b\\f\\n\\r\\t"'],
      [textEvent('"\\u00e9\\uD83D\\uDE00 é 😀 中"', 123456789, 10), 'text_delta', 123456789, 10, '"\\u00e9\\uD83D\\uDE00 é 😀 中"'],
      [textEvent('"}}"'), 'text_delta', 0, 0, '"}}"'],
      [argsEvent('"{\\"city\\": \\"Paris\\"}"'), 'tool_call_delta', 1, -1, '"{\\"city\\": \\"Paris\\"}"'],
      // Without the event line; without sequence_number, item_id, logprobs; with obfuscation (OpenAI's default).
      [textEvent('"x"').slice('event: response.output_text.delta\n'.length), 'text_delta', 0, 0, '"x"'],
      ['data: {"type":"response.output_text.delta","output_index":4,"content_index":1,"delta":"y"}', 'text_delta', 4, 1, '"y"'],
      ['data: {"type":"response.output_text.delta","output_index":4,"delta":"y"}', 'text_delta', 4, 0, '"y"'],
      [textEvent('"z"').replace('}', ',"obfuscation":"aB3"}'), 'text_delta', 0, 0, '"z"'],
      [argsEvent('"1"').replace(/}$/, ',"obfuscation":"aB3"}'), 'tool_call_delta', 1, -1, '"1"'],
      // As OpenAI's documentation prints them: sequence_number last, a response_id before item_id.
      ['event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","sequence_number":4}', 'text_delta', 0, 0, '"Hi"'],
      ['event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","response_id":"resp_1","item_id":"fc_1","output_index":0,"delta":"{\\""}', 'tool_call_delta', 0, -1, '"{\\""'],
    ];
    for (const [event, kind, item, part, token] of cases) {
      expect(scan(event), event).toEqual({ kind, item, part, token });
      expect(JSON.parse(token)).toBeTypeOf('string');
    }
  });

  it('refuses every other form: the full parser decides', () => {
    const data = (json: string) => `event: response.output_text.delta\ndata: ${json}`;
    for (const no of [
      textEvent('""'), // empty: no IR event
      argsEvent('""'),
      textEvent('"a\\x"'), // invalid escape
      textEvent('"a\\u12"'),
      textEvent('"a\tb"'), // raw control character
      textEvent('"a'), // unterminated
      textEvent('"a"b"'),
      textEvent('1'),
      textEvent('"a"', -1),
      textEvent('"a"').replace('"output_index":0', '"output_index":01'),
      textEvent('"a"').replace('"output_index":0', '"output_index":1.5'),
      textEvent('"a"').replace('"content_index":0', '"content_index":00'),
      textEvent('"a"').replace('"output_index":0', '"output_index":1234567890'),
      textEvent('"a"').replace('"sequence_number":5', '"sequence_number":-5'),
      textEvent('"a"').replace('"logprobs":[]', '"logprobs":[{"token":"a","logprob":-0.1}]'),
      `${textEvent('"a"')} `, // trailing space
      `${textEvent('"a"')}\nid: 5`, // another field
      `id: 5\n${textEvent('"a"')}`,
      textEvent('"a"').replace('event: ', 'event:'),
      textEvent('"a"').replace('data: ', 'data:'),
      textEvent('"a"').replace('event: response.output_text.delta', 'event: response.refusal.delta'),
      textEvent('"a"').replace('event: response.output_text.delta', 'event: response.function_call_arguments.delta'),
      argsEvent('"a"').replace('event: response.function_call_arguments.delta', 'event: response.output_text.delta'),
      argsEvent('"a"').replace('"output_index":1', '"output_index":1,"content_index":0'),
      data('{"type":"response.refusal.delta","output_index":0,"content_index":0,"delta":"a"}'),
      data('{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"a"}'),
      data('{"output_index":0,"type":"response.output_text.delta","content_index":0,"delta":"a"}'),
      data('{"type":"response.output_text.delta", "output_index":0,"content_index":0,"delta":"a"}'),
      data('{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a","annotations":[]}'),
      data('{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a"'),
      data('{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a"}}'),
      data('{"type":"response.output_text.delta","output_index":0,"content_index":0,"text":"a"}'),
      data('{"type":"response.output_text.delta","item_id":"m","sequence_number":1,"output_index":0,"delta":"a"}'),
      `${textEvent('"a"')}\ndata: {}`, // two data lines
      'data: [DONE]',
      ': keep-alive',
    ]) {
      expect(scan(no), no).toBeNull();
    }
  });
});

// ---- the decoder ------------------------------------------------------------------------------------------------

const sse = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
const CREATED = sse('response.created', { response: { id: 'resp_1', model: 'gpt-x', output: [], usage: null } });
const messageAdded = (item: number) => sse('response.output_item.added', { output_index: item, item: { id: `msg_${item}`, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
const messageDone = (item: number, text: string) => sse('response.output_item.done', { output_index: item, item: { id: `msg_${item}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text }] } });
const textDelta = (delta: string, item = 0, seq = 0) => `${textEvent(delta, item, 0, seq)}\n\n`;
const argsDelta = (delta: string, item = 1, seq = 0) => `${argsEvent(delta, item, seq)}\n\n`;
const completed = (usage = { input_tokens: 11, output_tokens: 22 }, type = 'response.completed') => sse(type, { response: { id: 'resp_1', model: 'gpt-x', status: type === 'response.completed' ? 'completed' : 'incomplete', output: [], usage } });

describe('the Responses decoder takes deltas raw', () => {
  const raw = (decoder: StreamDecoder, event: string) => {
    const read = readBytes(Buffer.from(event));
    return decoder.rawDelta!(read, 0, read.text.length - 2);
  };

  it('only for a part already started, the IR index of that part', () => {
    const decoder = openaiResponsesAdapter.createStreamDecoder();
    expect(raw(decoder, textDelta('"a"'))).toBeNull(); // not started
    decoder.push(CREATED + messageAdded(0));
    expect(raw(decoder, textDelta('"a"'))).toBeNull(); // the text part starts with its first delta: through push
    expect(decoder.push(textDelta('"a"'))).toEqual([{ type: 'text_delta', index: 0, text: 'a' }]);
    expect(raw(decoder, textDelta('"b"'))).toMatchObject({ kind: 'text_delta', index: 0 });
    expect(raw(decoder, textDelta('"b"', 1))).toBeNull(); // another item
    decoder.push(sse('response.output_item.added', { output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '' } }));
    expect(raw(decoder, argsDelta('"{"'))).toMatchObject({ kind: 'tool_call_delta', index: 1 });
    expect(raw(decoder, argsDelta('"{"', 2))).toBeNull(); // a call not started
    expect(raw(decoder, textDelta('"c"'))).toMatchObject({ kind: 'text_delta', index: 0 }); // back to the text
    decoder.push(completed());
    expect(raw(decoder, textDelta('"c"'))).toBeNull(); // ended
  });

  it('records the text of raw deltas once taken, so that the final item completes it as the IR path does', () => {
    const decoder = openaiResponsesAdapter.createStreamDecoder();
    decoder.push(CREATED + messageAdded(0) + textDelta('"He"'));
    for (const t of ['"l\\u006co"', '" w\\u00f6"']) {
      const d = raw(decoder, textDelta(t));
      expect(d).not.toBeNull();
      decoder.rawTaken!(d!);
    }
    // A delta recognized but not taken (the encoder refused it) is fed to push: counted once.
    expect(raw(decoder, textDelta('"r"'))).not.toBeNull();
    expect(decoder.push(textDelta('"r"'))).toEqual([{ type: 'text_delta', index: 0, text: 'r' }]);
    const d = raw(decoder, textDelta('"ld"'));
    decoder.rawTaken!(d!);
    // The done item has one more character than the deltas gave: only that is emitted.
    expect(decoder.push(messageDone(0, 'Hello wörld!'))).toEqual([
      { type: 'text_delta', index: 0, text: '!' },
      { type: 'part_end', index: 0 },
    ]);
  });
});

// ---- the session: fast path against the IR path -----------------------------------------------------------------

type Client = 'gemini' | 'chat' | 'messages';
const ENCODERS: Record<Client, () => StreamEncoder> = {
  gemini: () => new GeminiStreamEncoder(meta),
  chat: () => new ChatStreamEncoder(meta),
  messages: () => new MessagesStreamEncoder(meta),
};

function relay(bytes: Buffer, sizes: number[], fast: boolean, client: Client): Run {
  return relayThrough(openaiResponsesAdapter.createStreamDecoder(), ENCODERS[client](), meta, bytes, sizes, fast);
}

/** The fast path and the IR path agree for each client at every read boundary; the runs on whole reads. */
function same(stream: string | Buffer, opts: { bytes?: boolean; raw?: boolean; clients?: Client[] } = {}): Record<Client, Run> {
  const bytes = typeof stream === 'string' ? Buffer.from(stream) : stream;
  const firsts = {} as Record<Client, Run>;
  for (const client of opts.clients ?? (['gemini', 'chat', 'messages'] as Client[])) {
    let raw = 0;
    for (const sizes of SIZES) {
      const slow = relay(bytes, sizes, false, client);
      const fast = relay(bytes, sizes, true, client);
      firsts[client] ??= fast;
      raw = Math.max(raw, fast.raw);
      expect(events(fast.out), `${client} ${String(sizes)}`).toEqual(events(slow.out));
      if (opts.bytes !== false) expect(fast.out, `${client} ${String(sizes)}`).toBe(slow.out);
      expect({ ...fast, out: '', raw: 0, thrown: String(fast.thrown) }).toEqual({ ...slow, out: '', raw: 0, thrown: String(slow.thrown) });
    }
    if (opts.raw !== false) expect(raw, client).toBeGreaterThan(0);
  }
  return firsts;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(` w${i}`));
/** A text answer as the simulator writes it: created, the message item, deltas, the done events, completed. */
function textStream(deltas: string[], done = deltas.map((d) => JSON.parse(d) as string).join(''), end = completed()): string {
  let seq = 2;
  let s = CREATED + messageAdded(0) + sse('response.content_part.added', { item_id: 'msg_0', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } });
  for (const d of deltas) s += textDelta(d, 0, seq++);
  s += sse('response.output_text.done', { item_id: 'msg_0', output_index: 0, content_index: 0, text: done });
  return s + messageDone(0, done) + end;
}

describe('translated stream relay, Responses upstream → Gemini, chat and Messages clients', () => {
  it('text deltas: the same bytes as the IR path, all but the first relayed raw', () => {
    const runs = same(textStream(words(40)));
    for (const client of ['gemini', 'chat', 'messages'] as Client[]) {
      expect(runs[client].raw, client).toBe(39);
      expect(runs[client].finish).toBe('stop');
      expect(runs[client].upstreamId).toBe('resp_1');
    }
    expect(events(runs.gemini.out).at(-1)).toMatchObject({ usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 22, cost: 0.25 } });
  });

  it('escaped quotes, backslashes, unicode escapes and multi-byte text: the same JSON (escapes kept as they came)', () => {
    const deltas = ['"start"', '"\\"quoted\\""', '"back\\\\slash"', '"\\u00e9\\u4e2d\\ud83d\\ude00"', '"é 中 😀"', '"line\\nbreak\\ttab"', '"\\/"', '"}}\\n\\n"'];
    const runs = same(textStream(deltas), { bytes: false });
    const text = events(runs.gemini.out)
      .map((e) => (e as { candidates?: Array<{ content: { parts: Array<{ text?: string }> } }> }).candidates?.[0]?.content.parts[0]?.text ?? '')
      .join('');
    expect(text).toBe(deltas.map((d) => JSON.parse(d) as string).join(''));
    expect(runs.gemini.raw).toBe(deltas.length - 1);
  });

  it('events ending in an odd run of line feeds (`…}\\n\\n\\n`): each event once, as on the IR path', () => {
    // A read whose last blank line ends inside a run of three LFs: the fast path re-sent every event after the first
    // until the stream bound tripped (review of the merged change).
    const deltas = words(6);
    const stream = textStream(deltas).replace(/\n\n(event: response\.output_text\.delta)/g, '\n\n\n$1').replace(/\n\n$/, '\n\n\n');
    const runs = same(stream);
    expect(runs.gemini.out.split('" w3"').length - 1).toBe(1);
    const created = CREATED.replace(/\n\n$/, '\n\n\n');
    expect(relay(Buffer.from(created), [Infinity], true, 'gemini').out).toBe(relay(Buffer.from(created), [Infinity], false, 'gemini').out);
  });

  it('a delta like the last one found before its blank line is (rawDeltaFrom): what follows its bytes decides', () => {
    // After deltas the memo knows: one followed by an `id:` line, by a comment line, by four line feeds, one whose
    // `}` is followed by more fields, and the stream's reads cut everywhere (SIZES): each as on the IR path.
    const d = words(12);
    const ev = textStream(d).split('\n\n');
    const at = (w: string) => ev.findIndex((e) => e.includes(`"delta":${w}`));
    ev[at(d[4])] += '\nid: 7';
    ev[at(d[6])] += '\n: keep-alive';
    ev[at(d[8])] += '\n\n';
    ev[at(d[10])] = ev[at(d[10])].replace(/}$/, ',"x":1}');
    const runs = same(ev.join('\n\n'));
    for (const client of ['gemini', 'chat', 'messages'] as Client[]) expect(runs[client].raw, client).toBeGreaterThanOrEqual(7);
    // A second data line after a delta's bytes: one event whose data is not that JSON (a failure): the same output,
    // failure and counts as the fast path without rawDeltaFrom (the IR path given one read fails before any output).
    const two = textStream(d).split('\n\n');
    two[at(d[5])] += '\ndata: {"more":1}';
    const bytes = Buffer.from(two.join('\n\n'));
    for (const sizes of SIZES) {
      const plain = openaiResponsesAdapter.createStreamDecoder();
      plain.rawDeltaFrom = undefined;
      const without = relayThrough(plain, ENCODERS.gemini(), meta, bytes, sizes, true);
      const withIt = relay(bytes, sizes, true, 'gemini');
      expect({ ...withIt, thrown: String(withIt.thrown) }, String(sizes)).toEqual({ ...without, thrown: String(without.thrown) });
      expect(withIt.out, String(sizes)).toContain('" w4"');
    }
  });

  it('the done item carrying more text than the deltas: the rest is sent after the raw ones, as on the IR path', () => {
    const runs = same(textStream(words(10), `${words(10).map((d) => JSON.parse(d) as string).join('')} and more`));
    expect(runs.chat.out).toContain('" and more"');
  });

  it('a long answer (raw text decoded every few KB): the done item completes it as on the IR path', () => {
    const ws = Array.from({ length: 3000 }, (_, i) => JSON.stringify(i % 7 ? ` w${i}` : ` é\u00e9😀${i}`));
    const bytes = Buffer.from(textStream(ws, `${ws.map((d) => JSON.parse(d) as string).join('')}!`));
    // Reads of 8 KB or more are not joined to what the last one left: a boundary split between two reads (its first
    // LF ending one), reads inside an event longer than a read (the done events), and small reads (joined).
    const straddle = bytes.indexOf('\n\n', 20000) + 1;
    for (const sizes of [[65536], [4096, 333], [9000], [straddle, 9000], [8192, 1, 8191]]) {
      const slow = relay(bytes, sizes, false, 'gemini');
      const fast = relay(bytes, sizes, true, 'gemini');
      expect(fast.raw, String(sizes)).toBe(2999);
      expect(fast.out, String(sizes)).toBe(slow.out);
      expect(fast.out).toContain('{"text":"!"}');
    }
    // Bytes that are not UTF-8 in a large read: decoded with replacement characters, as the IR path does.
    const bad = Buffer.from(bytes);
    bad[bad.indexOf(Buffer.from('é'), 30000)] = 0xff;
    for (const sizes of [[65536], [straddle, 9000]]) expect(relay(bad, sizes, true, 'gemini').out).toBe(relay(bad, sizes, false, 'gemini').out);
  });

  it('a non-plain event mid-stream (logprobs, an annotation, a refusal, a keep-alive) goes through the IR path, in order', () => {
    const ws = words(12);
    const plain = textStream(ws);
    const mid = textDelta(ws[6], 0, 8);
    const odd =
      textDelta(ws[6], 0, 8).replace('"logprobs":[]', '"logprobs":[{"token":"w","logprob":-0.5,"top_logprobs":[]}]') +
      sse('response.output_text.annotation.added', { item_id: 'msg_0', output_index: 0, content_index: 0, annotation_index: 0, annotation: { type: 'url_citation', url: 'https://x', title: 'x', start_index: 0, end_index: 1 } }) +
      ': keep-alive\n\n' +
      sse('response.refusal.delta', { item_id: 'msg_0', output_index: 0, content_index: 1, delta: 'no' });
    const runs = same(plain.replace(mid, odd), { bytes: true });
    expect(runs.chat.raw).toBe(10);
    expect(runs.messages.raw).toBe(9); // after the refusal's block, the text's next delta opens a new block: through the IR path
  });

  it('a function call: its start through the IR path, its argument pieces raw (to chat and Messages; Gemini gathers them)', () => {
    let s = CREATED + messageAdded(0) + textDelta('"Let me check."') + textDelta('" Now."') + messageDone(0, 'Let me check. Now.');
    s += sse('response.output_item.added', { output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '' } });
    const pieces = ['"{\\"city\\":"', '" \\"Par"', '"is\\"}"'];
    for (const p of pieces) s += argsDelta(p);
    s += sse('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 1, arguments: '{"city": "Paris"}' });
    s += sse('response.output_item.done', { output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city": "Paris"}' } });
    s += completed();
    const runs = same(s, { clients: ['chat', 'messages'] });
    expect(runs.chat.raw).toBe(4); // " Now." and the three pieces
    expect(runs.chat.finish).toBe('tool_calls');
    const gemini = same(s, { clients: ['gemini'] });
    expect(gemini.gemini.raw).toBe(1);
    expect(events(gemini.gemini.out)).toContainEqual(expect.objectContaining({ candidates: [expect.objectContaining({ content: { role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } }] } })] }));
  });

  it('reasoning summaries go through the IR path; an incomplete answer ends with its finish', () => {
    let s = CREATED + sse('response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } });
    s += sse('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'think' });
    s += sse('response.output_item.done', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'think' }] } });
    s += messageAdded(1);
    for (const w of words(5)) s += textDelta(w, 1);
    s += completed({ input_tokens: 3, output_tokens: 9 }, 'response.incomplete');
    const runs = same(s);
    expect(runs.gemini.finish).toBe('length');
    expect(runs.gemini.raw).toBe(4);
  });

  it('an error event after content: what came before is sent, the failure is raised once, as on the IR path', () => {
    const stream = textStream(words(10));
    const cut = stream.slice(0, stream.indexOf('event: response.output_text.done')) + sse('error', { code: 'server_error', message: 'Overloaded' }) + textDelta('"late"');
    const runs = same(cut);
    for (const run of Object.values(runs)) {
      expect(run.failure ?? run.thrown).toBeInstanceOf(UpstreamError);
      expect(run.out).not.toContain('late');
    }
  });

  it('a stream that ends before completion fails as on the IR path', () => {
    const stream = textStream(words(10));
    const runs = same(stream.slice(0, stream.indexOf('event: response.output_text.done')));
    expect(runs.gemini.thrown).toBeInstanceOf(UpstreamError);
  });
});

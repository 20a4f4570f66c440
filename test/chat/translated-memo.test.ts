/**
 * The memos of the translated fast path's scans: a stream's next plain event is checked against the fixed parts of the
 * last one, as a ByteShape of its fixed bytes (chat and Anthropic: `DeltaMemo`, core/delta-memo.ts; Responses:
 * `ResponsesMemo`, providers/openai-responses/stream-scan.ts) and must give what the full patterns give, whatever
 * changes.
 */
import { describe, expect, it } from 'vitest';
import type { RawDelta } from '../../src/core/adapters.js';
import { newResponsesMemo, scanResponsesDelta, type ScannedDelta } from '../../src/providers/openai-responses/stream-scan.js';
import { plainChunkDelta } from '../../src/providers/openai/chunk-scan.js';
import { scanContentDelta, scanContentDeltaIn } from '../../src/providers/anthropic/stream-scan.js';
import { DeltaMemo } from '../../src/core/delta-memo.js';
import { readBytes } from '../../src/core/byte-shape.js';

const latin1 = (s: string) => Buffer.from(s).toString('latin1');
const textEvent = (delta: string, item = 0, part = 0, seq = 5) =>
  `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${seq},"item_id":"msg_1","output_index":${item},"content_index":${part},"delta":${delta},"logprobs":[]}`;
const argsEvent = (delta: string, item = 1, seq = 9) => `event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","sequence_number":${seq},"item_id":"fc_1","output_index":${item},"delta":${delta}}`;

describe('Responses deltas recognized against the last one (ResponsesMemo)', () => {
  it('remembers a delta whose obfuscation is followed by its sequence number (OpenAI\'s order): the next deltas match the memo', () => {
    const ev = (seq: number) =>
      `data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"x${seq}","logprobs":[],"obfuscation":"ab${seq}","sequence_number":${seq}}`;
    const memo = newResponsesMemo();
    let viaMemo = 0;
    for (let i = 1; i <= 5; i++) {
      const read = readBytes(Buffer.from(`${ev(i)}\n\n`));
      const shape = memo.shape;
      const d = {} as RawDelta;
      const at = {} as ScannedDelta;
      expect(scanResponsesDelta(read, 0, read.text.length - 2, d, at, memo)).toBe(true);
      expect(read.text.slice(d.from, d.to)).toBe(`"x${i}"`);
      if (shape !== null && memo.shape === shape) viaMemo++;
    }
    expect(viaMemo).toBe(4);
  });

  it('gives what the full patterns give, event after event, when the number, ids, indexes, kind or tail change', () => {
    const events = [
      textEvent('"a"', 0, 0, 1),
      textEvent('"b é"', 0, 0, 2),
      textEvent('"c"', 0, 0, 1234567890123456),
      textEvent('"c"', 0, 0, 12345678901234567), // 17 digits: not the pattern
      textEvent('"c"', 0, 0, 3).replace('"sequence_number":3', '"sequence_number":03'),
      textEvent('""', 0, 0, 4),
      textEvent('"d"', 0, 1, 5), // another part
      textEvent('"e"', 0, 1, 6).replace('"logprobs":[]', '"logprobs":[],"obfuscation":"Zx"'),
      textEvent('"f"', 0, 1, 7).replace('"logprobs":[]', '"logprobs":[1]'),
      textEvent('"g"', 0, 1, 8).slice('event: response.output_text.delta\n'.length), // no event line
      textEvent('"h"', 0, 1, 9).replace('"item_id":"msg_1"', '"item_id":"msg_2"'),
      argsEvent('"{"', 1, 10),
      argsEvent('"}"', 1, 11),
      argsEvent('"}"', 2, 12),
      textEvent('"i"', 0, 1, 13).replace(',"sequence_number":13', ''),
      textEvent('"j"', 0, 1, 14).replace(',"sequence_number":14', ''),
      textEvent('"k"', 0, 1, 15),
      textEvent('"l"', 0, 1, 16).replace('"delta":"l"', '"delta":"l" '),
    ];
    const memo = newResponsesMemo();
    const found = (event: string, m?: ReturnType<typeof newResponsesMemo>) => {
      const read = readBytes(Buffer.from(`xx\n\n${event}\n\n`)); // not at 0: offsets count
      const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
      const at: ScannedDelta = { item: -1, part: -1 };
      return scanResponsesDelta(read, 4, read.text.length - 2, d, at, m) ? { kind: d.kind, item: at.item, part: at.part, token: Buffer.from(read.text.slice(d.from, d.to), 'latin1').toString() } : null;
    };
    const got = events.map((e) => found(e, memo));
    expect(got).toEqual(events.map((e) => found(e)));
    expect(got.map((g) => g && `${g.item}/${g.part} ${g.token}`)).toEqual(['0/0 "a"', '0/0 "b é"', '0/0 "c"', null, null, null, '0/1 "d"', '0/1 "e"', null, '0/1 "g"', '0/1 "h"', '1/-1 "{"', '1/-1 "}"', '2/-1 "}"', '0/1 "i"', '0/1 "j"', '0/1 "k"', null]);
  });
});

// ---- chat upstream plain chunks with a memo of the last head and tail --------------------------------------------

describe('chat plain chunks recognized against the last one (DeltaMemo)', () => {
  it('gives what the full patterns give, chunk after chunk, when the head, the tail or the delta changes', () => {
    const head = (id: string, extra = '') => `data: {"id":"${id}","object":"chat.completion.chunk","created":1699999999,"model":"up-model",${extra}"choices":[{"index":0,"delta":`;
    const tail = (usage = true) => `,"logprobs":null,"finish_reason":null}]${usage ? ',"usage":null' : ''}}`;
    const chunks = [
      `${head('c1', '"system_fingerprint":"fp_1",')}{"content":"a"}${tail()}`,
      `${head('c1', '"system_fingerprint":"fp_1",')}{"content":"b é"}${tail()}`,
      `${head('c1', '"system_fingerprint":"fp_1",')}{"content":""}${tail()}`, // empty: not plain
      `${head('c1', '"system_fingerprint":"fp_1",')}{"content":"c"}${tail(false)}`, // another tail
      `${head('c1', '"system_fingerprint":"fp_1",')}{"content":"d"}${tail(false)}`,
      `${head('c2')}{"content":"e"}${tail(false)}`, // another head
      `${head('c2')}{"content":"f"}`, // the head alone
      `${head('c2')}{"content":"g"},"finish_reason":"stop"}]}`,
      `${head('c2')}{"tool_calls":[{"index":3,"function":{"arguments":"{\\"x\\":"}}]}${tail(false)}`,
      `${head('c2')}{"content":"h"}${tail(false)} `,
      `${head('c2')}{"content":"i"}}${tail(false)}`,
      `${head('c2')}{"reasoning":"j"}${tail(false)}`,
      `${head('c2')}{"content":"k"}${tail(false)}`,
    ];
    const memo = new DeltaMemo();
    const found = (event: string, m?: DeltaMemo) => {
      const read = readBytes(Buffer.from(`xx\n\n${event}\n\n`)); // not at 0: offsets count
      const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
      return plainChunkDelta(read, 4, read.text.length - 2, d, m) ? { kind: d.kind, index: d.index, token: Buffer.from(read.text.slice(d.from, d.to), 'latin1').toString() } : null;
    };
    const got = chunks.map((c) => found(c, memo));
    expect(got).toEqual(chunks.map((c) => found(c)));
    expect(got.map((g) => g?.token ?? null)).toEqual(['"a"', '"b é"', null, '"c"', '"d"', '"e"', null, null, '"{\\"x\\":"', null, null, null, '"k"']);
  });
});

// ---- Anthropic content deltas with a memo of the last one ---------------------------------------------------------

describe('Anthropic content deltas recognized against the last one (DeltaMemo)', () => {
  it('gives what the full pattern gives, delta after delta, when the block, the kind or the string changes', () => {
    const ev = (text: string, index = 0, kind = 'text_delta', key = 'text') => `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${kind}","${key}":${text}}}`;
    const deltas = [
      ev('"a"'),
      ev('"b é \\u00e9 \\" 😀"'),
      ev('""'), // empty: not the pattern
      ev('"c"').slice('event: content_block_delta\n'.length), // no event line
      ev('"d"'),
      ev('"e"', 1),
      ev('"{\\"x\\":"', 1, 'input_json_delta', 'partial_json'),
      ev('"1}"', 1, 'input_json_delta', 'partial_json'),
      ev('"f"', 12),
      ev('"g\u0001"', 12), // a raw control character
      ev('"h"', 12).replace('}}', '} }'),
      ev('"i"', 12),
    ];
    const memo = new DeltaMemo();
    const found = (event: string, m?: DeltaMemo) => {
      const read = readBytes(Buffer.from(`xx\n\n${event}\n\n`)); // not at 0: offsets count
      const d: RawDelta = { kind: 'text_delta', index: -1, buf: '', from: 0, to: 0 };
      const ok = m ? scanContentDeltaIn(read, 4, read.text.length - 2, d, m) : scanContentDelta(read.text, 4, read.text.length - 2, d);
      return ok ? { kind: d.kind, index: d.index, token: Buffer.from(read.text.slice(d.from, d.to), 'latin1').toString() } : null;
    };
    const got = deltas.map((e) => found(e, memo));
    expect(got).toEqual(deltas.map((e) => found(e)));
    expect(got.map((g) => g && `${g.index} ${g.token}`)).toEqual(['0 "a"', '0 "b é \\u00e9 \\" 😀"', null, '0 "c"', '0 "d"', '1 "e"', '1 "{\\"x\\":"', '1 "1}"', '12 "f"', null, null, '12 "i"']);
  });
});

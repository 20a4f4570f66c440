/**
 * The chat → OpenAI-protocol stream relay, unit by unit: ordinary chunks are relayed with only id, created and model
 * replaced and the provider added (without re-serializing them when they start with the usual prefix); every chunk
 * that must change otherwise — usage, finish reason, reasoning_content, a provider field of its own, another key
 * order or spacing — is re-serialized. Either way the client sees the same JSON.
 */
import { describe, expect, it } from 'vitest';
import { codecFor, isPlainContentChunk, plainChunkRest } from '../../src/services/codecs.js';
import type { EndpointDef } from '../../src/core/catalog-types.js';
import type { AnswerMeta } from '../../src/core/adapters.js';
import { sseLimits } from '../../src/providers/sse.js';

const endpoint = { tag: 'sim', provider: 'sim', upstreamModel: 'up-model', supported_parameters: [], pricing: null } as unknown as EndpointDef;
const meta: AnswerMeta = { id: 'gen-1-abc', model: 'test/alpha', provider: 'Sim "A"', created: 1700000000, cost: null, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };

function relay(events: string[]): Array<Record<string, unknown>> {
  const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
  let out = String(s.push(events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n'));
  s.end();
  out += s.finishOut(meta);
  return out
    .split('\n\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

const chunk = (rest: string, head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model",') => head + rest;
const ours = { id: 'gen-1-abc', object: 'chat.completion.chunk', created: 1700000000, model: 'test/alpha', provider: 'Sim "A"' };

describe('chat stream relay (OpenAI protocol upstream)', () => {
  it('ordinary chunks keep every upstream field, with our id, created, model and provider', () => {
    const [role, text] = relay([
      chunk('"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}'),
      chunk('"system_fingerprint":"fp_1","x_new_field":{"a":[1,2]},"choices":[{"index":0,"delta":{"content":"Hi \\"there\\" \\u00e9"},"logprobs":null,"finish_reason":null}]}'),
    ]);
    expect(role).toEqual({ ...ours, system_fingerprint: 'fp_1', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    expect(text).toEqual({ ...ours, system_fingerprint: 'fp_1', x_new_field: { a: [1, 2] }, choices: [{ index: 0, delta: { content: 'Hi "there" é' }, logprobs: null, finish_reason: null }] });
  });

  it('a finish reason is normalized, usage inside a content chunk moves to the final chunk, reasoning_content is mirrored', () => {
    const out = relay([
      chunk('"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}'),
      chunk('"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}'),
      chunk('"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'),
    ]);
    expect(out[0]).toMatchObject({ ...ours, choices: [{ delta: { reasoning_content: 'think', reasoning: 'think' } }] });
    expect(out[1]).toEqual({ ...ours, choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] });
    expect(out[2]).toEqual({ ...ours, choices: [{ index: 0, delta: {}, finish_reason: 'stop', native_finish_reason: 'stop' }] });
    expect(out[3]).toMatchObject({ ...ours, choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  });

  it('an upstream provider field, another key order or spacing: the same JSON through re-serialization', () => {
    const out = relay([
      chunk('"provider":"Upstream","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}'),
      '{"object":"chat.completion.chunk","id":"chatcmpl-1","created":1699999999,"model":"up-model","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}',
      '{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1699999999, "model": "up-model", "choices": [{"index": 0, "delta": {"content": "c"}, "finish_reason": null}]}',
    ]);
    for (const [i, text] of ['a', 'b', 'c'].entries()) expect(out[i]).toEqual({ ...ours, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
  });

  it('plain content chunks (relayed without a parse) are recognized exactly: anything else is parsed', () => {
    const head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model",';
    const plain = (choice: string, before = '"service_tier":"default","system_fingerprint":"fp_1",', after = ',"usage":null') => `${head}${before}"choices":[${choice}]${after}}`;
    const text = (content: string, extra = ',"logprobs":null') => `{"index":0,"delta":{"content":${content}}${extra},"finish_reason":null}`;
    for (const yes of [
      plain(text('"Hi"')),
      plain(text('"Hi \\"there\\" \\u00e9 é \\n\\\\"'), '', ''),
      plain(text('"x"', ''), '"system_fingerprint":null,'),
      plain(text('"x"'), '', ',"service_tier":null,"system_fingerprint":"fp"'),
      plain('{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]},"logprobs":null,"finish_reason":null}'),
      plain('{"index":0,"delta":{"tool_calls":[{"index":12,"function":{"arguments":""}}]},"finish_reason":null}'),
    ]) {
      expect(JSON.parse(yes)).toBeTypeOf('object');
      expect(isPlainContentChunk(yes, head), yes).toBe(true);
      // Relayed as the same JSON without `usage: null`.
      const rest = plainChunkRest(yes, head);
      const { usage: _u, ...expected } = JSON.parse(yes) as Record<string, unknown>;
      expect(JSON.parse(`${head}${rest}`)).toEqual(expected);
    }
    for (const no of [
      plain(text('""')), // no output yet: held, parsed
      plain('{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":"stop"}'),
      plain(text('"x"'), '', ',"usage":{"prompt_tokens":1}'),
      plain(text('"x"'), '', ',"error":{"message":"boom"}'),
      plain(text('"x"'), '"provider":"other",'),
      plain('{"index":0,"delta":{"role":"assistant","content":"x"},"finish_reason":null}'),
      plain('{"index":0,"delta":{"content":"x","reasoning_content":"y"},"finish_reason":null}'),
      plain('{"index":0,"delta":{"tool_calls":[]},"finish_reason":null}'),
      plain('{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}'),
      plain('{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a"}},{"index":1,"function":{"arguments":"b"}}]},"finish_reason":null}'),
      plain('{"index":0,"delta":{"tool_calls":[{"index":01,"function":{"arguments":"a"}}]},"finish_reason":null}'),
      plain(`${text('"x"')},${text('"y"')}`), // two choices
      plain(text('"bad \\x escape"')),
      plain(text('"raw \n newline"')),
      plain(text('"unterminated')),
      plain(text('"x"')) + ' ',
      plain(text('"x"')).replace('"up-model"', '"other-model"'),
      plain(text('"x"'), '"x_extra":1,'),
      plain(text('"x"'), '"usage":null,', ''), // usage: null other than last: parsed (and dropped there)
    ]) {
      expect(isPlainContentChunk(no, head), no).toBe(false);
    }
  });

  it('a stream of plain content chunks reaches the client as the parsing path renders it', () => {
    const events = [
      chunk('"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}'),
      ...['Hel', 'lo \\"w\\"', ' é'].map((c) => chunk(`"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"${c}"},"logprobs":null,"finish_reason":null}],"usage":null}`)),
      chunk('"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}'),
    ];
    const out = relay(events);
    expect(out.slice(1, 4).map((c) => (c.choices as Array<{ delta: { content: string } }>)[0].delta.content)).toEqual(['Hel', 'lo "w"', ' é']);
    // OpenAI's `usage: null` on every chunk but the last is not relayed (the parsed ones and the plain ones alike):
    // usage comes once, on the gateway's final chunk — the hosted API's shape, which its SDK requires.
    for (const c of out.slice(0, 5)) {
      expect(c).toMatchObject({ ...ours, system_fingerprint: 'fp_1' });
      expect(c).not.toHaveProperty('usage');
    }
    expect(out[4]).toMatchObject({ choices: [{ finish_reason: 'stop', native_finish_reason: 'stop' }] });
  });

  it('bytes split anywhere (inside an event, inside a UTF-8 character), CRLF line ends, comments: the same chunks', () => {
    const events = [
      chunk('"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}'),
      ...['Hé', 'llo 日本', ' \\"w\\"'].map((c) => chunk(`"choices":[{"index":0,"delta":{"content":"${c}"},"logprobs":null,"finish_reason":null}],"usage":null}`)),
      chunk('"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}'),
    ];
    const whole = Buffer.from(`: keep-alive\n\n${events.map((e) => `data: ${e}\n\n`).join('')}data: [DONE]\n\n`);
    const run = (parts: Buffer[]) => {
      const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
      let out = '';
      for (const p of parts) out += String(s.push(p));
      s.end();
      out += s.finishOut(meta);
      return { out: out.split('\n\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>), tokens: s.producedTokens, usage: s.usage() };
    };
    const one = run([whole]);
    expect(one.out.slice(1, 4).map((c) => (c.choices as Array<{ delta: { content: string } }>)[0].delta.content)).toEqual(['Hé', 'llo 日本', ' "w"']);
    expect(one.usage).toMatchObject({ promptTokens: 3, completionTokens: 4 });
    // Output counted in the parsed text's characters (not bytes, not escapes): 2, 6 and 4 characters (` "w"`) → 1 + 2
    // + 1 tokens, + 1 for the finish chunk — as the parsing path counts them.
    expect(one.tokens).toBe(5);
    for (const size of [1, 2, 3, 7, 50]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < whole.length; i += size) parts.push(whole.subarray(i, i + size));
      expect(run(parts)).toEqual(one);
    }
    const crlf = run([Buffer.from(whole.toString().replace(/\n/g, '\r\n'))]);
    expect(crlf.out).toEqual(one.out);
  });
});

describe('chat stream relay: plain chunks matched against the last one (chunk-template.ts)', () => {
  const fp = (f: string) => `"system_fingerprint":"${f}",`;
  const content = (text: string, f = 'fp_1') => chunk(`${fp(f)}"choices":[{"index":0,"delta":{"content":"${text}"},"logprobs":null,"finish_reason":null}],"usage":null}`);
  const args = (text: string, f = 'fp_1') => chunk(`${fp(f)}"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"${text}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`);
  const role = chunk(`${fp('fp_1')}"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`);
  const finish = chunk(`${fp('fp_1')}"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`);
  const usage = chunk('"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"total_tokens":12}}');
  /** Deltas of every kind the template path must relay as they came (JSON string contents, as written in JSON). */
  const texts = ['Hel', 'lo', '\\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t', '\\u00e9\\uD83D\\uDE00', 'é日本😀', ' a', '\\\\', 'z\\"'];

  /** Feeds `whole` in reads of `size` bytes (all at once without one): the client's chunks, tokens counted, failure. */
  function run(whole: Buffer, size = whole.length) {
    const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
    let out = '';
    try {
      for (let i = 0; i < whole.length && !s.failure; i += size) out += String(s.push(whole.subarray(i, i + size)));
      if (!s.failure) {
        s.end();
        out += s.finishOut(meta);
      }
    } catch (err) {
      return { out: [], tokens: s.producedTokens, failure: String(err) };
    }
    const chunks = out
      .split('\n\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    return { out: chunks, tokens: s.producedTokens, failure: s.failure ? s.failure.message : null };
  }
  const stream = (events: string[], end = true) => Buffer.from(events.map((e) => `data: ${e}\n\n`).join('') + (end ? 'data: [DONE]\n\n' : ''));
  /** What the client must get for an upstream chunk relayed as is: ours for the base fields, no `usage: null`. */
  const relayed = (e: string) => {
    const { usage: _u, ...rest } = JSON.parse(e) as Record<string, unknown>;
    return { ...rest, ...ours };
  };

  it('every kind of delta, an inert field that changes, a tool call, finish and usage: the chunks as they came, whatever the reads', () => {
    const plain = [...texts.map((t) => content(t)), content('x', 'fp_2'), content('y', 'fp_2'), args('{\\"a\\":'), args(''), args('1}')];
    const events = [role, ...plain, content(''), finish, usage];
    const whole = stream(events);
    const one = run(whole);
    expect(one.failure).toBeNull();
    expect(one.out.slice(0, plain.length + 2)).toEqual([role, ...plain, content('')].map(relayed));
    expect(one.out.map((c) => (c.choices as Array<{ delta: { content?: string } }>)[0]?.delta.content).slice(1, texts.length + 1)).toEqual(texts.map((t) => JSON.parse(`"${t}"`)));
    expect(one.out.at(-1)).toMatchObject({ ...ours, choices: [], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } });
    for (const size of [1, 2, 3, 5, 8, 13, 64, 100, 211, 400]) expect(run(whole, size), `reads of ${size}`).toEqual(one);
    // The same deltas in chunks that never repeat the one before (the fingerprint alternates: each is matched by
    // the patterns): the same output characters counted, so the same tokens.
    const alternating = [role, ...texts.map((t, i) => content(t, `fp_${i % 2}`)), content('x', 'fp_2'), content('y', 'fp_3'), args('{\\"a\\":', 'fp_4'), args('', 'fp_5'), args('1}', 'fp_6'), content(''), finish, usage];
    expect(run(stream(alternating)).tokens).toBe(one.tokens);
  });

  it('reads that sit inside a larger buffer (at an odd offset, between other bytes): the template reads only their own bytes', () => {
    const events = [role, ...texts.map((t) => content(t)), args('{\\"a\\":'), args('1}'), finish, usage];
    const whole = stream(events);
    const one = run(whole);
    for (const size of [whole.length, 97, 250]) {
      const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
      let out = '';
      for (let i = 0; i < whole.length; i += size) {
        const part = whole.subarray(i, i + size);
        // The read's bytes at offset 3 of an ArrayBuffer whose other bytes look like a chunk's
        const host = new Uint8Array(part.length + 11).fill(0x22);
        host.set(part, 3);
        out += String(s.push(new Uint8Array(host.buffer, 3, part.length)));
      }
      s.end();
      out += s.finishOut(meta);
      const chunks = out.split('\n\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
      expect({ out: chunks, tokens: s.producedTokens }, `reads of ${size}`).toEqual({ out: one.out, tokens: one.tokens });
    }
  });

  it('output counted as the parsed text\'s length on every path: escapes one character, a 4-byte character two', () => {
    // Upstreams that escape all non-ASCII (Python's json.dumps) wrote `\u4f60` for one character; it was counted as
    // six (review of the merged change), so a cut stream billed such output several times over.
    const escaped = ['a', ...Array.from({ length: 6 }, () => '\\u4f60\\u597d\\u4f60\\u597d'), '😀😀😀😀😀', '\\n\\t\\"x'];
    // As the parsing path counts: each delta's text length / 4 (at least 1), and 1 for the finish chunk.
    const expected = escaped.reduce((n, t) => n + Math.max(1, Math.ceil((JSON.parse(`"${t}"`) as string).length / 4)), 0) + 1;
    // Template path (the same fingerprint throughout) and pattern path (it alternates), at any read size.
    for (const f of [() => 'fp_1', (i: number) => `fp_${i % 2}`]) {
      const whole = stream([role, ...escaped.map((t, i) => content(t, f(i))), finish, usage]);
      for (const size of [whole.length, 1, 7, 64]) expect(run(whole, size).tokens, `reads of ${size}`).toBe(expected);
    }
  });

  it('a byte that is not UTF-8 after the template was learned: decoded with a replacement character, the stream goes on', () => {
    const before = stream([role, content('a'), content('b')], false);
    const bad = Buffer.concat([before, Buffer.from('data: '), Buffer.from(content('c?d')).fill(0xff, content('c?d').indexOf('?'), content('c?d').indexOf('?') + 1), Buffer.from('\n\n'), stream([content('e'), finish, usage])]);
    const r = run(bad);
    expect(r.failure).toBeNull();
    expect(r.out.slice(1, 5).map((c) => (c.choices as Array<{ delta: { content: string } }>)[0].delta.content)).toEqual(['a', 'b', 'c\ufffdd', 'e']);
    for (const size of [1, 7, 150]) expect(run(bad, size)).toEqual(r);
  });

  it('a chunk like the template whose string is not valid JSON (a bad escape, a raw tab): the stream fails after what came before', () => {
    for (const broken of ['bad \\x escape', 'raw \t tab', 'cut \\u12']) {
      const r = run(stream([role, content('a'), content('b'), content(broken), content('c')]));
      expect(r.failure, broken).toBe('Provider sent an invalid stream event');
      expect(r.out.map((c) => (c.choices as Array<{ delta: { content: string } }>)[0].delta.content)).toEqual(['', 'a', 'b']);
    }
  });

  it('CRLF line ends from a later read on: the same chunks as with LF', () => {
    const events = [role, ...texts.map((t) => content(t)), finish, usage];
    const lf = stream(events);
    const cut = stream(events.slice(0, 4), false).length + 40; // inside the fifth event
    const mixed = Buffer.concat([lf.subarray(0, cut), Buffer.from(lf.subarray(cut).toString().replace(/\n/g, '\r\n'))]);
    const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
    const out = String(s.push(mixed.subarray(0, cut))) + String(s.push(mixed.subarray(cut))) + (s.end(), s.finishOut(meta));
    const chunks = out
      .split(/\r?\n\r?\n/)
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    expect(chunks).toEqual(run(lf).out);
  });
  it('runs of chunks like the template broken by any other event (empty string, another field, a blank line, a tool call): each relayed as it came', () => {
    const events = [role, content('a'), content('b'), content(''), content('c'), content('d'), content('e', 'fp_2'), content('f', 'fp_2'), content('g', 'fp_2'), args('{}'), args('x'), content('h', 'fp_2'), content('i', 'fp_2'), finish, usage];
    // A second blank line before `content('g')`: its event is read on its own, the run goes on after it.
    const whole = Buffer.from(events.map((e) => `data: ${e}\n\n${e === content('f', 'fp_2') ? '\n' : ''}`).join('') + 'data: [DONE]\n\n');
    const one = run(whole);
    expect(one.failure).toBeNull();
    expect(one.out.slice(0, events.length - 2)).toEqual(events.slice(0, -2).map(relayed));
    for (const size of [1, 3, 50, 211, 333, 700]) expect(run(whole, size), `reads of ${size}`).toEqual(one);
    // The same deltas in chunks that never repeat the one before (each read by the patterns): the same tokens.
    const alternating = events.map((e, i) => e.replace('"system_fingerprint":"fp_', `"system_fingerprint":"fp_${i % 2}`));
    expect(run(stream(alternating)).tokens).toBe(one.tokens);
  });

  it('outputs kept while later reads of two streams are relayed (the socket may hold them) do not change', () => {
    const many = stream([role, ...Array.from({ length: 3000 }, (_, i) => content(texts[i % texts.length])), finish, usage]);
    const other = stream([role, ...Array.from({ length: 3000 }, (_, i) => content(`w${i}`, 'fp_9')), finish, usage]);
    const open = () => codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
    /** The client's text of `whole` in reads of `size`, each read's output turned into text at once. */
    const atOnce = (whole: Buffer, size: number) => {
      const s = open();
      let out = '';
      for (let i = 0; i < whole.length; i += size) out += String(s.push(whole.subarray(i, i + size)));
      return out + (s.end(), s.finishOut(meta));
    };
    for (const size of [97, 1000, 5000, 9000, 20000]) {
      const [a, b] = [open(), open()];
      const kept: Array<Array<string | Buffer>> = [[], []];
      for (let i = 0; i < Math.max(many.length, other.length); i += size) {
        kept[0].push(a.push(many.subarray(i, i + size)));
        kept[1].push(b.push(other.subarray(i, i + size)));
      }
      const text = (parts: Array<string | Buffer>) => parts.map((p) => String(p)).join('');
      expect(text(kept[0]) + (a.end(), a.finishOut(meta)), `reads of ${size}`).toBe(atOnce(many, size));
      expect(text(kept[1]) + (b.end(), b.finishOut(meta)), `reads of ${size}`).toBe(atOnce(other, size));
    }
  });

  it('an event past the bound fails the stream after the complete events of its read went out (502)', () => {
    const bound = sseLimits.eventChars;
    sseLimits.eventChars = 500;
    try {
      const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
      const first = String(s.push(Buffer.from(`data: ${role}\n\ndata: ${content('a')}\n\n`)));
      expect(s.failure).toBeNull();
      const second = String(s.push(Buffer.from(`data: ${content('b')}\n\ndata: ${content('c')}\n\ndata: ${'x'.repeat(600)}`)));
      expect(s.failure?.message).toMatch(/larger than 500/);
      const deltas = (first + second)
        .split('\n\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => (JSON.parse(l.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content);
      expect(deltas).toEqual(['', 'a', 'b', 'c']);
      expect(s.producedTokens).toBe(3);
    } finally {
      sseLimits.eventChars = bound;
    }
  });
});

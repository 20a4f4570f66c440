/**
 * core/lazy-body.ts and core/json-simd.ts: a large body's conversation left as bytes only when the strict scan takes
 * it, parsed on first read to exactly what JSON.parse gives; anything the scan does not expect goes to the eager
 * path (null). The SIMD finder agrees with the plain loop.
 */
import { describe, expect, it } from 'vitest';
import { findSpecialLoop, KEEP_MEMORY_BYTES, scan, scanner, scannerMemoryBytes, scannerOfParts, simdScan } from '../../src/core/json-simd.js';
import { conversationBytes, lazyConversation, lazyPromptTokens, lazyStats, parseLazy, partsSlice, sameConversation, shareLazy } from '../../src/core/lazy-body.js';
import { estimatePromptTokens } from '../../src/core/chat-shape.js';
import { forgetRaw, rawBody, rawField, rememberRaw, spliceRaw } from '../../src/core/raw-json.js';
import { acceptsAnyString, standInDecides } from '../../src/http/plugins/lazy-validation.js';
import { ChatCompletionBody, MessagesBody, ResponsesBody } from '../../src/http/schemas/inference.js';

const text = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);
const turns = (n: number, per = 200) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text(per) }));
const big = (extra: Record<string, unknown> = {}, key = 'messages') => JSON.stringify({ model: 'm', ...extra, [key]: turns(500) });

describe('the SIMD finder', () => {
  it('loads here and agrees with the plain loop', () => {
    expect(simdScan).toBe(true);
    for (let trial = 0; trial < 300; trial++) {
      const b = Buffer.alloc(300 + trial * 7, 0x61);
      for (let j = 0; j < trial % 5; j++) b[(trial * 131 + j * 977) % b.length] = [0x22, 0x5c, 0x00, 0x1f, 0x20, 0x7f][(trial + j) % 6];
      const find = scanner(b);
      for (const [from, to] of [[0, b.length], [trial % 50, b.length - (trial % 70)], [5, 200]]) expect(find(from, to)).toBe(findSpecialLoop(b, from, to));
    }
  });
});

describe('the SIMD finder at block edges', () => {
  it('finds a hit at every place in and across 64-byte turns, and never one at or past `to`', () => {
    const b = Buffer.alloc(400, 0x61);
    const find = scanner(b);
    for (let hit = 0; hit < 200; hit++) {
      // One special byte at `hit` (the copy in the module's memory is rewritten each time: scanner copies again).
      b.fill(0x61);
      b[hit] = [0x22, 0x5c, 0x0a][hit % 3];
      // Special bytes past every `to` below: in the memory the last turn reads beyond `to`.
      for (let k = 300; k < 400; k += 7) b[k] = 0x22;
      const f = scanner(b);
      expect(f).toBe(find);
      for (const from of [0, 1, 15, 16, 63, 64, 65, hit, hit + 1]) {
        for (const to of [hit, hit + 1, hit + 2, hit + 63, hit + 64, 299, 300, 301]) {
          if (to > b.length) continue;
          expect(f(from, to)).toBe(findSpecialLoop(b, from, to));
        }
      }
    }
    // An empty or reversed range gives `to`, as the plain loop does.
    expect(find(50, 50)).toBe(50);
    expect(find(60, 50)).toBe(findSpecialLoop(b, 60, 50));
  });
});

describe("the SIMD finder's memory", () => {
  /** A body of `n` bytes with special bytes near its end: where `scan` finds the first from 0, and from past it. */
  const body = (n: number) => {
    const b = Buffer.alloc(n, 0x61);
    b[n - 100] = 0x22;
    b[n - 3] = 0x5c;
    return b;
  };
  const finds = (b: Buffer) => scan(b, (find) => [find(0, b.length), find(b.length - 99, b.length)]);

  it('is kept for bodies up to KEEP_MEMORY_BYTES, and replaced by a one-page instance after a larger one', () => {
    const mb = body(1 << 20);
    expect(finds(mb)).toEqual([mb.length - 100, mb.length - 3]);
    const kept = scannerMemoryBytes();
    expect(kept).toBeGreaterThan(1 << 20);
    expect(kept).toBeLessThanOrEqual(KEEP_MEMORY_BYTES);
    // Reused as it is for a smaller body.
    expect(finds(body(4096))).toEqual([3996, 4093]);
    expect(scannerMemoryBytes()).toBe(kept);

    const large = body(KEEP_MEMORY_BYTES + (2 << 20));
    expect(finds(large)).toEqual([large.length - 100, large.length - 3]);
    expect(scannerMemoryBytes()).toBe(65536); // replaced once the body was scanned: a fresh instance of one page
    expect(finds(body(4096))).toEqual([3996, 4093]);
    expect(scannerMemoryBytes()).toBe(65536);
    // The fresh instance grows for a body again, and agrees with the plain loop.
    const again = body(300_000);
    expect(finds(again)).toEqual([findSpecialLoop(again, 0, again.length), findSpecialLoop(again, again.length - 99, again.length)]);
  });
});

describe('parseLazy', () => {
  it('leaves a conversation of the common shape as bytes, parsed on first read to what JSON.parse gives', () => {
    const t = big({ temperature: 0.5, stream: true });
    const lazy = parseLazy(Buffer.from(t))!;
    expect(lazy).not.toBeNull();
    const before = lazyStats.materialized;
    expect(lazyConversation(lazy.body)?.count).toBe(500);
    expect(lazyConversation(lazy.body)?.roles).toEqual(['user', 'assistant']);
    expect(lazyPromptTokens(lazy.body)).toBe(estimatePromptTokens(JSON.parse(t).messages));
    expect(lazy.body.temperature).toBe(0.5);
    expect(Object.keys(lazy.body)).toEqual(['model', 'temperature', 'stream', 'messages']);
    expect(lazyStats.materialized).toBe(before);
    expect(lazy.body).toEqual(JSON.parse(t));
    expect(lazyStats.materialized).toBe(before + 1);
    expect(lazyConversation(lazy.body)).toBeNull();
    expect(conversationBytes(lazy.body, 'messages')?.toString()).toBe(JSON.stringify(JSON.parse(t).messages));
  });

  it('counts escapes as one character, as the parsed strings do', () => {
    const messages = turns(300).map((m, i) => ({ ...m, content: `${m.content} "q" \\ / \n\t\r\b\f ${i}` }));
    const t = JSON.stringify({ model: 'm', messages });
    const lazy = parseLazy(Buffer.from(t))!;
    expect(lazyPromptTokens(lazy.body)).toBe(estimatePromptTokens(messages));
    expect(lazy.body.messages).toEqual(messages);
  });

  it('takes Responses `input` the same way', () => {
    const lazy = parseLazy(Buffer.from(big({}, 'input')))!;
    expect(lazyConversation(lazy.body, 'input')?.count).toBe(500);
    expect(lazyConversation(lazy.body, 'messages')).toBeNull();
  });

  it('leaves to the eager path anything else', () => {
    const ok = big();
    const cases = [
      ok.replace('"content":"lorem', '"content":"\\u0041lorem'), // \u escape
      ok.replace('"content":"lorem', '"content":"\u0001lorem'), // raw control character
      ok.replace('"content":"lorem', '"content":"\\xlorem'), // bad escape
      ok.replace('"role":"user"', '"role":"user","name":"n"'), // another key
      ok.replace('"role":"user",', ''), // no role
      ok.replace('"role":"user"', '"role":1'), // role not a string
      ok.replace('"role":"user"', '"role":"user","role":"user"'), // duplicate key
      ok.replace(/,"content":"[^"]*"\}\]/, ',"content":[{"type":"text","text":"x"}]}]'), // content parts
      ok.replace('"messages":[', '"messages":[],"x":['), // empty conversation
      ok.replace('{"model":"m"', '{"model":"m","messages":1'), // duplicate top-level key
      ok.replace(/\}\]\}$/, '}]'), // truncated
      ok.replace('"messages"', '"mess\\u0061ges"'), // escaped key
      `[${ok}]`, // not an object
      JSON.stringify({ model: 'm', messages: turns(2) }), // small conversation
    ];
    for (const c of cases) {
      let got: unknown = null;
      try {
        got = parseLazy(Buffer.from(c));
      } catch {
        got = 'throws';
      }
      expect(got === null || got === 'throws', c.slice(0, 80)).toBe(true);
    }
  });

  it('throws what JSON.parse throws for an invalid rest of the body', () => {
    expect(() => parseLazy(Buffer.from(big().replace('"model":"m"', '"model":m')))).toThrow(SyntaxError);
  });

  it('agrees with JSON.parse on whitespace and key order', () => {
    const t = ` { "messages" : [ { "content" : "${text(70_000)}" , "role" : "system" } ,\n{"role":"user","content":"x"} ] , "model" : "m" } `;
    const lazy = parseLazy(Buffer.from(t))!;
    expect(lazy.body).toEqual(JSON.parse(t));
  });
});

describe('a lazy conversation through the same-protocol body', () => {
  it('is shared, spliced as received and hashed without being read', () => {
    const t = big({ temperature: 1 });
    const bytes = Buffer.from(t);
    const { body } = parseLazy(bytes)!;
    rememberRaw(body, bytes);
    const before = lazyStats.materialized;
    const out: Record<string, unknown> = { model: 'up' };
    shareLazy(body, out, 'messages');
    expect(sameConversation(out, body, 'messages')).toBe(true);
    const parts = spliceRaw(body, out, 'messages') as Buffer[];
    expect(JSON.parse(Buffer.concat(parts).toString())).toEqual({ model: 'up', messages: JSON.parse(t).messages });
    expect(rawBody(body)).toBe(bytes);
    expect(rawField(body, 'messages')?.length).toBe(Buffer.byteLength(JSON.stringify(JSON.parse(t).messages)));
    expect(lazyStats.materialized).toBe(before);
  });

  it('is no longer the client bytes once replaced', () => {
    const bytes = Buffer.from(big());
    const { body } = parseLazy(bytes)!;
    rememberRaw(body, bytes);
    body.messages = [{ role: 'user', content: 'other' }];
    expect(rawField(body, 'messages')).toBeNull();
    expect(rawBody(body)).toBeNull();
    const out: Record<string, unknown> = {};
    shareLazy(body, out, 'messages');
    expect(out.messages).toEqual([{ role: 'user', content: 'other' }]);
  });

  it('is no longer the client bytes once changed in place and forgotten (forgetRaw)', () => {
    const bytes = Buffer.from(big());
    const { body } = parseLazy(bytes)!;
    rememberRaw(body, bytes);
    const messages = body.messages as { role: string; content: string }[];
    messages[0].content = 'changed in place';
    expect(rawField(body, 'messages')).not.toBeNull(); // the same array: only forgetRaw can tell
    forgetRaw(body);
    expect(rawField(body, 'messages')).toBeNull();
    expect(conversationBytes(body, 'messages')).toBeNull();
    expect((body.messages as { content: string }[])[0].content).toBe('changed in place');
  });

  it('an alias assigned a new value no longer stands for the client bytes', () => {
    const { body } = parseLazy(Buffer.from(big()))!;
    const out: Record<string, unknown> = {};
    shareLazy(body, out, 'messages');
    out.messages = [];
    expect(sameConversation(out, body, 'messages')).toBe(false);
    expect(lazyConversation(body)).not.toBeNull();
  });
});

describe('the stand-in validation', () => {
  it('decides for the three inference schemas, whose message content takes any string', () => {
    expect(standInDecides(ChatCompletionBody, 'messages')).toBe(true);
    expect(standInDecides(MessagesBody, 'messages')).toBe(true);
    expect(standInDecides(ResponsesBody, 'input')).toBe(true);
  });

  it('does not decide where content strings, counts or uniqueness are constrained', () => {
    expect(acceptsAnyString({ type: 'string', maxLength: 3 })).toBe(false);
    expect(acceptsAnyString({ type: 'string', pattern: 'a' })).toBe(false);
    const item = (content: object) => ({ type: 'object', properties: { role: { type: 'string' }, content } });
    expect(standInDecides({ properties: { messages: { type: 'array', items: item({ type: 'string', minLength: 1 }) } } }, 'messages')).toBe(false);
    expect(standInDecides({ properties: { messages: { type: 'array', maxItems: 3, items: item({ type: 'string' }) } } }, 'messages')).toBe(false);
    expect(standInDecides({ properties: { messages: { type: 'array', uniqueItems: true, items: item({ type: 'string' }) } } }, 'messages')).toBe(false);
    expect(standInDecides({ properties: { messages: { type: 'array', items: { type: 'object', additionalProperties: { type: 'number' } } } } }, 'messages')).toBe(false);
    expect(standInDecides({ properties: { messages: { type: 'array', items: item({ type: 'string' }) } } }, 'messages')).toBe(true);
  });
});

describe('a lazy conversation kept as the reads it arrived in (http/plugins/body-reader.ts)', () => {
  const join = (b: Buffer | Buffer[] | null) => (b === null ? null : Array.isArray(b) ? Buffer.concat(b) : b);

  it('partsSlice gives the bytes of any span, across any cut', () => {
    const whole = Buffer.from('abcdefghijklmnopqrstuvwxyz');
    for (const cuts of [[1], [5, 6, 20], [3, 9, 12, 25], [13]]) {
      const parts = [0, ...cuts].map((c, i, all) => whole.subarray(c, all[i + 1] ?? whole.length));
      for (let start = 0; start < whole.length; start++)
        for (let end = start + 1; end <= whole.length; end++) expect(join(partsSlice(parts, start, end))!.toString()).toBe(whole.toString('latin1', start, end));
    }
  });

  it('is scanned from a passing copy, spliced, parsed and hashed from the reads themselves', () => {
    const t = big({ temperature: 1 });
    const whole = Buffer.from(t);
    for (const size of [1000, 65536, 7919]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < whole.length; i += size) parts.push(Buffer.from(whole.subarray(i, i + size)));
      const scan = scannerOfParts(parts, whole.length)!;
      expect(scan.view.equals(whole)).toBe(true);
      const { body } = parseLazy(scan.view, scan.find, parts)!;
      rememberRaw(body, parts);
      // The passing copy is overwritten by the next scan: nothing kept may depend on it.
      scannerOfParts([Buffer.alloc(whole.length, 0x20)], whole.length);
      const before = lazyStats.materialized;
      const out: Record<string, unknown> = { model: 'up' };
      shareLazy(body, out, 'messages');
      const sent = Buffer.concat(spliceRaw(body, out, 'messages') as Buffer[]);
      expect(JSON.parse(sent.toString())).toEqual({ model: 'up', messages: JSON.parse(t).messages });
      expect(join(conversationBytes(body, 'messages'))!.toString()).toBe(JSON.stringify(JSON.parse(t).messages));
      expect(lazyStats.materialized).toBe(before);
      expect(rawBody(body)!.equals(whole)).toBe(true);
      expect(body.messages).toEqual(JSON.parse(t).messages);
    }
  });
});

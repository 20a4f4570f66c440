/**
 * core/lazy-body.ts on bodies that are not ASCII (CJK text, emoji: real prompts): the conversation is left as bytes
 * when the body is well-formed UTF-8, counted in UTF-16 code units for the prompt estimate and in UTF-8 bytes for the
 * spend bound (as the parsed strings measure), and parsed on first read to what JSON.parse gives, also from reads cut
 * mid-character. Malformed UTF-8 and roles that are not ASCII go to the eager path. The SIMD counter agrees with
 * decoding.
 */
import { describe, expect, it } from 'vitest';
import { scannerOfParts, utf16Units, utf16UnitsLoop } from '../../src/core/json-simd.js';
import { conversationBytes, lazyConversation, lazyPromptTokens, lazyStats, parseLazy } from '../../src/core/lazy-body.js';
import { estimatePromptTokens } from '../../src/core/chat-shape.js';
import { lazyTokensBound, valueTokensBound } from '../../src/core/spend-ask.js';

const WORDS = '日本語のテキスト、中文文本和한국어 텍스트 🙂🚀✨ mixed «quotes» \n "q" é ';
const text = (n: number, i = 0) => `${i} ${WORDS.repeat(Math.ceil(n / WORDS.length))}`;
const turns = (n: number, per = 200) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text(per, i) }));

describe('the SIMD UTF-16 counter', () => {
  it('gives what decoding gives, at every offset across its 16-byte blocks', () => {
    const b = Buffer.from(WORDS.repeat(8) + '🙂'.repeat(40) + 'abc');
    const scan = scannerOfParts([b], b.length)!;
    for (let from = 0; from < 80; from++) {
      for (let to = from; to <= b.length; to += 7) {
        // Whole characters only (the counter's input is valid UTF-8 between two ASCII bytes): compare at their starts.
        if ((b[from] & 0xc0) === 0x80 || (to < b.length && (b[to] & 0xc0) === 0x80)) continue;
        const want = b.toString('utf8', from, to).length;
        expect(utf16Units(scan.view, from, to)).toBe(want);
        expect(utf16UnitsLoop(b, from, to)).toBe(want);
      }
    }
  });
});

describe('parseLazy of a body that is not ASCII', () => {
  it('leaves the conversation as bytes, estimates and bounds it as the parsed strings do, and parses it on first read', () => {
    const messages = turns(400);
    const t = JSON.stringify({ model: 'm', system_note: 'système 日本', messages });
    const lazy = parseLazy(Buffer.from(t))!;
    expect(lazy).not.toBeNull();
    const c = lazyConversation(lazy.body)!;
    expect(c.count).toBe(400);
    expect(c.chars).toBe(messages.reduce((n, m) => n + m.content.length, 0));
    expect(c.contentBytes).toBe(messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0));
    expect(lazyPromptTokens(lazy.body)).toBe(estimatePromptTokens(messages));
    expect(lazyTokensBound(c)).toBe(valueTokensBound(messages));
    expect(lazy.body.system_note).toBe('système 日本');
    expect(conversationBytes(lazy.body, 'messages')!.toString()).toBe(JSON.stringify(messages));
    const before = lazyStats.materialized;
    expect(lazy.body).toEqual(JSON.parse(t));
    expect(lazyStats.materialized).toBe(before + 1);
  });

  it('is parsed right from reads cut in the middle of a character', () => {
    const t = JSON.stringify({ model: 'm', messages: turns(300) });
    const whole = Buffer.from(t);
    let midCharacter = 0;
    for (const size of [1000, 1001, 1002, 7919, 65537]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < whole.length; i += size) parts.push(Buffer.from(whole.subarray(i, i + size)));
      midCharacter += parts.filter((p) => (p[0] & 0xc0) === 0x80).length;
      const scan = scannerOfParts(parts, whole.length)!;
      const { body } = parseLazy(scan.view, scan.find, parts)!;
      expect(lazyPromptTokens(body)).toBe(estimatePromptTokens(JSON.parse(t).messages));
      expect(body.messages).toEqual(JSON.parse(t).messages);
    }
    expect(midCharacter).toBeGreaterThan(10);
  });

  it('leaves malformed UTF-8 and a role that is not ASCII to the eager path', () => {
    const ok = Buffer.from(JSON.stringify({ model: 'm', messages: turns(400) }));
    const at = ok.indexOf('"content":"') + 11;
    const bad = (bytes: number[]) => Buffer.concat([ok.subarray(0, at), Buffer.from(bytes), ok.subarray(at)]);
    expect(parseLazy(bad([0xff]))).toBeNull(); // not UTF-8
    expect(parseLazy(bad([0xed, 0xa0, 0x80]))).toBeNull(); // an encoded lone surrogate
    expect(parseLazy(bad([0xe6, 0x97]))).toBeNull(); // a truncated sequence
    expect(parseLazy(Buffer.from(ok.toString().replace('"role":"user"', '"role":"usér"')))).toBeNull();
    expect(parseLazy(ok)).not.toBeNull();
  });
});

/**
 * Gemini `contents` left as bytes (core/lazy-scan.ts scanContents, core/lazy-body.ts): only contents of exactly
 * `role` and `parts`, the parts of exactly one non-empty `text`; counted for the prompt estimate and the spend bound as
 * the parsed body is; parsed on first read to what JSON.parse gives; anything else eager. The stand-in decides the
 * Gemini schema's validation.
 */
import { describe, expect, it } from 'vitest';
import { conversationBytes, lazyConversation, lazyCopy, lazyStats, parseLazy, standIn } from '../../src/core/lazy-body.js';
import { lazyTokensBound, promptTokensBound, valueTokensBound } from '../../src/core/spend-ask.js';
import { contentsStandInDecides } from '../../src/http/plugins/lazy-validation.js';
import { GenerateContentBody } from '../../src/http/schemas/gemini.js';
import { geminiToIr } from '../../src/inbound/gemini.js';
import { lazyIr, lazyIrPromptTokens } from '../../src/services/chat/lazy-ir.js';
import { geminiInbound } from '../../src/inbound/gemini.js';
import { irPromptTokens } from '../../src/core/chat-shape.js';

const text = (i: number) => `${i} lorem ipsum "dolor" sit\namet 日本語 🙂 `.repeat(40);
const contents = (n = 300) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'model' : 'user', parts: i % 10 === 0 ? [{ text: text(i) }, { text: 'more' }] : [{ text: text(i) }] }));
const body = (extra: Record<string, unknown> = {}) => JSON.stringify({ ...extra, contents: contents() });

describe('parseLazy of a Gemini body', () => {
  it('leaves contents of text parts as bytes, counted as the parsed body is, parsed on first read', () => {
    const t = body({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { temperature: 0.5 } });
    const lazy = parseLazy(Buffer.from(t))!;
    expect(lazy.key).toBe('contents');
    const c = lazyConversation(lazy.body, 'contents')!;
    const parsed = JSON.parse(t);
    expect(c).toMatchObject({ count: 300, roles: ['user', 'model'], texts: 330, repeats: false });
    expect(lazyTokensBound(c)).toBe(valueTokensBound(parsed.contents));
    expect(promptTokensBound(lazy.body)).toBe(promptTokensBound(parsed));
    const ir = lazyIr(geminiInbound, lazy.body, 'contents')!;
    expect(ir.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(lazyIrPromptTokens(ir)).toBe(irPromptTokens(geminiToIr(parsed)));
    expect(conversationBytes(lazy.body, 'contents')!.toString()).toBe(JSON.stringify(parsed.contents));
    const before = lazyStats.materialized;
    expect(lazy.body).toEqual(parsed);
    expect(lazyStats.materialized).toBe(before + 1);
  });

  it('notes two neighbours of one role', () => {
    const list = contents();
    list[2].role = 'model';
    expect(lazyConversation(parseLazy(Buffer.from(JSON.stringify({ contents: list })))!.body, 'contents')!.repeats).toBe(true);
  });

  it('notes a model content of several text parts (the IR joins them)', () => {
    const list = contents();
    list[3].parts = [{ text: 'Hello' }, { text: ' world' }];
    expect(lazyConversation(parseLazy(Buffer.from(JSON.stringify({ contents: list })))!.body, 'contents')!.repeats).toBe(true);
  });

  it('leaves to the eager path any other part or shape', () => {
    const ok = body();
    const cases = [
      ok.replace('"parts":[{"text":"', '"parts":[{"text":"","x":1},{"text":"'), // another key in a part
      ok.replace('"parts":[{"text":"', '"parts":[{"text":""},{"text":"'), // an empty text
      ok.replace('"parts":[{"text":"', '"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}},{"text":"'), // media
      ok.replace('"parts":[{"text":"', '"parts":[{"thought":true,"text":"'), // a thought
      JSON.stringify({ contents: contents().map((c, i) => (i === 9 ? { ...c, parts: [] } : c)) }), // no parts
      ok.replace('{"role":"user",', '{'), // no role
      ok.replace('"role":"user"', '"role":"user","role":"user"'), // a duplicate key
      ok.replace('"role":"user"', '"role":"usér"'), // a role not ASCII
      ok.replace('"text":"', '"text":"\\u0041'), // a \u escape
    ];
    cases.forEach((c, i) => expect(parseLazy(Buffer.from(c)), `case ${i}`).toBeNull());
  });
});

describe('a lazy Gemini body', () => {
  it('is copied with other fields without being read (lazyCopy), the copy the same lazy conversation', () => {
    const { body: b } = parseLazy(Buffer.from(body()))!;
    const before = lazyStats.materialized;
    const copy = lazyCopy(b, { model: 'm', stream: true });
    expect(lazyStats.materialized).toBe(before);
    expect(lazyConversation(copy, 'contents')).toBe(lazyConversation(b, 'contents'));
    expect(copy.model).toBe('m');
    expect(copy.contents).toEqual(JSON.parse(body()).contents);
    expect(b.contents).toBe(copy.contents);
    expect(lazyStats.materialized).toBe(before + 1);
  });

  it('is validated through its stand-in under the GenerateContentRequest schema', () => {
    expect(contentsStandInDecides(GenerateContentBody)).toBe(true);
    expect(contentsStandInDecides({ type: 'object', properties: { contents: { type: 'array', items: { type: 'object', properties: { role: { type: 'string' }, parts: { type: 'array', items: { type: 'object', properties: { text: { type: 'string', minLength: 1 } } } } } } } } })).toBe(false);
    const { body: b } = parseLazy(Buffer.from(body()))!;
    expect(standIn(lazyConversation(b, 'contents')!)).toEqual([{ role: 'user', parts: [{ text: ' ' }] }, { role: 'model', parts: [{ text: ' ' }] }]);
  });
});

/**
 * Issue 18: a large body that is not ASCII (CJK text, emoji) takes the lazy path as an ASCII one does
 * (core/lazy-body.ts): its conversation reaches a same-protocol upstream unparsed and as received, is parsed to the
 * same strings when translated, and is bounded for spending by its UTF-8 bytes; malformed UTF-8 and a role that is not
 * ASCII are left to the eager path, with its answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { lazyStats } from '../../src/core/lazy-body.js';
import { promptTokensBound } from '../../src/core/spend-ask.js';
import { createInferenceKey } from '../helpers.js';
import type { Json } from './util.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const WORDS = '日本語のテキスト、中文文本和한국어 텍스트 🙂🚀✨ «quotes» \\n \\"q\\" é ';
/** ~120 KB of turns as raw JSON, alternating user/assistant (test/alpha's context is 32,000 tokens). */
const turns = (n = 200, role: (i: number) => string = (i) => (i % 2 ? 'assistant' : 'user')) =>
  `[${Array.from({ length: n }, (_, i) => `{"role":"${role(i)}","content":"${WORDS.repeat(6)} ${i}"}`).join(',')}]`;

async function post(path: string, text: string | Buffer, key = env.key) {
  const res = await env.t.call('POST', path, { key, raw: text as string });
  return { status: res.status, json: res.body as Json };
}

describe('a large body that is not ASCII', () => {
  it('reaches a same-protocol upstream with its messages unparsed and as received', async () => {
    const text = `{"model":"test/alpha","temperature":0.5,"messages":${turns()}}`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(100 * 1024);
    const before = lazyStats.materialized;
    const r = await post('/chat/completions', text);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    const up = env.sim.stats('sim-a').lastBody as Json;
    expect(up.messages).toEqual(JSON.parse(turns()));
    expect(up.temperature).toBe(0.5);
  });

  it('is parsed to the same strings when translated (an Anthropic upstream)', async () => {
    const before = lazyStats.materialized;
    const r = await post('/chat/completions', `{"model":"test/claude","messages":${turns()}}`);
    expect(r.status).toBe(200);
    // Taken lazily (parsed once, by the translation), and decoded as UTF-8.
    expect(lazyStats.materialized).toBe(before + 1);
    const up = env.sim.stats('sim-anthropic').lastBody as Json;
    const sent = (up.messages as Json[]).map((m) => (typeof m.content === 'string' ? m.content : (m.content as Json[]).map((b) => b.text).join('')));
    expect(sent).toEqual((JSON.parse(turns()) as Json[]).map((m) => m.content));
  });

  it('a Messages body goes to an Anthropic upstream unparsed', async () => {
    const before = lazyStats.materialized;
    const r = await post('/messages', `{"model":"test/claude","max_tokens":50,"system":"簡潔に","messages":${turns()}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    const up = env.sim.stats('sim-anthropic').lastBody as Json;
    expect(up.messages).toEqual(JSON.parse(turns()));
    expect(up.system).toBe('簡潔に');
  });

  it('answers 400 naming a role the API does not take, also when the role is not ASCII', async () => {
    for (const bad of ['robot', 'usér']) {
      const r = await post('/chat/completions', `{"model":"test/alpha","messages":${turns(200, (i) => (i === 121 ? bad : 'user'))}}`);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toContain('messages[121].role');
    }
  });

  it('with malformed UTF-8 is served as the eager path serves it (U+FFFD), not passed on as bytes', async () => {
    const good = Buffer.from(`{"model":"test/alpha","messages":${turns()}}`);
    const at = good.indexOf('"content":"') + 11;
    const bad = Buffer.concat([good.subarray(0, at), Buffer.from([0xff]), good.subarray(at)]);
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, raw: bad as unknown as string });
    expect(res.status).toBe(200);
    const up = env.sim.stats('sim-a').lastBody as Json;
    expect(((up.messages as Json[])[0].content as string).startsWith('\uFFFD')).toBe(true);
  });

  it('reserves exactly the parsed body\'s prompt bound (its UTF-8 bytes), the conversation unparsed', async () => {
    const text = `{"model":"test/alpha","max_tokens":50,"messages":${turns()}}`;
    const reserve = promptTokensBound(JSON.parse(text)) + 50;
    const limited = async (tpm: number) => (await createInferenceKey(env.t, { name: `tpm-${tpm}`, limit: 100, rate_limit: { tokens_per_minute: tpm } })).key;
    const before = lazyStats.materialized;
    expect((await post('/chat/completions', text, await limited(reserve - 1))).status).toBe(429);
    expect((await post('/chat/completions', text, await limited(reserve))).status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
  });
});

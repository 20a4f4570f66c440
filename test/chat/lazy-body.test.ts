/**
 * Issue 18: a large body's conversation is validated from the bytes and never parsed on the same-protocol path
 * (core/lazy-body.ts); the upstream gets the client's bytes; every refusal is the one the eager path gives (400
 * naming the field); a translated request parses it and still works.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { lazyStats } from '../../src/core/lazy-body.js';
import { KEEP_MEMORY_BYTES, scannerMemoryBytes } from '../../src/core/json-simd.js';
import { streamChat, type Json } from './util.js';
import { createInferenceKey } from '../helpers.js';
import { promptTokensBound } from '../../src/core/spend-ask.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const filler = (n: number) => 'lorem ipsum \\"dolor\\" sit\\namet '.repeat(Math.ceil(n / 30)).slice(0, n).replace(/\\$/, '');
/** ~90 KB of turns as raw JSON (test/alpha's context is 32,000 tokens), alternating user/assistant, with escapes. */
const turns = (n = 200, role: (i: number) => string = (i) => (i % 2 ? 'assistant' : 'user')) =>
  `[${Array.from({ length: n }, (_, i) => `{"role":"${role(i)}", "content":"${filler(420)} ${i}"}`).join(',\n')}]`;

async function post(path: string, text: string) {
  const res = await env.t.call('POST', path, { key: env.key, raw: text });
  return { status: res.status, json: res.body as Json };
}

const message = (r: { json: Json }) => JSON.stringify(r.json);

describe('a large chat body', () => {
  it('reaches the upstream with its messages unparsed and as received', async () => {
    const text = `{"model":"test/alpha","temperature":0.5,"messages":${turns()},"models":["test/alpha"]}`;
    const before = lazyStats.materialized;
    const r = await post('/chat/completions', text);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    const up = env.sim.stats('sim-a').lastBody as Json;
    expect(up.messages).toEqual(JSON.parse(turns()));
    expect(up.model).toBe('alpha-a');
    expect(up.temperature).toBe(0.5);
    expect(up).not.toHaveProperty('models');
    const usage = (r.json.usage ?? {}) as Json;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams the same way', async () => {
    const before = lazyStats.materialized;
    const r = await streamChat(env, { model: 'test/alpha', stream: true, messages: JSON.parse(turns()) });
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    expect((env.sim.stats('sim-a').lastBody as Json).messages).toEqual(JSON.parse(turns()));
  });

  it('a body over the byte finder\'s memory bound (5 MB) is scanned, and the module memory it grew is let go after', async () => {
    const text = `{"model":"test/alpha","messages":${turns(12_000)}}`;
    expect(text.length).toBeGreaterThan(KEEP_MEMORY_BYTES);
    const r = await post('/chat/completions', text);
    // Far past test/alpha's context: refused by routing, after the body was parsed lazily.
    expect(r.status).toBeLessThan(500);
    expect(scannerMemoryBytes()).toBeLessThanOrEqual(KEEP_MEMORY_BYTES);
  });

  it('answers 400 naming the message of a role the API does not take', async () => {
    const r = await post('/chat/completions', `{"model":"test/alpha","messages":${turns(200, (i) => (i === 121 ? 'robot' : 'user'))}}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('messages[121].role');
  });

  it('answers 400 naming another bad field', async () => {
    const r = await post('/chat/completions', `{"model":"test/alpha","temperature":9,"messages":${turns()}}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('temperature');
  });

  it('refuses a raw control character, a NUL escape, an unpaired surrogate and a NUL elsewhere as the eager path does', async () => {
    const base = turns();
    const control = await post('/chat/completions', `{"model":"test/alpha","messages":${base.replace('lorem', 'lo\u0001rem')}}`);
    expect(control.status).toBe(400);
    expect(message(control)).toContain('Malformed JSON body');
    const nul = await post('/chat/completions', `{"model":"test/alpha","messages":${base.replace('lorem', 'lo\\u0000rem')}}`);
    expect(nul.status).toBe(400);
    expect(message(nul)).toContain('messages[0].content');
    const lone = await post('/chat/completions', `{"model":"test/alpha","messages":${base.replace('lorem', 'lo\\ud800rem')}}`);
    expect(lone.status).toBe(400);
    expect(message(lone)).toContain('messages[0].content');
    const user = await post('/chat/completions', `{"model":"test/alpha","user":"a\\u0000b","messages":${base}}`);
    expect(user.status).toBe(400);
    expect(message(user)).toContain('user');
  });

  it('refuses a malformed rest of the body with the eager parser error', async () => {
    const r = await post('/chat/completions', `{"model":"test/alpha","messages":${turns()},}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('Malformed JSON body');
  });

  it('is parsed when the request is translated (an Anthropic upstream), and works', async () => {
    const before = lazyStats.materialized;
    const r = await post('/chat/completions', `{"model":"test/claude","messages":${turns()}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    expect((env.sim.stats('sim-anthropic').lastBody as Json).messages).toHaveLength(200);
  });
});

describe('large Messages and Responses bodies', () => {
  it('a Messages body reaches an Anthropic upstream with its messages as received, unparsed', async () => {
    const before = lazyStats.materialized;
    const r = await post('/messages', `{"model":"test/claude","max_tokens":50,"system":"be brief","temperature":0.5,"messages":${turns()}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    const up = env.sim.stats('sim-anthropic').lastBody as Json;
    expect(up.messages).toEqual(JSON.parse(turns()));
    expect(up.system).toBe('be brief');
    expect(up.temperature).toBe(0.5);
    expect((r.json.usage as Json).input_tokens).toBeGreaterThan(0);
  });

  it('a streamed Messages body goes unparsed too', async () => {
    const before = lazyStats.materialized;
    const res = await env.t.call('POST', '/messages', { key: env.key, raw: `{"model":"test/claude","max_tokens":50,"stream":true,"messages":${turns()}}` });
    expect(res.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    expect((env.sim.stats('sim-anthropic').lastBody as Json).stream).toBe(true);
  });

  it('a Messages body is parsed when translated (a chat upstream), and works', async () => {
    const before = lazyStats.materialized;
    const r = await post('/messages', `{"model":"test/alpha","max_tokens":50,"messages":${turns()}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    const up = env.sim.stats('sim-a').lastBody as Json;
    expect(up.messages).toEqual(JSON.parse(turns()).map((m: Json) => ({ role: m.role, content: m.content })));
  });

  it('a Messages body with a system message among its turns is refused as the eager path does', async () => {
    const r = await post('/messages', `{"model":"test/claude","max_tokens":50,"messages":${turns(200, (i) => (i === 9 ? 'robot' : i % 2 ? 'assistant' : 'user'))}}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('messages[9].role');
  });

  it('a Messages body with a role the API does not take answers 400 naming it', async () => {
    const r = await post('/messages', `{"model":"test/claude","max_tokens":50,"messages":${turns(200, (i) => (i === 7 ? 'tool' : i % 2 ? 'assistant' : 'user'))}}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('messages[7].role');
  });

  it('a Responses body reaches a Responses upstream with its input as received, unparsed', async () => {
    const before = lazyStats.materialized;
    const r = await post('/responses', `{"model":"test/responses","instructions":"be brief","input":${turns()}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before);
    const up = env.sim.stats('sim-responses').lastBody as Json;
    expect(up.input).toEqual(JSON.parse(turns()));
    expect(up.instructions).toBe('be brief');
  });

  it('a Responses body with developer items is parsed when translated, its system prompt in order', async () => {
    const before = lazyStats.materialized;
    const r = await post('/responses', `{"model":"test/claude","instructions":"first","input":${turns(200, (i) => (i === 0 ? 'developer' : i % 2 ? 'assistant' : 'user'))}}`);
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    const up = env.sim.stats('sim-anthropic').lastBody as Json;
    const system = typeof up.system === 'string' ? up.system : (up.system as Json[]).map((b) => b.text).join('\n');
    expect(system).toContain('first');
    expect(system).toContain(`${JSON.parse(turns())[0].content}`);
    expect(up.messages).toHaveLength(199);
  });

  it('a Responses body with a role the API does not take answers 400 naming it', async () => {
    const r = await post('/responses', `{"model":"test/responses","input":${turns(200, (i) => (i === 11 ? 'tool' : 'user'))}}`);
    expect(r.status).toBe(400);
    expect(message(r)).toContain('input[11].role');
  });
});

describe('a key with a spending limit and a token rate limit', () => {
  /** Many short messages with escapes: the framing per message weighs most in the bound. */
  const short = (n: number) => `[${Array.from({ length: n }, (_, i) => `{"role":"${i % 2 ? 'assistant' : 'user'}","content":"a\\n\\"b\\" ${i}"}`).join(',')}]`;
  const bodies: Array<[string, string, string]> = [
    ['chat', '/chat/completions', `{"model":"test/alpha","max_tokens":50,"messages":${short(4000)}}`],
    ['Messages', '/messages', `{"model":"test/claude","max_tokens":50,"system":"be brief","messages":${short(4000)}}`],
    ['Responses', '/responses', `{"model":"test/responses","max_output_tokens":50,"instructions":"be brief","input":${short(4000)}}`],
  ];
  const limitedKey = async (tpm: number) => (await createInferenceKey(env.t, { name: `tpm-${tpm}`, limit: 100, rate_limit: { tokens_per_minute: tpm } })).key;
  const send = async (key: string, path: string, text: string) => (await env.t.call('POST', path, { key, raw: text })).status;

  for (const [name, path, text] of bodies) {
    it(`keeps the ${name} conversation unparsed, and reserves exactly the parsed body's prompt bound plus the output`, async () => {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const reserve = promptTokensBound(parsed) + 50;
      // The bound is never below the UTF-8 bytes of the conversation's text (at least one byte per token).
      const conversation = (parsed.messages ?? parsed.input) as Array<{ content: string }>;
      expect(reserve).toBeGreaterThan(conversation.reduce((n, m) => n + Buffer.byteLength(m.content), 0));
      const before = lazyStats.materialized;
      // One token short of the reservation: refused (429) before any upstream call.
      expect(await send(await limitedKey(reserve - 1), path, text)).toBe(429);
      // Room for exactly the reservation: served, the conversation never parsed.
      expect(await send(await limitedKey(reserve), path, text)).toBe(200);
      expect(lazyStats.materialized).toBe(before);
    });
  }

  it('bounds a non-ASCII conversation (parsed eagerly) by its UTF-8 bytes', async () => {
    const messages = Array.from({ length: 3000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `日本語のテキスト ü ${i}` }));
    const text = JSON.stringify({ model: 'test/alpha', max_tokens: 50, messages });
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
    expect(await send(await limitedKey(bytes), '/chat/completions', text)).toBe(429);
    expect(await send(await limitedKey(promptTokensBound(JSON.parse(text)) + 50), '/chat/completions', text)).toBe(200);
  });
});

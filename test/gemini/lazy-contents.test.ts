/**
 * Issue 18: a large Gemini body (what Gemini CLI sends on every turn) is read into slabs and its `contents` left as
 * bytes (core/lazy-body.ts, core/lazy-scan.ts); to a Google upstream the request is built from the IR without its
 * conversation and the client's contents bytes are spliced in, unparsed; another upstream parses them; bad input
 * still gets the eager path's 400 in Google's error shape. Through `@google/genai` and the raw route.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GoogleGenAI, type Content } from '@google/genai';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { lazyStats } from '../../src/core/lazy-body.js';
import { freeSlabs, slabStats } from '../../src/core/body-slabs.js';

let env: ChatEnv;
let ai: GoogleGenAI;

const MODEL = 'google/gemini-2.5-pro';
beforeAll(async () => {
  env = await startChatEnv('sqlite', {
    catalog: {
      models: [{ id: MODEL, name: 'Gemini 2.5 Pro (sim)', context_length: 1048576, input_modalities: ['text', 'image'] }],
      endpoints: [{ model: MODEL, provider: 'sim-google', upstream_model: 'gemini-2.5-pro', pricing: { prompt: '0.00000125', completion: '0.00001' }, supported_parameters: ['temperature', 'max_tokens', 'stop'] }],
    },
  });
  ai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: `${env.t.url}/api` } });
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const WORDS = 'lorem ipsum "dolor" sit\namet 日本語のテキスト 🙂🚀 ';
/** ~1 MB of contents alternating user/model, the last a user one (some user contents of two parts); `role` overrides a content's role. */
const conversation = (n = 500, role: (i: number) => string = (i) => (i % 2 ? 'model' : 'user')): Content[] =>
  Array.from({ length: n }, (_, i) => ({ role: role(i), parts: [{ text: `${i} ${WORDS.repeat(60)}` }, ...(i % 14 === 0 ? [{ text: `second part ${i}` }] : [])] }));

const upstream = () => env.sim.stats('sim-google').lastBody as Record<string, any>;

async function post(model: string, body: unknown, method = 'generateContent') {
  const res = await env.t.call('POST', `/../v1beta/models/${model}:${method}`, { key: env.key, raw: JSON.stringify(body) });
  return { status: res.status, json: res.body as Record<string, any> };
}

describe('a megabyte Gemini body', () => {
  it('round-trips through @google/genai to a Google upstream with its contents unparsed and as sent', async () => {
    const contents = conversation();
    expect(Buffer.byteLength(JSON.stringify(contents))).toBeGreaterThan(1_000_000);
    const before = lazyStats.materialized;
    const r = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents, config: { systemInstruction: 'Be brief.', temperature: 0.5, maxOutputTokens: 40 } });
    expect(r.text).toMatch(/^Simulated reply to: 498 lorem/);
    expect(r.usageMetadata?.promptTokenCount).toBeGreaterThan(200_000);
    expect(lazyStats.materialized).toBe(before);
    const up = upstream();
    expect(up.contents).toEqual(contents);
    expect(up.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(up.generationConfig).toMatchObject({ temperature: 0.5, maxOutputTokens: 40 });
    expect(up).not.toHaveProperty('model');
    expect(up).not.toHaveProperty('stream');
  });

  it('is read into slabs that go back to the pool once the answer is sent', async () => {
    const held = () => slabStats.made - slabStats.dropped - freeSlabs();
    await ai.models.generateContent({ model: MODEL, contents: conversation() });
    const recycled = slabStats.recycled;
    const before = held();
    await ai.models.generateContent({ model: MODEL, contents: conversation() });
    expect(slabStats.recycled).toBeGreaterThan(recycled);
    expect(held()).toBe(before);
  });

  it('goes back to the pool when the body is refused before the handler (schema validation)', async () => {
    const held = () => slabStats.made - slabStats.dropped - freeSlabs();
    await post(MODEL, { contents: conversation() });
    const before = held();
    const bad = await post(MODEL, { contents: conversation(), generationConfig: { temperature: 9 } });
    expect(bad.status).toBe(400);
    const role = await post(MODEL, { contents: conversation(500, (i) => (i === 3 ? 'robot' : i % 2 ? 'model' : 'user')) });
    expect(role.status).toBe(400);
    const chat = await env.t.call('POST', '/chat/completions', { key: env.key, raw: JSON.stringify({ model: MODEL, temperature: 9, messages: [{ role: 'user', content: 'x'.repeat(300_000) }] }) });
    expect(chat.status).toBe(400);
    expect(held()).toBe(before);
  });

  it('streams the same way (generateContentStream)', async () => {
    const before = lazyStats.materialized;
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents: conversation() })) text += chunk.text ?? '';
    expect(text).toMatch(/^Simulated reply to: 498 lorem/);
    expect(lazyStats.materialized).toBe(before);
    expect(upstream().contents).toEqual(conversation());
  });

  it('is parsed when translated (an OpenAI-chat upstream), and works', async () => {
    const before = lazyStats.materialized;
    // test/alpha's context is 32,000 tokens: ~85 KB of contents (still over the lazy path's 64 KiB).
    const contents = conversation(24);
    expect(Buffer.byteLength(JSON.stringify({ contents }))).toBeGreaterThan(64 * 1024);
    const r = await post('test/alpha', { contents });
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    const up = env.sim.stats('sim-a').lastBody as Record<string, any>;
    expect(up.messages).toHaveLength(24);
    expect(up.messages[1]).toEqual({ role: 'assistant', content: contents[1].parts![0].text });
  });

  it('with two neighbours of one role goes through the IR (merged, as the eager path sends it)', async () => {
    const before = lazyStats.materialized;
    const r = await post(MODEL, { contents: conversation(500, (i) => (i === 0 || i === 1 ? 'user' : i % 2 ? 'user' : 'model')) });
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    expect(upstream().contents).toHaveLength(499);
  });

  it('with a model content of several text parts goes through the IR (joined, as the eager path sends it)', async () => {
    const before = lazyStats.materialized;
    const contents = conversation();
    contents[3] = { role: 'model', parts: [{ text: 'Hello' }, { text: ' world' }] };
    const r = await post(MODEL, { contents });
    expect(r.status).toBe(200);
    expect(lazyStats.materialized).toBe(before + 1);
    expect(upstream().contents[3]).toEqual({ role: 'model', parts: [{ text: 'Hello world' }] });
    // The same conversation under 64 KiB (parsed eagerly) reaches the upstream in the same shape.
    const small = contents.slice(0, 5).map((c, i) => (i === 3 ? c : { ...c, parts: [{ text: `${i}` }] }));
    expect((await post(MODEL, { contents: small })).status).toBe(200);
    expect(upstream().contents[3]).toEqual({ role: 'model', parts: [{ text: 'Hello world' }] });
  });

  it('answers 400 in Google\'s shape naming a bad role, an empty text part and another bad field', async () => {
    const role = await post(MODEL, { contents: conversation(500, (i) => (i === 7 ? 'robot' : i % 2 ? 'model' : 'user')) });
    expect(role.status).toBe(400);
    expect(role.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(role.json.error.message).toContain('contents[7].role');
    const temperature = await post(MODEL, { contents: conversation(), generationConfig: { temperature: 9 } });
    expect(temperature.status).toBe(400);
    expect(temperature.json.error.message).toContain('temperature');
    const empty = conversation().map((c) => ({ ...c, parts: [{ text: '' }] }));
    const none = await post(MODEL, { contents: empty });
    expect(none.status).toBe(400);
    expect(none.json.error.message).toContain('contents has no parts');
    const malformed = await env.t.call('POST', `/../v1beta/models/${MODEL}:generateContent`, { key: env.key, raw: `${JSON.stringify({ contents: conversation() }).slice(0, -1)},}` });
    expect(malformed.status).toBe(400);
    expect((malformed.body as Record<string, any>).error.status).toBe('INVALID_ARGUMENT');
  });
});

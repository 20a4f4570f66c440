/**
 * Issue 18: JSON request bodies count toward the young-generation collection the gateway asks V8 for
 * (services/body-collections.ts, GATEWAY_BODY_GC_BYTES); here with a counting function in place of V8's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const THRESHOLD = 512 * 1024;
let calls = 0;
let env: ChatEnv;
let off: ChatEnv;
let offCalls = 0;
beforeAll(async () => {
  env = await startChatEnv('sqlite', { env: { GATEWAY_BODY_GC_BYTES: String(THRESHOLD) }, gateway: { minorCollection: () => calls++ } });
  off = await startChatEnv('sqlite', { env: { GATEWAY_BODY_GC_BYTES: '0' }, gateway: { minorCollection: () => offCalls++ } });
});
afterAll(async () => {
  await env?.close();
  await off?.close();
});

/** A Messages API body of `n` turns of ~600 characters (~`n` × 640 bytes; test/claude's context is 200,000 tokens). */
const messagesBody = (n: number) =>
  JSON.stringify({ model: 'test/claude', max_tokens: 16, messages: Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${'lorem ipsum '.repeat(50)} ${i}` })).concat([{ role: 'user', content: 'go on' }]) });

describe('young collections paced by request bodies', () => {
  it('a body of the threshold or more runs one collection as it is parsed, and the request is answered as usual', async () => {
    const text = messagesBody(1000);
    expect(Buffer.byteLength(text)).toBeGreaterThan(THRESHOLD);
    const before = calls;
    const r = await env.t.call('POST', '/messages', { key: env.key, raw: text });
    expect(r.status).toBe(200);
    expect(r.body.type).toBe('message');
    expect(calls).toBe(before + 1);
  });

  it('small bodies add up: one collection after the threshold in total, none before', async () => {
    const text = messagesBody(100);
    const size = Buffer.byteLength(text);
    const before = calls;
    // The count restarted at the last collection: ceil(THRESHOLD / size) bodies reach it again.
    const needed = Math.ceil(THRESHOLD / size);
    for (let i = 0; i < needed - 1; i++) expect((await env.t.call('POST', '/messages', { key: env.key, raw: text })).status).toBe(200);
    expect(calls).toBe(before);
    expect((await env.t.call('POST', '/messages', { key: env.key, raw: text })).status).toBe(200);
    expect(calls).toBe(before + 1);
  });

  it('GATEWAY_BODY_GC_BYTES=0: never', async () => {
    for (let i = 0; i < 3; i++) expect((await off.t.call('POST', '/messages', { key: off.key, raw: messagesBody(1000) })).status).toBe(200);
    expect(offCalls).toBe(0);
  });
});

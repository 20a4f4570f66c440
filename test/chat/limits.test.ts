/**
 * A key's own spending limit (docs/spend.md): each request reserves its maximum cost before the upstream call and is
 * refused with 402 when the limit has no room for it; GET /key shows what is left. Cost per request here: test/alpha on
 * sim-a, 6 prompt tokens × $0.000001 + 12 completion tokens × $0.000002 = $0.00003; its maximum cost, reserved, is the
 * prompt's upper bound (27 tokens: 8 per request, 4 per message, the bytes of "user" and "hello there";
 * src/core/spend-ask.ts) + max_tokens 12: $0.000051.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey, invalidationsReached, startTwoInstances, type TestGateway } from '../helpers.js';

describe('key spending limits', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
  });
  afterAll(async () => env?.close());

  const ask = (key: string) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } as never);

  it('refuses with 402 when the limit has no room for the request, and never spends past it', async () => {
    // $0.00012: requests 1–3 each find room for $0.000051 (0, 0.00003, 0.00006 spent); the 4th does not (0.00009 spent).
    const k = await createInferenceKey(env.t, { name: 'limited', limit: 0.00012, limit_reset: 'daily' });
    for (let i = 0; i < 3; i++) expect((await ask(k.key)).usage).toMatchObject({ cost: 0.00003 });
    const refused = await ask(k.key).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    // The hosted router's words: $0.00003 left buys 1 output token after the 27-token prompt bound.
    expect(String((refused as Error).message)).toContain('This request requires more credits, or fewer max_tokens. You requested up to 12 tokens, but can only afford 1.');
    expect(String((refused as Error).message)).toContain('key limit');
    await env.t.gw.svc.recorder.flush();
    const me = await env.t.call('GET', '/key', { key: k.key });
    expect(me.body.data.limit_remaining).toBe(0.00003);
    expect(me.body.data.usage_daily).toBe(0.00009);
  });

  it('limit_remaining counts spend not yet written: right after a request, before its record is written', async () => {
    const k = await createInferenceKey(env.t, { name: 'remaining', limit: 0.001 });
    // Hold the record queue: nothing is written while the test reads the key.
    const recorder = env.t.gw.svc.recorder as unknown as { flush: () => Promise<void> };
    const flush = recorder.flush;
    recorder.flush = async () => undefined;
    try {
      await ask(k.key);
      for (const view of [(await env.t.call('GET', '/key', { key: k.key })).body.data, (await env.t.call('GET', `/keys/${k.hash}`)).body.data]) {
        expect(view.usage).toBe(0); // the written records
        expect(view.limit_remaining).toBeCloseTo(0.001 - 0.00003, 12);
      }
    } finally {
      recorder.flush = flush;
    }
    await env.t.gw.svc.recorder.flush();
    expect((await env.t.call('GET', `/keys/${k.hash}`)).body.data).toMatchObject({ usage: 0.00003, limit_remaining: 0.00097 });
  });

  it('raising the limit lets the key through again at once', async () => {
    const k = await createInferenceKey(env.t, { name: 'raised', limit: 0.00006 });
    await ask(k.key);
    expect(await ask(k.key).catch((e: { status?: number }) => e.status)).toBe(402);
    expect((await env.t.call('PATCH', `/keys/${k.hash}`, { body: { limit: 1 } })).status).toBe(200);
    expect((await ask(k.key)).choices[0].message.content).toBeTruthy();
  });

  it('a burst of concurrent requests cannot all pass the limit check before any is recorded', async () => {
    // $0.00014 with one request ($0.00003) already spent: $0.00011 left holds two reservations of $0.000051 → 2 of the
    // 10 concurrent requests; the rest 402, and the spend stays below the limit.
    const k = await createInferenceKey(env.t, { name: 'burst', limit: 0.00014 });
    await ask(k.key);
    env.sim.setKnobs('sim-a', { latencyMs: 300 });
    try {
      const results = await Promise.all(Array.from({ length: 10 }, () => ask(k.key).then(() => 200, (e: { status?: number }) => e.status)));
      expect(results.filter((s) => s === 200)).toHaveLength(2);
      expect(results.filter((s) => s === 402)).toHaveLength(8);
    } finally {
      env.sim.setKnobs('sim-a', { latencyMs: null });
    }
    await env.t.gw.svc.recorder.flush();
    expect((await env.t.call('GET', `/keys/${k.hash}`)).body.data.usage).toBe(0.00009);
    // Every admitted request was released: once recorded spend is below a raised limit, the key works again.
    expect((await env.t.call('PATCH', `/keys/${k.hash}`, { body: { limit: 1 } })).status).toBe(200);
    expect((await ask(k.key)).usage).toMatchObject({ cost: 0.00003 });
  });

  it('a key without a limit is never refused for spend', async () => {
    const k = await createInferenceKey(env.t, { name: 'unlimited' });
    for (let i = 0; i < 3; i++) await ask(k.key);
    const me = await env.t.call('GET', '/key', { key: k.key });
    expect(me.body.data.limit_remaining).toBeNull();
  });
});

describe('key spending limits across two instances (PostgreSQL + Redis)', () => {
  let sim: Simulator;
  let a: TestGateway;
  let b: TestGateway;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    sim = await createSimulator();
    const file = join(mkdtempSync(join(tmpdir(), 'gw-limits-')), 'gateway.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url)));
    ({ a, b, close } = await startTwoInstances({ GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' }));
  });
  afterAll(async () => {
    await close?.();
    await sim?.close();
  });

  const ask = (t: TestGateway, key: string) =>
    new OpenAI({ baseURL: t.api, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } as never);

  it('a burst split over both instances admits exactly what the limit has room for', async () => {
    // $0.00014 with one request ($0.00003) spent on A: two more reservations of $0.000051 fit, over both instances'
    // requests in flight (one set of counters in Redis).
    const k = await createInferenceKey(a, { name: 'shared-burst', limit: 0.00014 });
    await ask(a, k.key);
    sim.setKnobs('sim-a', { latencyMs: 300 });
    try {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(i % 2 ? a : b, k.key).then(() => 200, (e: { status?: number }) => e.status)));
      expect(results.filter((s) => s === 200)).toHaveLength(2);
      expect(results.filter((s) => s === 402)).toHaveLength(8);
    } finally {
      sim.setKnobs('sim-a', { latencyMs: null });
    }
    // Spent now: 3 × $0.00003, $0.00005 left (less than a reservation), on either instance; raised, both serve again (nothing left held).
    expect(await ask(b, k.key).catch((e: { status?: number }) => e.status)).toBe(402);
    expect((await a.call('PATCH', `/keys/${k.hash}`, { body: { limit: 1 } })).status).toBe(200);
    await invalidationsReached(a, [b]);
    expect((await ask(b, k.key)).usage).toMatchObject({ cost: 0.00003 });
    expect((await ask(a, k.key)).usage).toMatchObject({ cost: 0.00003 });
  });
});

describe('limits while Redis is unreachable', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    // GATEWAY_SPEND_REDIS_DOWN=local: this instance counts spending limits alone while Redis is unreachable.
    env = await startChatEnv('sqlite', { env: { GATEWAY_REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_SPEND_REDIS_DOWN: 'local' } });
  });
  afterAll(async () => env?.close());

  it('keys with a spending limit or a rate limit are still served, their limits counted on this instance', async () => {
    const ask = (key: string) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } as never);
    const spend = await createInferenceKey(env.t, { name: 'spend', limit: 0.00009 });
    expect((await ask(spend.key)).usage).toMatchObject({ cost: 0.00003 });
    expect((await ask(spend.key)).usage).toMatchObject({ cost: 0.00003 });
    expect(await ask(spend.key).catch((e: { status?: number }) => e.status)).toBe(402);
    const rate = await createInferenceKey(env.t, { name: 'rate', rate_limit: { requests: 2, interval: '30d' } });
    expect((await ask(rate.key)).choices[0].message.content).toBeTruthy();
    expect((await ask(rate.key)).choices[0].message.content).toBeTruthy();
    expect(await ask(rate.key).catch((e: { status?: number }) => e.status)).toBe(429);
  });
});

describe('spending limits while Redis is unreachable, failing closed (the default)', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { env: { GATEWAY_REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(async () => env?.close());

  it('a key with a spending limit gets 503 with a clear message; a key without one is served', async () => {
    const ask = (key: string) => env.t.call('POST', '/chat/completions', { key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } } });
    const limited = await createInferenceKey(env.t, { name: 'limited', limit: 1 });
    const refused = await ask(limited.key);
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toMatch(/Spending limits cannot be checked right now/);
    const free = await createInferenceKey(env.t, { name: 'free' });
    expect((await ask(free.key)).status).toBe(200);
  });
});

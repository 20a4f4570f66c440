/**
 * The response cache (X-Gateway-Cache; docs/cache.md): misses and hits, TTL, clearing, streams, what is never kept,
 * the checks a hit still passes, the three inference APIs, and one cache shared by two instances through Redis.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/sim/index.js';
import { cacheDecision, cacheHeaders, cacheKey, cacheRequest, MemoryStore } from '../../src/services/response-cache.js';
import { simCatalog } from '../chat-helpers.js';
import { createInferenceKey, freshDatabase, REDIS_URL, startGateway, type TestGateway } from '../helpers.js';
import { chat, isolatedEnv, streamChat, type ClockedEnv } from './util.js';

const CACHE = { 'x-gateway-cache': 'true' };

describe('response cache (in memory)', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const calls = () => env.sim.stats('sim-c').requests;
  const ask = (content: string, headers: Record<string, string> = CACHE) => chat(env, { model: 'test/beta', messages: [{ role: 'user', content }] }, { headers });

  it('a miss stores the answer; the same request again is a hit: the same answer, no provider call', async () => {
    const first = await ask('cache me');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(first.headers.get('x-gateway-cache-ttl')).toBe('300');
    const second = await ask('cache me');
    expect(second.status).toBe(200);
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.headers.get('x-gateway-cache-source-id')).toBe(first.body.id);
    expect(second.headers.get('x-generation-id')).toBe(first.body.id);
    expect(second.headers.get('x-gateway-cache-age')).toBe('0');
    expect(second.headers.get('x-gateway-cache-ttl')).toBe('300');
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    expect(second.body).toEqual(first.body);
    expect(calls()).toBe(1);
    // Counted for operators: hits make no generation record.
    const metrics = await fetch(`${env.t.url}/metrics`, { headers: { authorization: `Bearer ${env.t.adminKey}` } });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/gateway_cache_lookups_total\{api="chat",result="hit"\} [1-9]/);
    expect(text).toMatch(/gateway_cache_lookups_total\{api="chat",result="miss"\} [1-9]/);
  });

  it('another body, no header, or another key: a miss', async () => {
    await ask('one');
    expect((await ask('two')).headers.get('x-gateway-cache-status')).toBe('MISS');
    const plain = await ask('one', {});
    expect(plain.headers.get('x-gateway-cache-status')).toBeNull();
    const other = await createInferenceKey(env.t, { name: 'other' });
    const r = await chat(env, { model: 'test/beta', messages: [{ role: 'user', content: 'one' }] }, { key: other.key, headers: CACHE });
    expect(r.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(calls()).toBe(4);
  });

  it('X-Gateway-Cache-TTL: the answer is kept that many seconds; its age is reported', async () => {
    await ask('ttl', { ...CACHE, 'x-gateway-cache-ttl': '10' });
    env.advance(4_000);
    const hit = await ask('ttl');
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.headers.get('x-gateway-cache-age')).toBe('4');
    expect(hit.headers.get('x-gateway-cache-ttl')).toBe('10');
    env.advance(7_000);
    expect((await ask('ttl')).headers.get('x-gateway-cache-status')).toBe('MISS');
  });

  it('X-Gateway-Cache-Clear: the stored answer is dropped and the provider asked again', async () => {
    const first = await ask('clear');
    const cleared = await ask('clear', { ...CACHE, 'x-gateway-cache-clear': 'true' });
    expect(cleared.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(cleared.body.id).not.toBe(first.body.id);
    const hit = await ask('clear');
    expect(hit.headers.get('x-gateway-cache-source-id')).toBe(cleared.body.id);
    expect(calls()).toBe(2);
  });

  it('streams: a stream that ended normally is replayed byte for byte; a stream with gateway_metadata is not kept', async () => {
    const body = { model: 'test/beta', messages: [{ role: 'user', content: 'stream me' }] };
    const first = await streamChat(env, body, { headers: CACHE });
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    const second = await streamChat(env, body, { headers: CACHE });
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(second.text).toBe(first.text);
    expect(second.done).toBe(true);
    // The plain and the streamed request are cached apart.
    expect((await ask('stream me')).headers.get('x-gateway-cache-status')).toBe('MISS');
    const meta = { ...CACHE, 'x-gateway-metadata': 'enabled' };
    const withMeta = { ...body, messages: [{ role: 'user', content: 'with metadata' }] };
    await streamChat(env, withMeta, { headers: meta });
    expect((await streamChat(env, withMeta, { headers: meta })).headers.get('x-gateway-cache-status')).toBe('MISS');
  });

  it('hits never carry gateway_metadata', async () => {
    const meta = { ...CACHE, 'x-gateway-metadata': 'enabled' };
    expect((await ask('meta', meta)).body.gateway_metadata).toBeTruthy();
    const hit = await ask('meta', meta);
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.body.gateway_metadata).toBeUndefined();
  });

  it('errors and failed streams are never kept', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    expect((await ask('error')).status).toBe(502);
    env.sim.resetKnobs();
    env.advance(31_000);
    expect((await ask('error')).headers.get('x-gateway-cache-status')).toBe('MISS');
    env.sim.setKnobs('sim-c', { errorAfterChunks: 2 });
    const body = { model: 'test/beta', messages: [{ role: 'user', content: 'broken stream' }] };
    const broken = await streamChat(env, body, { headers: CACHE });
    expect(broken.status).toBe(200);
    env.sim.resetKnobs();
    env.advance(31_000);
    expect((await streamChat(env, body, { headers: CACHE })).headers.get('x-gateway-cache-status')).toBe('MISS');
  });

  it("a hit still passes the request's checks: a key whose limit is spent gets its 402, not the cached answer", async () => {
    const k = await createInferenceKey(env.t, { name: 'limited', limit: 1 });
    const req = (key: string) => chat(env, { model: 'test/beta', messages: [{ role: 'user', content: 'limited' }] }, { key, headers: CACHE });
    expect((await req(k.key)).status).toBe(200);
    await env.t.gw.svc.recorder.flush();
    // The limit lowered below what the first request spent (a request is reserved before its call: it cannot overshoot).
    expect((await env.t.call('PATCH', `/keys/${k.hash}`, { body: { limit: 0.0000001 } })).status).toBe(200);
    const refused = await req(k.key);
    expect(refused.status).toBe(402);
  });

  it('the Messages and Responses APIs are cached too, each apart', async () => {
    const messages = (content: string) => env.t.call('POST', '/messages', { key: env.key, headers: CACHE, body: { model: 'test/beta', max_tokens: 50, messages: [{ role: 'user', content }] } });
    expect((await messages('anthropic')).headers.get('x-gateway-cache-status')).toBe('MISS');
    const hit = await messages('anthropic');
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.body.type).toBe('message');
    const responses = (input: string) => env.t.call('POST', '/responses', { key: env.key, headers: CACHE, body: { model: 'test/beta', input } });
    expect((await responses('anthropic')).headers.get('x-gateway-cache-status')).toBe('MISS');
    expect((await responses('anthropic')).headers.get('x-gateway-cache-status')).toBe('HIT');
  });

  it('a preset with cache_enabled (and cache_ttl_seconds) turns the cache on without the header; the fields never go upstream', async () => {
    const saved = await env.t.call('POST', '/presets/cached/chat/completions', { body: { model: 'test/beta', cache_enabled: true, cache_ttl_seconds: 60 } });
    expect(saved.status).toBe(200);
    const first = await chat(env, { model: '@preset/cached', messages: [{ role: 'user', content: 'preset cache' }] });
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(first.headers.get('x-gateway-cache-ttl')).toBe('60');
    const second = await chat(env, { model: '@preset/cached', messages: [{ role: 'user', content: 'preset cache' }] });
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(calls()).toBe(1);
    const up = env.sim.requests.find((x) => x.provider === 'sim-c')!.body as Record<string, unknown>;
    expect(up.cache_enabled).toBeUndefined();
    expect(up.cache_ttl_seconds).toBeUndefined();
    // The header wins: false turns the preset's cache off; Clear and TTL apply to a preset's cache too.
    const off = await chat(env, { model: '@preset/cached', messages: [{ role: 'user', content: 'preset cache' }] }, { headers: { 'x-gateway-cache': 'false' } });
    expect(off.headers.get('x-gateway-cache-status')).toBeNull();
    expect(calls()).toBe(2);
    const cleared = await chat(env, { model: '@preset/cached', messages: [{ role: 'user', content: 'preset cache' }] }, { headers: { 'x-gateway-cache-clear': 'true', 'x-gateway-cache-ttl': '30' } });
    expect(cleared.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(cleared.headers.get('x-gateway-cache-ttl')).toBe('30');
    expect(calls()).toBe(3);
    const bad = await chat(env, { model: 'test/beta', cache_enabled: true, cache_ttl_seconds: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.metadata.field).toBe('cache_ttl_seconds');
  });

  it('a bad TTL is a 400 naming the header', async () => {
    for (const ttl of ['0', '86401', 'soon', '1.5']) {
      const r = await ask('x', { ...CACHE, 'x-gateway-cache-ttl': ttl });
      expect(r.status, ttl).toBe(400);
      expect(r.body.error).toMatchObject({ code: 400, metadata: { field: 'x-gateway-cache-ttl' }, message: expect.stringMatching(/X-Gateway-Cache-TTL/) });
    }
    expect(calls()).toBe(0);
  });

  it('the cache key: key hash, API, stream flag and the SHA-256 of the body; the headers read', () => {
    const k = cacheKey('h', 'chat', false, { a: 1 });
    expect(k).toMatch(/^h:chat:j:[0-9a-f]{64}$/);
    expect(cacheKey('h', 'chat', true, { a: 1 })).not.toBe(k);
    expect(cacheKey('h', 'messages', false, { a: 1 })).not.toBe(k);
    expect(cacheKey('h', 'chat', false, { a: 2 })).not.toBe(k);
    expect(cacheRequest({})).toBeNull();
    expect(cacheDecision(cacheHeaders({}), { cache_enabled: true, cache_ttl_seconds: 42 })).toEqual({ ttl: 42, clear: false });
    expect(cacheDecision(cacheHeaders({ 'x-gateway-cache': '0' }), { cache_enabled: true })).toBeNull();
    expect(cacheRequest({ 'x-gateway-cache': 'false' })).toBeNull();
    expect(cacheRequest({ 'x-gateway-cache': 'TRUE' })).toEqual({ ttl: 300, clear: false });
    expect(cacheRequest({ 'x-gateway-cache': '1', 'x-gateway-cache-ttl': '86400', 'x-gateway-cache-clear': '1' })).toEqual({ ttl: 86400, clear: true });
  });

  it('the in-memory store counts UTF-8 bytes, once per answer even when one key is stored twice in a tick, and evicts the least recently used', async () => {
    const store = new MemoryStore(() => 0, 2, 1_000);
    const answer = (body: string) => ({ body, contentType: 'application/json', generationId: 'gen-1', storedAt: 0, ttl: 60 });
    await Promise.all([store.set('a', answer('é'.repeat(100))), store.set('a', answer('é'.repeat(100)))]);
    expect(store.size).toEqual({ entries: 1, bytes: 200 });
    await store.set('b', answer('x'.repeat(300)));
    await store.get('a'); // a is now the most recently used
    await store.set('c', answer('y'.repeat(100)));
    expect(store.size).toEqual({ entries: 2, bytes: 300 });
    expect(await store.get('b')).toBeNull();
    await store.set('d', answer('z'.repeat(900)));
    expect(store.size.bytes).toBeLessThanOrEqual(1_000);
  });

  it('the OpenAPI document names the cache headers', async () => {
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    const names = doc.body.paths['/chat/completions'].post.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['x-gateway-cache', 'x-gateway-cache-ttl', 'x-gateway-cache-clear']));
  });
});

describe('response cache shared by two instances through Redis', () => {
  let a: TestGateway;
  let b: TestGateway;
  let done: () => Promise<void>;
  beforeAll(async () => {
    const sim = await createSimulator();
    const dir = mkdtempSync(join(tmpdir(), 'gw-cache-'));
    writeFileSync(join(dir, 'gateway.yaml'), stringify(simCatalog(sim.url)));
    const db = await freshDatabase('postgres');
    const env = { GATEWAY_REDIS_URL: REDIS_URL, GATEWAY_CONFIG: join(dir, 'gateway.yaml'), GATEWAY_DEFAULT_CATALOG: 'false' };
    a = await startGateway('postgres', { databaseUrl: db.url, env });
    b = await startGateway('postgres', { databaseUrl: db.url, env });
    done = async () => {
      await a.stop();
      await b.stop();
      await db.drop();
      await sim.close();
    };
  });
  afterAll(async () => done?.());

  it('an answer stored by one instance is a hit on the other; the TTL is Redis’s', async () => {
    const k = await createInferenceKey(a, { name: 'shared-cache' });
    const ask = (t: TestGateway, ttl = '300') =>
      t.call('POST', '/chat/completions', { key: k.key, headers: { ...CACHE, 'x-gateway-cache-ttl': ttl }, body: { model: 'test/beta', messages: [{ role: 'user', content: `shared ${ttl}` }] } });
    const first = await ask(a);
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    const hit = await ask(b);
    expect(hit.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.body).toEqual(first.body);
    // A one-second TTL: gone from Redis a little later.
    await ask(a, '1');
    expect((await ask(b, '1')).headers.get('x-gateway-cache-status')).toBe('HIT');
    await new Promise((r) => setTimeout(r, 1_300));
    expect((await ask(b, '1')).headers.get('x-gateway-cache-status')).toBe('MISS');
  });
});

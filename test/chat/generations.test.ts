/**
 * Generation records on both stores: GET /generation for the key that made the request (and only that key, or a
 * management key), records of streamed and failed-mid-stream requests, and no record lost when the gateway is stopped
 * cleanly while ~100 requests (streamed and not) are in flight.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/sql-store.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { chat, parseSse, streamChat, until, USER } from './util.js';

describe.each(BACKENDS)('generation records (%s)', (backend) => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv(backend);
  });
  afterAll(async () => env?.close());
  beforeEach(() => {
    env.sim.resetKnobs();
    env.sim.resetStats();
  });

  it('GET /generation returns tokens, cost, latency, attempts and finish reason, before and after the flush', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 8, ttftMs: 30 });
    const r = await chat(env, { model: 'test/alpha', session_id: 'gen-s' });
    expect(r.status).toBe(200);
    const id = r.headers.get('x-generation-id')!;
    expect(id).toBe(r.body.id);
    const expected = {
      id,
      request_id: r.headers.get('x-request-id'),
      upstream_id: expect.stringMatching(/^chatcmpl-/),
      model: 'test/alpha',
      requested_model: 'test/alpha',
      provider_name: 'sim-a',
      api_type: 'completions',
      streamed: false,
      cancelled: false,
      status: 200,
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      // "hello" → 5 prompt tokens; 5 × 0.000001 + 8 × 0.000002 = 0.000021
      tokens_prompt: 5,
      tokens_completion: 8,
      total_cost: 0.000021,
      is_byok: false,
      provider_responses: [{ provider: 'sim-a', model: 'test/alpha', status: 200 }],
      error: null,
      session_id: 'gen-s',
      api_key_hash: env.keyHash,
    };
    // Right away (still queued in memory)...
    const early = await env.t.call('GET', `/generation?id=${id}`, { key: env.key });
    expect(early.status).toBe(200);
    expect(early.body.data).toMatchObject(expected);
    expect(early.body.data.latency).toBeGreaterThanOrEqual(30);
    expect(early.body.data.time_to_first_token).toBeGreaterThanOrEqual(30);
    expect(Date.parse(early.body.data.created_at)).not.toBeNaN();
    // ...and from the database once written.
    await env.t.gw.svc.recorder.flush();
    expect(env.t.gw.svc.recorder.peek(id)).toBeUndefined();
    const stored = await env.t.call('GET', `/generation?id=${id}`, { key: env.key });
    expect(stored.status).toBe(200);
    expect(stored.body.data).toEqual(early.body.data);
  });

  it('a streamed request is recorded as streamed, with the usage of its final chunk', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 6, cachedTokens: 2, reasoningTokens: 3 });
    const s = await streamChat(env, { model: 'test/alpha' });
    const usage = s.chunks[s.chunks.length - 1].usage;
    await env.t.gw.svc.recorder.flush();
    const g = await env.t.call('GET', `/generation?id=${s.headers.get('x-generation-id')}`, { key: env.key });
    expect(g.body.data).toMatchObject({
      streamed: true,
      status: 200,
      finish_reason: 'stop',
      tokens_prompt: usage.prompt_tokens,
      tokens_completion: usage.completion_tokens,
      native_tokens_cached: 2,
      native_tokens_reasoning: 3,
      total_cost: usage.cost,
    });
  });

  it('a stream that failed after its first tokens is recorded with the error', async () => {
    env.sim.setKnobs('sim-c', { errorAfterChunks: 2 });
    const s = await streamChat(env, { model: 'test/beta' });
    expect(s.chunks[s.chunks.length - 1].choices[0].finish_reason).toBe('error');
    await env.t.gw.svc.recorder.flush();
    const g = await env.t.call('GET', `/generation?id=${s.headers.get('x-generation-id')}`, { key: env.key });
    expect(g.body.data).toMatchObject({
      model: 'test/beta',
      provider_name: 'sim-c',
      streamed: true,
      status: 502,
      finish_reason: 'error',
      error: { status: 502, message: expect.any(String) },
    });
  });

  it('another inference key gets 404; a management key may read it; unknown ids are 404', async () => {
    const r = await chat(env, { model: 'test/alpha' });
    const id = r.body.id;
    const other = await createInferenceKey(env.t, { name: 'someone-else' });
    const asOther = await env.t.call('GET', `/generation?id=${id}`, { key: other.key });
    expect(asOther.status).toBe(404);
    expect(asOther.body.error.code).toBe(404);
    await env.t.gw.svc.recorder.flush();
    expect((await env.t.call('GET', `/generation?id=${id}`, { key: other.key })).status).toBe(404);
    const asAdmin = await env.t.call('GET', `/generation?id=${id}`);
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.data.api_key_hash).toBe(env.keyHash);
    expect((await env.t.call('GET', '/generation?id=gen-does-not-exist', { key: env.key })).status).toBe(404);
    expect((await env.t.call('GET', '/generation', { key: env.key })).status).toBe(400);
    expect((await env.t.call('GET', `/generation?id=${id}`, { key: null })).status).toBe(401);
  });
});

describe.each(BACKENDS)('clean shutdown under load (%s)', (backend) => {
  it('every request the client saw complete has a generation record', async () => {
    // Records stay queued in memory until shutdown: the final flush has to write all of them.
    const env = await startChatEnv(backend, { recorder: { intervalMs: 60_000, batchSize: 100_000 } });
    try {
      // 10 chunks 350 ms apart: each request takes about 3.2 s upstream, so that none has finished (and queued its
      // record) when the last of the 100 reaches the upstream, even on a loaded machine (with 1.4 s, 39 had).
      env.sim.setKnobs('sim-a', { completionTokens: 10, chunkGapMs: 350 });
      const N = 100;
      type Outcome = { id: string | null; complete: boolean; status: number | string };
      const one = async (i: number): Promise<Outcome> => {
        const streamed = i % 2 === 0;
        try {
          const res = await fetch(`${env.t.api}/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'test/alpha', messages: USER, stream: streamed, provider: { only: ['sim-a'] } }),
          });
          const text = await res.text();
          if (res.status !== 200) return { id: null, complete: false, status: res.status };
          const id = res.headers.get('x-generation-id');
          if (streamed) {
            const sse = parseSse(text);
            const ok = sse.done && sse.chunks.every((c) => c.id === id && !c.error) && sse.chunks[sse.chunks.length - 1].usage;
            return { id, complete: Boolean(ok), status: 200 };
          }
          return { id, complete: JSON.parse(text).id === id, status: 200 };
        } catch (e) {
          return { id: null, complete: false, status: String((e as Error).cause ?? e) };
        }
      };
      const all = Promise.all(Array.from({ length: N }, (_, i) => one(i)));
      // Stop once every request reached the upstream, most of them still in flight.
      await until(() => env.sim.stats('sim-a').requests >= N, 10_000, 'all requests upstream');
      expect(env.sim.stats('sim-a').inFlight).toBeGreaterThanOrEqual(10);
      const queuedBefore = env.t.gw.svc.recorder.queued;
      const stopAt = Date.now();
      await env.t.stop();
      // The stop waits for the in-flight requests (about 3 s here), not for the 30 s grace period, even though the
      // clients keep their connections alive. (The bound only has to tell the two apart.)
      expect(Date.now() - stopAt).toBeLessThan(12_000);
      const outcomes = await all;

      // A graceful stop lets in-flight requests finish.
      const complete = outcomes.filter((o) => o.complete);
      expect(complete.length).toBe(N);
      expect(queuedBefore).toBe(0);
      // A new request after the stop is refused.
      await expect(fetch(`${env.t.api}/chat/completions`, { method: 'POST' })).rejects.toThrow();

      // Reopen the same database: every completed request has its record.
      const store = openStore(env.t.databaseUrl);
      try {
        const missing: string[] = [];
        for (const o of complete) {
          const g = await store.getGeneration(o.id!);
          if (!g || g.status !== 200 || g.key_hash !== env.keyHash || g.tokens_completion !== 10) missing.push(o.id!);
        }
        expect(missing).toEqual([]);
        const streamedRecords = await Promise.all(complete.map((o) => store.getGeneration(o.id!)));
        expect(streamedRecords.filter((g) => g?.streamed).length).toBe(N / 2);
      } finally {
        await store.close();
      }
    } finally {
      await env.close();
    }
  });
});

describe('a request that arrives while the gateway shuts down', () => {
  it('gets a 503 in the error envelope with Connection: close, while the request in flight on the same connection completes', async () => {
    const env = await startChatEnv('sqlite');
    try {
      env.sim.setKnobs('sim-a', { completionTokens: 10, chunkGapMs: 100 });
      const { hostname, port } = new URL(env.t.url);
      const socket = connect(Number(port), hostname);
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (raw += d));
      const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      const httpRequest = (method: string, path: string, body?: string) =>
        `${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${env.key}\r\n` +
        (body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') +
        `\r\n${body ?? ''}`;
      // A streamed request (~1 s upstream), then, once the stop has begun, a second request on the same connection.
      socket.write(httpRequest('POST', '/api/v1/chat/completions', JSON.stringify({ model: 'test/alpha', messages: USER, stream: true, provider: { only: ['sim-a'] } })));
      await until(() => env.sim.stats('sim-a').inFlight === 1, 5_000, 'the stream upstream');
      const stopped = env.t.stop();
      await new Promise((r) => setTimeout(r, 50));
      socket.write(httpRequest('GET', '/api/v1/key'));
      await stopped;
      await ended;
      const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
      expect(first).toMatch(/^HTTP\/1\.1 200/);
      expect(first).toContain('data: [DONE]');
      expect(second).toMatch(/^HTTP\/1\.1 503/);
      expect(second.toLowerCase()).toContain('connection: close');
      const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4));
      expect(body.error).toMatchObject({ code: 503, message: expect.stringMatching(/shutting down/), metadata: { error_type: 'shutting_down' } });
    } finally {
      await env.close();
    }
  });
});

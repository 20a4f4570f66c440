/**
 * Streaming (SSE) through the gateway, over raw HTTP so that the wire format itself is checked: chunk shape, the
 * final usage chunk before `[DONE]`, keep-alive comments while waiting, metadata on the last chunk, failover before
 * the first token, the error chunk after it, and client disconnects aborting the upstream.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { chat, isolatedEnv, streamChat, streamedText, until, USER, type Json } from './util.js';

const KEEPALIVE = { GATEWAY_STREAM_KEEPALIVE_MS: '200' };

describe('stream format', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { env: KEEPALIVE });
  });
  afterAll(async () => env?.close());
  beforeEach(() => {
    env.sim.resetKnobs();
    env.sim.resetStats();
  });

  it('SSE chunks with the gen- id of X-Generation-Id, the finish chunk, then one usage chunk with empty choices, then [DONE]', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 4 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const id = r.headers.get('x-generation-id');
    expect(id).toMatch(/^gen-/);
    expect(r.done).toBe(true);
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    for (const c of r.chunks) {
      expect(c).toMatchObject({ id, object: 'chat.completion.chunk', model: 'test/alpha', provider: 'Sim A' });
      expect(typeof c.created).toBe('number');
    }
    const usageChunks = r.chunks.filter((c) => c.usage);
    expect(usageChunks).toHaveLength(1);
    const last = r.chunks[r.chunks.length - 1];
    expect(last).toBe(usageChunks[0]);
    expect(last.choices).toEqual([]);
    // "hello" = 5 chars → ceil(5/4) + 3 = 5 prompt tokens; 4 completion tokens.
    // 5 × 0.000001 + 4 × 0.000002 = 0.000013
    expect(last.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9, cost: 0.000013, is_byok: false });
    const finish = r.chunks[r.chunks.length - 2];
    expect(finish.choices[0]).toMatchObject({ finish_reason: 'stop', native_finish_reason: 'stop' });
    expect(r.chunks.slice(0, -2).every((c) => c.choices[0].finish_reason === null)).toBe(true);
    expect(streamedText(r.chunks).split(' ').length).toBe(4);
    expect(r.keepalives).toBe(0);
    // Gateway metadata only when asked.
    expect(r.chunks.some((c) => 'gateway_metadata' in c)).toBe(false);
  });

  it('usage is sent even when the client did not ask for it, and the upstream is always asked for it', async () => {
    const r = await streamChat(env, { model: 'test/alpha', stream_options: { include_usage: false } });
    expect(r.chunks[r.chunks.length - 1].usage.completion_tokens).toBe(12);
    expect((env.sim.stats('sim-a').lastBody as Json).stream_options).toEqual({ include_usage: true });
  });

  it('`: GATEWAY PROCESSING` comments while waiting for the first token, none once content flows', async () => {
    // Keep-alives every 200 ms (checked every 100 ms): the first token after 1.5 s leaves room for several even when
    // a loaded machine runs the timers late (with 750 ms, a late timer left only one).
    env.sim.setKnobs('sim-a', { ttftMs: 1_500, completionTokens: 3 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.keepalives).toBeGreaterThanOrEqual(2);
    // All comments come before the first data line.
    expect(r.text.lastIndexOf(': GATEWAY PROCESSING')).toBeLessThan(r.firstDataAt);
    expect(r.done).toBe(true);
    expect(streamedText(r.chunks)).toMatch(/^Simulated reply/);
  });

  it('X-Gateway-Metadata: enabled puts gateway_metadata on the last chunk only (legacy header too)', async () => {
    for (const header of ['X-Gateway-Metadata', 'X-Gateway-Experimental-Metadata']) {
      const r = await streamChat(env, { model: 'test/alpha' }, { headers: { [header]: 'Enabled' } });
      const withMeta = r.chunks.filter((c) => c.gateway_metadata);
      expect(withMeta).toHaveLength(1);
      const last = r.chunks[r.chunks.length - 1];
      expect(withMeta[0]).toBe(last);
      expect(last.usage).toBeTruthy();
      expect(last.gateway_metadata).toMatchObject({
        attempt: 1,
        requested: 'test/alpha',
        strategy: 'direct',
        region: expect.any(String),
        is_byok: false,
        endpoints: {
          total: 2,
          available: [
            { model: 'test/alpha', provider: 'sim-a', selected: true },
            { model: 'test/alpha', provider: 'sim-b', selected: false },
          ],
        },
      });
      expect(typeof last.gateway_metadata.summary).toBe('string');
    }
    const off = await streamChat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'disabled' } });
    expect(off.chunks.some((c) => c.gateway_metadata)).toBe(false);
  });

  it('tool calls stream as tool_calls deltas and end with finish_reason tool_calls', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }];
    const r = await streamChat(env, { model: 'test/alpha', tools });
    const calls = r.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup' } });
    expect(JSON.parse(calls.map((t: Json) => t.function.arguments).join(''))).toHaveProperty('q');
    expect(r.chunks[r.chunks.length - 2].choices[0].finish_reason).toBe('tool_calls');
  });

  it('large answers (well over the relay\'s 256 KB read-ahead) arrive whole, streamed and not', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 120_000 });
    try {
      const streamed = await streamChat(env, { model: 'test/alpha' });
      expect(streamed.status).toBe(200);
      const text = streamedText(streamed.chunks);
      expect(text.length).toBeGreaterThan(300_000);
      const plain = await chat(env, { model: 'test/alpha' });
      expect(plain.status).toBe(200);
      expect(plain.body.choices[0].message.content).toBe(text);
      expect(plain.body.usage.completion_tokens).toBe(120_000);
    } finally {
      env.sim.resetKnobs();
    }
  }, 30_000);
});

describe('stream failures', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { env: KEEPALIVE });

  it('error after the first token: status 200, an error chunk with finish_reason "error", no fallback', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { errorAfterChunks: 3 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.done).toBe(true);
    const id = r.headers.get('x-generation-id');
    expect(streamedText(r.chunks)).toBe('Simulated reply to:');
    const last = r.chunks[r.chunks.length - 1];
    expect(last).toMatchObject({ id, object: 'chat.completion.chunk', model: 'test/alpha' });
    expect(last.error).toMatchObject({ code: 502, message: expect.any(String), metadata: { error_type: 'provider_unavailable' } });
    // 5xx details are masked, without provider_code.
    expect(last.error.metadata.provider_code).toBeUndefined();
    expect(last.choices).toEqual([{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }]);
    expect(env.sim.stats('sim-b').requests).toBe(0);
    const g = await env.t.call('GET', `/generation?id=${id}`, { key: env.key });
    expect(g.body.data).toMatchObject({ streamed: true, finish_reason: 'error', provider_name: 'sim-a' });
  });

  it('error before the first token (HTTP error): falls back to the next provider inside the same stream', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { errorStatus: 500 });
    const r = await streamChat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(r.chunks.every((c) => c.provider === 'Sim B' && !c.error)).toBe(true);
    const last = r.chunks[r.chunks.length - 1];
    expect(last.gateway_metadata.attempt).toBe(2);
    expect(last.gateway_metadata.endpoints.available).toEqual([
      { model: 'test/alpha', provider: 'sim-a', selected: false },
      { model: 'test/alpha', provider: 'sim-b', selected: true },
    ]);
    expect(last.gateway_metadata.attempts).toEqual([
      expect.objectContaining({ provider: 'sim-a', status: 502 }),
      expect.objectContaining({ provider: 'sim-b', status: 200 }),
    ]);
  });

  it('error event before any content (errorAfterChunks: 0): nothing was forwarded, so the next provider serves', async () => {
    const env = isolated();
    // sim-a opens the stream (role chunk, no content) and then sends an error event.
    env.sim.setKnobs('sim-a', { errorAfterChunks: 0 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.chunks.some((c) => c.error)).toBe(false);
    expect(r.chunks.every((c) => c.provider === 'Sim B')).toBe(true);
    expect(streamedText(r.chunks)).toMatch(/^Simulated reply to:/);
    expect(r.chunks[r.chunks.length - 1].usage.completion_tokens).toBe(12);
    expect(env.sim.stats('sim-a').requests).toBe(1);
    expect(env.sim.stats('sim-b').requests).toBe(1);
  });

  it('upstream connection dropped before any content: the next provider serves', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { disconnectAfterChunks: 0 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.chunks.every((c) => c.provider === 'Sim B' && !c.error)).toBe(true);
    expect(r.done).toBe(true);
  });

  it('broken upstream stream (malformed event) before content: the next provider serves', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { malformed: 'json' });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.chunks.every((c) => c.provider === 'Sim B' && !c.error)).toBe(true);
  });

  it('a slow first provider fails after keep-alives were sent: the next provider still serves the same stream', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { latencyMs: 1_000, errorStatus: 500 }); // room for a keep-alive (200 ms) even with late timers
    const r = await streamChat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(r.keepalives).toBeGreaterThanOrEqual(1);
    expect(r.chunks.every((c) => c.provider === 'Sim B' && !c.error)).toBe(true);
    expect(r.chunks[r.chunks.length - 1].gateway_metadata.attempt).toBe(2);
    expect(r.done).toBe(true);
  });

  it('every provider fails before any byte: an ordinary JSON error with the status, no SSE', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    env.sim.setKnobs('sim-b', { errorStatus: 529 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(529);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const body = JSON.parse(r.text);
    expect(body.error).toMatchObject({ code: 529, metadata: { provider_name: 'Sim B' } });
    expect(body.error.metadata.previous_errors).toEqual([expect.objectContaining({ provider: 'sim-a', status: 502 })]);
  });

  it('every provider fails after keep-alives committed the stream: status 200 and one error chunk', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { latencyMs: 1_000, errorStatus: 500 }); // room for a keep-alive (200 ms) even with late timers
    env.sim.setKnobs('sim-b', { errorStatus: 500 });
    const r = await streamChat(env, { model: 'test/alpha' });
    expect(r.status).toBe(200);
    expect(r.keepalives).toBeGreaterThanOrEqual(1);
    expect(r.chunks).toHaveLength(1);
    expect(r.chunks[0].error.code).toBe(502);
    expect(r.chunks[0].choices[0].finish_reason).toBe('error');
    expect(r.done).toBe(true);
  });
});

describe('client disconnects', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });

  it('a client that goes away mid-stream aborts the upstream request', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { completionTokens: 200, chunkGapMs: 20 });
    const ac = new AbortController();
    const res = await fetch(`${env.t.api}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/alpha', messages: USER, stream: true }),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-generation-id')!;
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/data: /g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
    expect(env.sim.stats('sim-a').inFlight).toBe(1);
    ac.abort();
    await until(() => env.sim.stats('sim-a').aborted === 1, 3_000, 'the upstream abort');
    expect(env.sim.stats('sim-a').inFlight).toBe(0);
    // Well before the 4 s the full reply would take; no retry elsewhere.
    expect(env.sim.stats('sim-b').requests).toBe(0);
    await until(async () => (await env.t.call('GET', `/generation?id=${id}`, { key: env.key })).status === 200, 3_000, 'the record');
    const g = await env.t.call('GET', `/generation?id=${id}`, { key: env.key });
    expect(g.body.data).toMatchObject({ cancelled: true, streamed: true });
  });

  it('a client that goes away while a non-streaming request waits aborts the upstream request', async () => {
    const env = isolated();
    env.sim.setKnobs('sim-a', { ttftMs: 5_000 });
    // node:http without an agent: the socket is simply destroyed (a pooled fetch may leave a spare connection open).
    const url = new URL(`${env.t.api}/chat/completions`);
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'test/alpha', messages: USER }));
    await until(() => env.sim.stats('sim-a').inFlight === 1, 3_000, 'the upstream request');
    req.destroy();
    await until(() => env.sim.stats('sim-a').aborted === 1, 3_000, 'the upstream abort');
    expect(env.sim.stats('sim-a').inFlight).toBe(0);
    expect(env.sim.stats('sim-b').requests).toBe(0);
  });

});

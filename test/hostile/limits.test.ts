/**
 * Issue 16: hostile input answered with the documented 4xx in the envelope (finite numbers, nesting depth, size,
 * content types, oversized headers, short echoes), and the smaller findings: callback_url with a trailing dot,
 * /health, /ready and /metrics reachable where the document's top-level server points, SIGTERM on PostgreSQL
 * answering 503 (never a TCP reset), the record flush interval setting.
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { BACKENDS, startGateway } from '../helpers.js';
import { checkCallbackUrl } from '../../src/services/videos.js';
import { loadConfig } from '../../src/config.js';

describe.each(BACKENDS)('hostile requests (%s)', (backend) => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv(backend, { env: { GATEWAY_BODY_LIMIT: String(1024 * 1024) } });
  });
  afterAll(async () => env?.close());
  const raw = (path: string, body: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }, key = env.key) =>
    env.t.call('POST', path, { key, raw: body, headers });

  it('1e309 is a 400 naming the field, in any body and query (dimensions on /embeddings: no upstream call)', async () => {
    const before = env.sim.requests.length;
    const res = await raw('/embeddings', '{"model":"test/alpha","input":"x","dimensions":1e309}');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 400, metadata: { field: 'dimensions', rule: 'finite' } });
    expect((await raw('/chat/completions', '{"model":"test/alpha","messages":[{"role":"user","content":"hi"}],"temperature":-1e400}')).body.error.metadata).toEqual({ field: 'temperature', rule: 'finite' });
    const q = await env.t.call('GET', '/keys?offset=1e309');
    expect(q.status).toBe(400);
    expect(q.body.error.message).toMatch(/^query parameter offset/);
    expect((await env.t.call('GET', '/organization/members?offset=99999999999999999999')).status).toBe(400);
    expect(env.sim.requests.length).toBe(before);
  });

  it('deep nesting is a 400 before any recursive walk (count_tokens included)', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const res = await raw('/messages/count_tokens', `{"model":"test/claude","messages":[{"role":"user","content":${deep}}]}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/nests deeper than 64 levels/);
    const chat = await raw('/chat/completions', `{"model":"test/alpha","messages":[{"role":"user","content":"hi"}],"metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
    expect(chat.status).toBe(400);
    expect(chat.body.error.code).toBe(400);
  });

  it('415 for a content type a route does not take, or no body; 413 for JSON above GATEWAY_BODY_LIMIT on every route', async () => {
    for (const [ct, body] of [['text/plain', 'hello'], ['application/xml', '<a/>']] as const) {
      const res = await raw('/audio/transcriptions', body, { 'content-type': ct });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe(415);
    }
    const none = await fetch(`${env.t.api}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` } });
    expect(none.status).toBe(415);
    expect(((await none.json()) as { error: { code: number } }).error.code).toBe(415);
    // The transcriptions route takes 36 MiB multipart uploads; its JSON bodies are held to GATEWAY_BODY_LIMIT (1 MiB here).
    const big = await raw('/audio/transcriptions', JSON.stringify({ model: 'test/whisper', input_audio: { data: 'A'.repeat(1_100_000), format: 'wav' } }));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe(413);
  });

  it('an oversized header is a 431 in the envelope', async () => {
    const res = await request(`${env.t.api}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${'k'.repeat(100_000)}` } });
    expect(res.statusCode).toBe(431);
    expect(await res.body.json()).toEqual({ error: { code: 431, message: 'Request headers are too large' } });
  });

  it('a 1 MB model name is echoed as a short prefix only', async () => {
    const res = await raw('/chat/completions', JSON.stringify({ model: `x/${'m'.repeat(1_000_000)}`, messages: [{ role: 'user', content: 'hi' }] }));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body).length).toBeLessThan(2000);
  });

  it('/health, /ready and /metrics answer under /api/v1 too, where the document top-level server points', async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as { servers: Array<{ url: string }>; paths: Record<string, Record<string, { servers?: Array<{ url: string }> }>> };
    expect(doc.servers[0].url).toBe('/api/v1');
    for (const p of ['/health', '/ready']) {
      expect(doc.paths[p].get.servers).toEqual([{ url: '/' }]);
      expect((await fetch(`${env.t.url}${p}`)).status).toBe(200);
      expect((await fetch(`${env.t.api}${p}`)).status).toBe(200);
    }
    expect((await env.t.call('GET', '/metrics')).status).toBe(200);
  });
});

describe('smaller findings', () => {
  it('callback_url with a trailing-dot loopback or private host is refused', () => {
    for (const u of ['https://localhost.:8443/hook', 'https://LOCALHOST../x', 'https://127.0.0.1.:9/x', 'https://10.0.0.1./x', 'https://api.localhost./x']) {
      expect(() => checkCallbackUrl(u, false), u).toThrow(/loopback|private/);
    }
    expect(checkCallbackUrl('https://example.com./hook', false)).toBe('https://example.com./hook');
  });

  it('GATEWAY_RECORD_FLUSH_MS sets the record flush interval (validated)', () => {
    expect(loadConfig({ GATEWAY_RECORD_FLUSH_MS: '50' }).recordFlushMs).toBe(50);
    expect(loadConfig({}).recordFlushMs).toBe(500);
    expect(() => loadConfig({ GATEWAY_RECORD_FLUSH_MS: '1' })).toThrow(/GATEWAY_RECORD_FLUSH_MS/);
  });

  it('SIGTERM under keep-alive load on PostgreSQL: every request is answered (200 or 503), none reset', { timeout: 60_000 }, async () => {
    const t = await startGateway('postgres');
    const agent = new Agent({ connections: 16, keepAliveTimeout: 60_000 });
    const outcomes: Record<string, number> = {};
    let stop = false;
    const loop = async () => {
      while (!stop) {
        try {
          const res = await request(`${t.api}/key`, { dispatcher: agent, headers: { authorization: `Bearer ${t.adminKey}` } });
          await res.body.text();
          outcomes[res.statusCode] = (outcomes[res.statusCode] ?? 0) + 1;
          if (res.statusCode === 503) return;
        } catch (err) {
          // After the listener closed, a new connection is refused: the client has already had its 503.
          const code = (err as { code?: string }).code ?? String(err);
          outcomes[code] = (outcomes[code] ?? 0) + 1;
          return;
        }
        // Some connections go idle between requests: the ones Node would close under a request on its way.
        await new Promise((r) => setTimeout(r, Math.random() * 20));
      }
    };
    const loops = Array.from({ length: 16 }, loop);
    await new Promise((r) => setTimeout(r, 500));
    await t.gw.close();
    stop = true;
    await Promise.all(loops);
    await agent.close();
    await t.close();
    expect(outcomes[200]).toBeGreaterThan(0);
    expect(outcomes[503]).toBeGreaterThan(0);
    expect(Object.keys(outcomes).filter((k) => k !== '200' && k !== '503'), JSON.stringify(outcomes)).toEqual([]);
  });
});

/**
 * The Gemini API routes over HTTP (without an SDK, to see the exact bytes): the three ways to send a key, the JSON-array
 * stream of streamGenerateContent without alt=sse, errors in Google's shape (validation naming the field, a RetryInfo
 * detail on 429, an error chunk inside a stream), fallbacks through `models`, gateway metadata, the generation record
 * (SQLite and PostgreSQL), the rate limit, and the routes in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedUrl } from '../../src/http/plugins/access-log.js';
import { BACKENDS } from '../helpers.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

type Json = Record<string, any>;
const HELLO = { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] };

async function post(env: ChatEnv, path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': env.key }) {
  const res = await fetch(`${env.t.url}/api/v1beta/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: Json | null = null;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    /* an event stream */
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe('Gemini API over HTTP', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
  });
  afterAll(async () => env?.close());

  it('takes the key as x-goog-api-key, ?key= or a bearer token; refuses a missing one in Google’s shape', async () => {
    const a = await post(env, 'models/test%2Falpha:generateContent', HELLO);
    const b = await post(env, `models/test/alpha:generateContent?key=${env.key}`, HELLO, {});
    const c = await post(env, 'models/test/alpha:generateContent', HELLO, { authorization: `Bearer ${env.key}` });
    for (const r of [a, b, c]) {
      expect(r.status).toBe(200);
      expect(r.json?.candidates[0].content.parts[0].text).toMatch(/^Simulated reply to: hello/);
    }
    const none = await post(env, 'models/test/alpha:generateContent', HELLO, {});
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' } });
    // ?key= is for the Gemini routes only.
    const elsewhere = await fetch(`${env.t.api}/key?key=${env.key}`);
    expect(elsewhere.status).toBe(401);
    // The access log never shows it.
    expect(loggedUrl(`/api/v1beta/models/x:generateContent?alt=sse&key=${env.key}`)).toBe('/api/v1beta/models/x:generateContent?alt=sse&key=***');
  });

  it('streamGenerateContent without alt=sse answers one JSON array of chunks; with it, SSE', async () => {
    const arr = await post(env, 'models/test/gemini:streamGenerateContent', HELLO);
    expect(arr.status).toBe(200);
    expect(arr.headers.get('content-type')).toMatch(/^application\/json/);
    const chunks = arr.json as Json[];
    expect(Array.isArray(chunks)).toBe(true);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: Json) => p.text ?? '').join('')).join('')).toMatch(/^Simulated reply to: hello/);
    expect(chunks[chunks.length - 1].candidates[0].finishReason).toBe('STOP');
    expect(chunks[chunks.length - 1].usageMetadata.totalTokenCount).toBeGreaterThan(0);

    const sse = await post(env, 'models/test/gemini:streamGenerateContent?alt=sse', HELLO);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sse.text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as Json);
    expect(events.length).toBe(chunks.length);
    expect(events[0].responseId).toBe(sse.headers.get('x-generation-id'));
  });

  it('an error after content ends the stream with Google’s error object (JSON array and SSE)', async () => {
    // Two models: a failed endpoint is avoided for a while (health).
    env.sim.setKnobs('sim-responses', { errorAfterChunks: 2 });
    env.sim.setKnobs('sim-anthropic', { errorAfterChunks: 2 });
    try {
      const arr = await post(env, 'models/test/responses:streamGenerateContent', HELLO);
      const chunks = arr.json as Json[];
      expect(chunks[chunks.length - 1]).toEqual({ error: { code: 502, message: 'Provider error during the stream', status: 'UNAVAILABLE', metadata: { error_type: expect.any(String) } } });
      const sse = await post(env, 'models/test/claude:streamGenerateContent?alt=sse', HELLO);
      const last = sse.text.trim().split('\n\n').pop()!;
      expect(last, sse.text).toMatch(/^data: /);
      expect(JSON.parse(last.slice(6))).toMatchObject({ error: { code: 529, status: 'UNAVAILABLE' } }); // Anthropic's in-stream overloaded_error
    } finally {
      env.sim.resetKnobs();
    }
  });

  it('validation errors name the field, in Google’s shape', async () => {
    const r = await post(env, 'models/test/alpha:generateContent', { contents: [{ role: 'system', parts: [{ text: 'x' }] }] });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('contents[0].role') } });
    const unknownCall = await post(env, 'models/test/alpha:generateContent', { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] });
    expect(unknownCall.json).toMatchObject({ error: { code: 400, message: expect.stringContaining('contents[0].parts[0].functionResponse') } });
    const search = await post(env, 'models/test/alpha:generateContent', { ...HELLO, tools: [{ googleSearch: {} }] });
    expect(search.json).toMatchObject({ error: { code: 400, message: expect.stringContaining('tools[0].googleSearch') } });
    const notFound = await post(env, 'models/no-such-model:generateContent', HELLO);
    expect(notFound.status).toBe(404);
    expect(notFound.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });

  it('a 429 upstream carries a RetryInfo detail; fallbacks go through `models`; metadata on request', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 429, retryAfter: 7 });
    try {
      const limited = await post(env, 'models/test/beta:generateContent', HELLO);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.json?.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] });
      const fell = await post(env, 'models/test/beta:generateContent', { ...HELLO, models: ['test/gemini'] }, { 'x-goog-api-key': env.key, 'x-gateway-metadata': 'enabled' });
      expect(fell.status).toBe(200);
      expect(fell.json?.modelVersion).toBe('test/gemini');
      expect(fell.json?.gateway_metadata).toMatchObject({ strategy: 'fallback', attempts: [{ provider: 'sim-c', status: 429 }, { provider: 'sim-google', status: 200 }] });
    } finally {
      env.sim.resetKnobs();
    }
  });

  it('the key’s rate limit applies to generation, not to countTokens', async () => {
    const created = await env.t.call('POST', '/keys', { body: { name: 'gemini-limited', rate_limit: { requests: 1, interval: '1m' } } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    const first = await post(env, 'models/test/gemini:generateContent', HELLO, { 'x-goog-api-key': key });
    expect(first.status).toBe(200);
    const second = await post(env, 'models/test/gemini:generateContent', HELLO, { 'x-goog-api-key': key });
    expect(second.status).toBe(429);
    expect(second.json?.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    const count = await post(env, 'models/test/gemini:countTokens', HELLO, { 'x-goog-api-key': key });
    expect(count.status).toBe(200);
    expect(count.json?.totalTokens).toBeGreaterThan(0);
  });

  it('countTokens: 404 in Google’s shape when the model’s providers have no counting API', async () => {
    const r = await post(env, 'models/test/alpha:countTokens', { generateContentRequest: HELLO });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', message: expect.stringContaining('Token counting is not available') } });
  });

  it('the OpenAPI document has the Gemini routes, their server and real schemas', async () => {
    const doc = (await env.t.call('GET', '/openapi.json')).body as Json;
    const op = doc.paths['/v1beta/models/{model}:generateContent']?.post;
    expect(op).toBeDefined();
    expect(op.servers).toEqual([expect.objectContaining({ url: '/api' })]);
    expect(op.requestBody.content['application/json'].schema.properties.contents).toBeDefined();
    expect(doc.paths['/v1beta/models/{author}/{slug}:streamGenerateContent']?.post).toBeDefined();
    expect(doc.paths['/v1beta/models/{model}:countTokens']?.post).toBeDefined();
    expect(doc.paths['/v1beta/models']?.get).toBeDefined();
    expect(doc.components.schemas.GoogleError).toBeDefined();
  });
});

for (const backend of BACKENDS) {
  describe(`Gemini API generation records (${backend})`, () => {
    let env: ChatEnv;
    beforeAll(async () => {
      env = await startChatEnv(backend);
    });
    afterAll(async () => env?.close());

    it('records each call like the other inference APIs (cost, tokens, streamed)', async () => {
      const r = await post(env, 'models/test/claude:generateContent', HELLO);
      expect(r.status).toBe(200);
      const s = await post(env, 'models/test/claude:streamGenerateContent?alt=sse', HELLO);
      await env.t.gw.svc.recorder.flush();
      const plain = await env.t.call('GET', `/generation?id=${r.headers.get('x-generation-id')}`, { key: env.key });
      expect(plain.body.data).toMatchObject({
        model: 'test/claude',
        provider_name: 'sim-anthropic',
        streamed: false,
        status: 200,
        tokens_prompt: r.json?.usageMetadata.promptTokenCount,
        tokens_completion: r.json?.usageMetadata.candidatesTokenCount,
        total_cost: r.json?.usageMetadata.cost,
      });
      const streamed = await env.t.call('GET', `/generation?id=${s.headers.get('x-generation-id')}`, { key: env.key });
      expect(streamed.body.data).toMatchObject({ model: 'test/claude', streamed: true, status: 200, finish_reason: 'stop' });
    });
  });
}

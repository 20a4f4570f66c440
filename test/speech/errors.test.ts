/**
 * Error statuses of POST /audio/speech through the simulator's knobs, each a JSON envelope whose `code` equals the
 * status: upstream 429 → 429 + Retry-After, 5xx → 502, bad provider credentials → 502, 529 → 529, no answer in time
 * → 524, nothing routable → 404, every endpoint failed recently → 503, key limit reached → 402; Gemini's own
 * envelope mapped the same way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { speech, speechCatalog } from './util.js';

describe('speech error statuses', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const ask = (model = 'test/tts', extra: Record<string, unknown> = {}) => speech(env, { model, input: 'Hello there', voice: 'alloy', ...extra });

  it('upstream 429 → 429 with Retry-After and the provider detail', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 429, retryAfter: 7 });
    const r = await ask();
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.error).toMatchObject({ code: 429, metadata: { error_type: 'rate_limit_exceeded', provider_name: 'Sim TTS', provider_code: 429 } });
    expect(r.headers.get('x-generation-id')).toMatch(/^gen-/); // the failure is recorded too
  });

  it.each([500, 502, 503])('upstream %i → 502 "Provider returned error"', async (status) => {
    env.sim.setKnobs('sim-tts', { errorStatus: status });
    const r = await ask();
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(502);
    expect(r.body.error.message).toMatch(/^Provider returned error/);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'provider_unavailable', provider_code: status });
  });

  it('upstream 401 (the gateway credential) → 502', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 401 });
    const r = await ask();
    expect(r.status).toBe(502);
    expect(r.body.error.metadata.error_type).toBe('authentication');
  });

  it('upstream 400 → 400 (the request, not the provider)', async () => {
    const r = await ask('test/tts', { input: 'x'.repeat(5000) });
    expect(r.status).toBe(400);
    expect(r.body.error.metadata.raw.error.code).toBe('string_above_max_length');
  });

  it('upstream 529 → 529', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 529 });
    const r = await ask();
    expect(r.status).toBe(529);
    expect(r.body.error).toMatchObject({ code: 529, metadata: { error_type: 'provider_overloaded' } });
  });

  it('no answer within the first-byte timeout → 524', async () => {
    env.sim.setKnobs('sim-tts-slow', { hang: true });
    const t0 = Date.now();
    const r = await ask('test/tts-slow');
    expect(r.status).toBe(524);
    expect(r.body.error).toMatchObject({ code: 524, metadata: { error_type: 'timeout' } });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a stall between chunks before any audio (idle timeout) → 524', async () => {
    env.sim.setKnobs('sim-tts-slow', { ttftMs: 1500 });
    const r = await ask('test/tts-slow');
    expect(r.status).toBe(524);
  });

  it('Gemini: 429 RESOURCE_EXHAUSTED → 429 with the RetryInfo delay; 503 "overloaded" → 529; 500 → 502', async () => {
    env.sim.setKnobs('sim-gtts', { errorStatus: 429, retryAfter: 4 });
    let r = await ask('test/tts-gemini', { voice: 'Kore' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('4');
    env.advance(31_000);
    env.sim.setKnobs('sim-gtts', { errorStatus: 503, retryAfter: null });
    r = await ask('test/tts-gemini', { voice: 'Kore' });
    expect(r.status).toBe(529);
    env.advance(31_000);
    env.sim.setKnobs('sim-gtts', { errorStatus: 500 });
    r = await ask('test/tts-gemini', { voice: 'Kore' });
    expect(r.status).toBe(502);
  });

  it('Gemini: an event stream without audio or finishReason → 502', async () => {
    env.sim.setKnobs('sim-gtts', { malformed: 'empty' });
    const r = await ask('test/tts-gemini', { voice: 'Kore' });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toMatch(/finishReason/);
  });

  it('an empty raw answer → 502 "no audio"', async () => {
    env.sim.setKnobs('sim-tts', { malformed: 'empty' });
    const r = await ask();
    expect(r.status).toBe(502);
    expect(r.body.error.message).toMatch(/no audio/);
  });

  it('unknown model → 404', async () => {
    const r = await ask('test/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 404, metadata: { error_type: 'not_found' } });
  });

  it('no endpoint with credentials → 404 naming the provider', async () => {
    const r = await ask('test/tts-nokey');
    expect(r.status).toBe(404);
    expect(r.body.error.metadata).toMatchObject({ error_type: 'no_endpoints', excluded_by: ['no_credentials'], providers_without_credentials: ['sim-keyed'] });
  });

  it('no endpoint producing the requested format → 404 (Gemini is pcm only)', async () => {
    const r = await ask('test/tts-gemini', { voice: 'Kore', response_format: 'mp3' });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toBe('No endpoint of test/tts-gemini can produce response_format "mp3"');
    expect(r.body.error.metadata.excluded_by).toEqual(['unsupported_parameter']);
    expect(env.sim.stats('sim-gtts').requests).toBe(0);
  });

  it('every endpoint failed in the last 30 s → 503 with Retry-After', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 500 });
    expect((await ask()).status).toBe(502);
    const r = await ask();
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(env.sim.stats('sim-tts').requests).toBe(1);
  });

  it('X-Gateway-Metadata: enabled adds the attempts to an error', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 500 });
    const r = await speech(env, { model: 'test/tts-fallback', input: 'Hi', voice: 'alloy', provider: { order: ['sim-tts'], allow_fallbacks: false } }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(502);
    expect(r.body.gateway_metadata).toMatchObject({ requested: 'test/tts-fallback', response_format: 'pcm', attempts: [{ provider: 'sim-tts', status: 502 }] });
  });

  it('a key without room for the known per-character cost → 402 before any call; one with room spends it exactly', async () => {
    // 11 characters at $0.000015 = $0.000165: a $0.0001 limit cannot pay for one call (reserved before it is sent).
    const { key } = await createInferenceKey(env.t, { name: 'limited', limit: 0.0001 });
    const refused = await speech(env, { model: 'test/tts', input: 'Hello there', voice: 'alloy' }, { key });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 402, metadata: { error_type: 'payment_required', limit: 'key limit', available: 0.0001, requested_max_cost: 0.000165 } });
    expect(refused.body.error.message).toContain('this speech can cost up to $0.000165000');
    expect(env.sim.stats('sim-tts').requests).toBe(0);
    const room = await createInferenceKey(env.t, { name: 'room', limit: 0.0002 });
    expect((await speech(env, { model: 'test/tts', input: 'Hello there', voice: 'alloy' }, { key: room.key })).status).toBe(200);
    expect((await speech(env, { model: 'test/tts', input: 'Hello there', voice: 'alloy' }, { key: room.key })).status).toBe(402);
    expect(env.sim.stats('sim-tts').requests).toBe(1);
  });

  it('concurrent speech of a limited key reserves each call: a burst admits exactly what the limit has room for', async () => {
    // $0.0004 with one call ($0.000165) made: $0.000235 left holds one more reservation of $0.000165 — 1 of 6 passes,
    // and the spend ($0.00033) stays below the limit.
    const { key } = await createInferenceKey(env.t, { name: 'speech-burst', limit: 0.0004 });
    expect((await speech(env, { model: 'test/tts', input: 'Hello there', voice: 'alloy' }, { key })).status).toBe(200);
    env.sim.setKnobs('sim-tts', { latencyMs: 300 });
    const statuses = (await Promise.all(Array.from({ length: 6 }, () => speech(env, { model: 'test/tts', input: 'Hello there', voice: 'alloy' }, { key })))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(5);
  });
});

/**
 * Routing of speech requests: endpoints that cannot produce the requested format are skipped (never transcoded), an
 * answer in another format is refused and the next endpoint tried, fallbacks happen until the first audio byte (a
 * failure after it cuts the connection), provider preferences and guardrails apply as for chat.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatEnv } from '../chat-helpers.js';
import { isolatedEnv, until } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { simSpeechAudio } from '../../src/sim/tts.js';
import { generation, received, speech, speechCatalog } from './util.js';

describe('speech routing', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ChatEnv;
  beforeEach(() => {
    env = isolated();
  });
  const input = 'Routing is fun';
  const audio = (format: 'mp3' | 'pcm', voice = 'alloy') => simSpeechAudio({ input, voice, format });

  it('pcm asked: the mp3-only endpoint is skipped (never called), the other serves', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await speech(env, { model: 'test/tts-mp3only', input, voice: 'alloy', response_format: 'pcm' });
      expect(r.status).toBe(200);
      expect(r.bytes.equals(audio('pcm'))).toBe(true);
    }
    expect(env.sim.stats('sim-mp3').requests).toBe(0);
    expect(env.sim.stats('sim-tts2').requests).toBe(5);
  });

  it('mp3 asked: the mp3-only endpoint may serve (the cheaper one, with sort by price)', async () => {
    const r = await speech(env, { model: 'test/tts-mp3only', input, voice: 'alloy', response_format: 'mp3', provider: { sort: 'price' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(r.bytes.equals(audio('mp3'))).toBe(true);
    expect(env.sim.stats('sim-mp3').requests).toBe(1);
  });

  it('pcm asked on the mp3-only endpoint alone → 404, metadata names the skip', async () => {
    const r = await speech(env, { model: 'test/tts-mp3only', input, voice: 'alloy', provider: { only: ['sim-mp3'] } }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/can produce response_format "pcm"/);
    expect(r.body.gateway_metadata.excluded).toEqual(
      expect.arrayContaining([
        { model: 'test/tts-mp3only', provider: 'sim-mp3', reason: 'unsupported_parameter' },
        { model: 'test/tts-mp3only', provider: 'sim-tts2', reason: 'only' },
      ]),
    );
  });

  it('an answer in another format (WAV for pcm) is refused before any byte, and the next endpoint serves', async () => {
    // The order is pinned: with the default strategy the cheaper endpoint could go first and the WAV one never be tried.
    const r = await speech(env, { model: 'test/tts-wav', input, voice: 'alloy', response_format: 'pcm', provider: { order: ['sim-wav', 'sim-tts2'] } });
    expect(r.status).toBe(200);
    expect(r.bytes.equals(audio('pcm'))).toBe(true);
    expect(r.bytes.subarray(0, 4).toString()).not.toBe('RIFF');
    expect(env.sim.stats('sim-wav').requests).toBe(1);
    const g = await generation(env, r.headers.get('x-generation-id')!);
    expect(g.provider_name).toBe('sim-tts2');
    expect(g.provider_responses[0]).toMatchObject({ provider: 'sim-wav', status: 502 });
    expect(g.provider_responses[0].message).toMatch(/audio\/wav/);
  });

  it('a WAV answer with no other endpoint → 502, the client never gets the wrong bytes', async () => {
    const r = await speech(env, { model: 'test/tts-wav', input, voice: 'alloy', response_format: 'mp3', provider: { only: ['sim-wav'] } });
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.error.message).toMatch(/audio\/wav where mp3 was asked/);
  });

  it('fallback before the first byte: the first endpoint fails, the second serves the exact audio', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 500 });
    const r = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts', 'sim-tts2'] } });
    expect(r.status).toBe(200);
    expect(r.bytes.equals(audio('pcm'))).toBe(true);
    const g = await generation(env, r.headers.get('x-generation-id')!);
    expect(g.provider_name).toBe('sim-tts2');
    expect(g.provider_responses).toEqual([
      expect.objectContaining({ provider: 'sim-tts', status: 502 }),
      expect.objectContaining({ provider: 'sim-tts2', status: 200 }),
    ]);
  });

  it('fallback when the connection drops before any audio (after headers)', async () => {
    env.sim.setKnobs('sim-tts', { disconnectAfterChunks: 0 });
    const r = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts', 'sim-tts2'] } });
    expect(r.status).toBe(200);
    expect(r.bytes.equals(audio('pcm'))).toBe(true);
    expect(env.sim.stats('sim-tts2').requests).toBe(1);
  });

  it('a failure after the first byte cuts the connection (no silent truncated file) and is recorded', async () => {
    env.sim.setKnobs('sim-tts', { disconnectAfterChunks: 2, chunkGapMs: 20 });
    const res = await fetch(`${env.t.api}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts', 'sim-tts2'] } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(env.sim.stats('sim-tts2').requests).toBe(0);
    const g = await generation(env, res.headers.get('x-generation-id')!);
    // Audio went out: the input's characters are billed (docs/spend.md, "Cut streams").
    expect(g).toMatchObject({ status: 502, provider_name: 'sim-tts', total_cost: 0.00021 });
  });

  it('provider.order and provider.only pick the endpoint', async () => {
    await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts2'] } });
    expect(env.sim.stats('sim-tts2').requests).toBe(1);
    await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { only: ['sim-tts'] } });
    expect(env.sim.stats('sim-tts').requests).toBe(1);
    // Default strategy: the cheaper endpoint (sim-tts, $0.000015/char) is in the cheap tier with sim-tts2 (2×), so
    // both get traffic, the cheaper more often; sort by price always picks it.
    for (let i = 0; i < 3; i++) await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { sort: 'price' } });
    expect(env.sim.stats('sim-tts').requests).toBe(4);
  });

  it('max_price counts a per-character price as a prompt price ($ per million characters)', async () => {
    const r = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { max_price: { prompt: 20 } } });
    expect(r.status).toBe(200);
    expect(env.sim.stats('sim-tts').requests).toBe(1);
    const none = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { max_price: { prompt: 10 } } });
    expect(none.status).toBe(404);
  });

  it("the key's guardrail applies: provider allowlist narrows the endpoints, a blocked model is a 403", async () => {
    const { key, hash } = await createInferenceKey(env.t, { name: 'guarded' });
    const g = await env.t.call('POST', '/guardrails', { body: { name: 'only tts2', allowed_providers: ['sim-tts2'] } });
    expect(g.status).toBe(201);
    expect((await env.t.call('POST', `/guardrails/${g.body.data.id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
    const ok = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts'] } }, { key });
    expect(ok.status).toBe(200);
    expect(env.sim.stats('sim-tts').requests).toBe(0);
    expect(env.sim.stats('sim-tts2').requests).toBe(1);
    const blocked = await speech(env, { model: 'test/tts', input, voice: 'alloy' }, { key });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.message).toMatch(/^Blocked by guardrail "only tts2"/);
  });

  it('the organization settings apply (ignored provider)', async () => {
    expect((await env.t.call('PATCH', '/organization/settings', { body: { ignored_providers: ['sim-tts'] } })).status).toBe(200);
    try {
      const r = await speech(env, { model: 'test/tts', input, voice: 'alloy' });
      expect(r.status).toBe(404);
      expect(env.sim.stats('sim-tts').requests).toBe(0);
    } finally {
      await env.t.call('PATCH', '/organization/settings', { body: { ignored_providers: null } });
    }
  });

  it('a failed endpoint is tried last for 30 s', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 503, failTimes: 1 });
    await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { order: ['sim-tts', 'sim-tts2'] } });
    await until(() => env.sim.stats('sim-tts2').requests === 1);
    const r = await speech(env, { model: 'test/tts-fallback', input, voice: 'alloy', provider: { sort: 'price' } });
    expect(r.status).toBe(200);
    expect(env.sim.stats('sim-tts').requests).toBe(1);
    expect(env.sim.stats('sim-tts2').requests).toBe(2);
    expect(received(env, 'sim-tts2')).toHaveLength(2);
  });
});

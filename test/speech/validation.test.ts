/**
 * The speech request: required fields, the format enum, speed bounds, provider options (only the matched provider's
 * are forwarded, other and unknown keys dropped, never overriding the gateway's fields), keys (401, 403), and the
 * boundary between speech and chat models.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatEnv } from '../chat-helpers.js';
import { chat, isolatedEnv } from '../chat/util.js';
import { received, speech, speechCatalog } from './util.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (r: Response): Promise<any> => r.json();

describe('speech request validation', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ChatEnv;
  beforeEach(() => {
    env = isolated();
  });
  const ok = { model: 'test/tts', input: 'Hello', voice: 'alloy' };

  it.each(['model', 'input', 'voice'])('%s is required (400 naming it)', async (field) => {
    const body: Record<string, unknown> = { ...ok };
    delete body[field];
    const r = await speech(env, body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, metadata: { field, rule: 'required' } });
    expect(r.body.error.message).toContain(field);
    expect(env.sim.stats('sim-tts').requests).toBe(0);
  });

  it.each([
    ['input', ''],
    ['voice', ''],
    ['model', ''],
    ['input', 42],
  ])('%s = %j is a 400', async (field, value) => {
    const r = await speech(env, { ...ok, [field]: value });
    expect(r.status).toBe(400);
    expect(r.body.error.metadata.field).toBe(field);
  });

  it('response_format must be mp3 or pcm', async () => {
    for (const f of ['wav', 'opus', 'MP3', '']) {
      const r = await speech(env, { ...ok, response_format: f });
      expect(r.status, f).toBe(400);
      expect(r.body.error.metadata).toEqual({ field: 'response_format', rule: 'enum' });
      expect(r.body.error.message).toMatch(/mp3, pcm/);
    }
  });

  it('speed must be between 0.25 and 4; the bounds are accepted and forwarded', async () => {
    for (const [speed, rule] of [
      [0.2, 'minimum'],
      [4.5, 'maximum'],
      ['fast', 'type'],
    ] as const) {
      const r = await speech(env, { ...ok, speed });
      expect(r.status, String(speed)).toBe(400);
      expect(r.body.error.metadata).toEqual({ field: 'speed', rule });
    }
    for (const speed of [0.25, 4]) {
      const r = await speech(env, { ...ok, speed });
      expect(r.status).toBe(200);
      expect(received(env, 'sim-tts').at(-1).speed).toBe(speed);
    }
  });

  it('speed is dropped for providers without it (Gemini) — it is ignored, not an error', async () => {
    const r = await speech(env, { model: 'test/tts-gemini', input: 'Hi', voice: 'Kore', speed: 1.5 });
    expect(r.status).toBe(200);
    expect(JSON.stringify(received(env, 'sim-gtts').at(-1))).not.toContain('speed');
  });

  it("provider.options: only the matched provider's are forwarded; other providers and unknown keys are dropped", async () => {
    const r = await speech(env, {
      ...ok,
      provider: {
        options: {
          'sim-tts': { instructions: 'Speak slowly', seed: 7, dropped_null: null },
          'sim-tts2': { instructions: 'not me', other: 1 },
          'no-such-provider': { secret: 'x' },
          openai: { instructions: 'not me either' },
        },
      },
    });
    expect(r.status).toBe(200);
    const body = received(env, 'sim-tts').at(-1);
    expect(body).toEqual({ model: 'tts-sim-tts', input: 'Hello', voice: 'alloy', response_format: 'pcm', instructions: 'Speak slowly', seed: 7 });
  });

  it('provider options never replace the gateway-set fields (model, input, voice, format)', async () => {
    const r = await speech(env, {
      ...ok,
      response_format: 'mp3',
      provider: { options: { 'sim-tts': { model: 'other', input: 'other', voice: 'onyx', response_format: 'wav', stream_format: 'sse' } } },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(received(env, 'sim-tts').at(-1)).toMatchObject({ model: 'tts-sim-tts', input: 'Hello', voice: 'alloy', response_format: 'mp3' });
  });

  it('provider options reach Gemini, merged into the fields the gateway leaves unset', async () => {
    const r = await speech(env, {
      model: 'test/tts-gemini',
      input: 'Bonjour',
      voice: 'Kore',
      provider: { options: { 'sim-gtts': { generationConfig: { temperature: 0.5, speechConfig: { languageCode: 'fr-FR' }, responseModalities: ['TEXT'] } } } },
    });
    expect(r.status).toBe(200);
    expect(received(env, 'sim-gtts').at(-1).generationConfig).toEqual({
      temperature: 0.5,
      responseModalities: ['AUDIO'],
      speechConfig: { languageCode: 'fr-FR', voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
    });
  });

  it('an option value must be an object (or null)', async () => {
    const r = await speech(env, { ...ok, provider: { options: { 'sim-tts': 'fast' } } });
    expect(r.status).toBe(400);
    expect(r.body.error.metadata.field).toBe('provider.options.sim-tts');
  });

  it('unknown top-level fields are ignored, never forwarded', async () => {
    const r = await speech(env, { ...ok, stream_format: 'sse', instructions: 'ignored', extra: { a: 1 } });
    expect(r.status).toBe(200);
    expect(received(env, 'sim-tts').at(-1)).toEqual({ model: 'tts-sim-tts', input: 'Hello', voice: 'alloy', response_format: 'pcm' });
  });

  it('routing preferences are validated like chat (provider.sort, unknown provider fields)', async () => {
    expect((await speech(env, { ...ok, provider: { sort: 'cheapest' } })).status).toBe(400);
    const r = await speech(env, { ...ok, provider: { bogus: true } });
    expect(r.status).toBe(400);
    expect(r.body.error.metadata.field).toBe('provider.bogus');
  });

  it('malformed JSON is a 400 in the envelope', async () => {
    const res = await fetch(`${env.t.api}/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' }, body: '{"model":' });
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe(400);
  });

  it('401 without a key or with an unknown one; 403 with a management key', async () => {
    const none = await speech(env, ok, { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe(401);
    expect((await speech(env, ok, { key: 'sk-gw-v1-' + '0'.repeat(64) })).status).toBe(401);
    const mgmt = await speech(env, ok, { key: env.t.adminKey });
    expect(mgmt.status).toBe(403);
    expect(mgmt.body.error.code).toBe(403);
    expect(env.sim.stats('sim-tts').requests).toBe(0);
  });

  it('a chat model is refused at /audio/speech (400) and a speech model is not routable by chat (404)', async () => {
    const r = await speech(env, { model: 'test/alpha', input: 'Hi', voice: 'alloy' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/not a text-to-speech model/);
    const c = await chat(env, { model: 'test/tts' });
    expect(c.status).toBe(404);
    expect(env.sim.stats('sim-tts').requests).toBe(0);
  });

  it('the OpenAPI document describes the operation from the route schema', async () => {
    const r = await env.t.call('GET', '/openapi.json');
    const op = r.body.paths['/audio/speech'].post;
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['model', 'input', 'voice']);
    expect(schema.properties.response_format.enum).toEqual(['mp3', 'pcm']);
    expect(schema.properties.speed).toMatchObject({ minimum: 0.25, maximum: 4 });
    expect(Object.keys(op.responses['200'].content)).toEqual(['audio/mpeg', 'audio/pcm']);
    for (const s of ['400', '401', '402', '404', '429', '500', '502', '503', '524', '529']) expect(op.responses[s], s).toBeDefined();
  });
});

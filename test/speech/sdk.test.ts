/**
 * The official `openai` npm SDK's `audio.speech.create` against the gateway: the exact bytes the upstream produced
 * (raw OpenAI bytes, OpenAI SSE deltas and Gemini's base64 PCM, decoded), the Content-Type of each format, the
 * X-Generation-Id header, and errors surfacing as `APIError` with the envelope.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ChatEnv } from '../chat-helpers.js';
import { isolatedEnv } from '../chat/util.js';
import { simSpeechAudio } from '../../src/sim/tts.js';
import { generation, speechCatalog } from './util.js';

describe('openai SDK audio.speech.create', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ChatEnv;
  let client: OpenAI;
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  });

  const input = 'The quick brown fox jumps over the lazy dog.';

  it('mp3: the exact upstream bytes, audio/mpeg, X-Generation-Id', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts', voice: 'alloy', input, response_format: 'mp3' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const id = res.headers.get('x-generation-id');
    expect(id).toMatch(/^gen-/);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input, voice: 'alloy', format: 'mp3' }))).toBe(true);
    expect(bytes.subarray(0, 3).toString()).toBe('ID3');
    const g = await generation(env, id!);
    expect(g).toMatchObject({ api_type: 'tts', model: 'test/tts', provider_name: 'sim-tts', status: 200 });
  });

  it('pcm: the exact upstream bytes, audio/pcm (16-bit little-endian)', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts', voice: 'nova', input, response_format: 'pcm' });
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    const bytes = Buffer.from(await res.arrayBuffer());
    const expected = simSpeechAudio({ input, voice: 'nova', format: 'pcm' });
    expect(bytes.equals(expected)).toBe(true);
    // 10 ms of 24 kHz samples per character, two bytes each.
    expect(bytes.length).toBe(input.length * 240 * 2);
    expect(bytes.readInt16LE(200)).toBe(expected.readInt16LE(200));
  });

  it('without response_format the gateway answers pcm (its default) and asks the upstream for pcm', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts', voice: 'alloy', input });
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    expect(Buffer.from(await res.arrayBuffer()).equals(simSpeechAudio({ input, voice: 'alloy', format: 'pcm' }))).toBe(true);
    expect(env.sim.stats('sim-tts').lastBody).toMatchObject({ response_format: 'pcm', voice: 'alloy', input, model: 'tts-sim-tts' });
  });

  it('speed is forwarded and changes the audio', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts', voice: 'alloy', input, response_format: 'pcm', speed: 2 });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input, voice: 'alloy', format: 'pcm', speed: 2 }))).toBe(true);
    expect((env.sim.stats('sim-tts').lastBody as { speed?: number }).speed).toBe(2);
  });

  it('Gemini: base64 PCM inside JSON events, decoded to the exact samples', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts-gemini', voice: 'Puck', input, response_format: 'pcm' });
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input, voice: 'Puck', format: 'pcm' }))).toBe(true);
    const sent = env.sim.stats('sim-gtts').lastBody;
    expect(sent).toEqual({
      contents: [{ role: 'user', parts: [{ text: input }] }],
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Puck' } } } },
    });
    expect(env.sim.requests.at(-1)?.path).toBe('/v1beta/models/gemini-sim-tts:streamGenerateContent');
  });

  it('OpenAI SSE mode (stream_format endpoints): base64 deltas decoded to the exact bytes', async () => {
    const res = await client.audio.speech.create({ model: 'test/tts-sse', voice: 'coral', input, response_format: 'mp3' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input, voice: 'coral', format: 'mp3' }))).toBe(true);
    expect(env.sim.stats('sim-tts-sse').lastBody).toMatchObject({ stream_format: 'sse', response_format: 'mp3' });
  });

  it('errors are APIErrors with the status and the envelope', async () => {
    env.sim.setKnobs('sim-tts', { errorStatus: 429, retryAfter: 3 });
    const err = await client.audio.speech.create({ model: 'test/tts', voice: 'alloy', input }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    expect(e.status).toBe(429);
    expect(e.headers?.get('retry-after')).toBe('3');
    expect((e.error as { code: number }).code).toBe(429);

    const missing = await client.audio.speech.create({ model: 'test/nope', voice: 'alloy', input }).catch((x: unknown) => x);
    expect((missing as APIError).status).toBe(404);
  });
});

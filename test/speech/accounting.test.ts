/**
 * Price and records of speech: per-character endpoints cost characters × price, token-priced ones (Gemini, OpenAI SSE
 * mode) the tokens the provider reports; every request is a generation record (`api_type: "tts"`) and its cost is
 * counted in the key's usage like any other request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, type ClockedEnv, until } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { simAudioTokens } from '../../src/sim/tts.js';
import { speechCost } from '../../src/services/speech.js';
import { CHAR_PRICE, generation, speech, speechCatalog, TOKEN_PRICES } from './util.js';

describe('speech cost and generation records', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('per character: the record has api_type tts, the characters and characters × price', async () => {
    const input = 'Hello there, friend'; // 19 characters
    const r = await speech(env, { model: 'test/tts', input, voice: 'alloy', response_format: 'mp3' });
    expect(r.status).toBe(200);
    const g = await generation(env, r.headers.get('x-generation-id')!);
    expect(g).toMatchObject({
      api_type: 'tts',
      requested_model: 'test/tts',
      model: 'test/tts',
      provider_name: 'sim-tts',
      endpoint_tag: 'sim-tts',
      streamed: true,
      cancelled: false,
      status: 200,
      finish_reason: 'stop',
      tokens_prompt: 19,
      tokens_completion: 0,
      total_cost: 0.000285,
      upstream_inference_cost: 0.000285,
      is_byok: false,
      error: null,
    });
    expect(g.time_to_first_token).toBeGreaterThanOrEqual(0);
    expect(g.provider_responses).toEqual([{ provider: 'sim-tts', model: 'test/tts', status: 200 }]);
  });

  it('characters are counted as Unicode characters, not UTF-16 units or bytes', async () => {
    const input = 'héllo 👋 ok'; // 10 characters
    const r = await speech(env, { model: 'test/tts', input, voice: 'alloy' });
    const g = await generation(env, r.headers.get('x-generation-id')!);
    expect(g.tokens_prompt).toBe(10);
    expect(g.total_cost).toBe(0.00015);
  });

  it('Gemini: the reported text and audio tokens at the token prices', async () => {
    const input = 'A token priced sentence.'; // 24 characters: 6 text tokens, 0.24 s of audio → 6 audio tokens
    const r = await speech(env, { model: 'test/tts-gemini', input, voice: 'Kore' });
    const g = await generation(env, r.headers.get('x-generation-id')!);
    const audioTokens = simAudioTokens(input);
    expect(g).toMatchObject({ api_type: 'tts', provider_name: 'sim-gtts', tokens_prompt: 6, tokens_completion: audioTokens, native_finish_reason: 'STOP', finish_reason: 'stop' });
    expect(g.upstream_id).toMatch(/^simTts/);
    expect(audioTokens).toBe(6);
    expect(g.total_cost).toBe(0.000063); // 6 × $0.0000005 + 6 × $0.00001, exact
  });

  it('OpenAI SSE mode: the tokens of speech.audio.done at the token prices', async () => {
    const input = 'Usage comes at the end.';
    const r = await speech(env, { model: 'test/tts-sse', input, voice: 'alloy' });
    const g = await generation(env, r.headers.get('x-generation-id')!);
    const audioTokens = simAudioTokens(input);
    expect(g).toMatchObject({ tokens_prompt: Math.ceil(input.length / 4), tokens_completion: audioTokens });
    expect(g.total_cost).toBe(speechCost(TOKEN_PRICES, input.length, { promptTokens: Math.ceil(input.length / 4), completionTokens: audioTokens }));
  });

  it('speechCost: exact decimals, the request price added, null when unpriced', () => {
    expect(speechCost({ prompt: '0', completion: '0', characters: CHAR_PRICE }, 3, null)).toBe(0.000045);
    expect(speechCost({ prompt: '0', completion: '0', characters: '0.0000001', request: '0.001' }, 7, null)).toBe(0.0010007);
    expect(speechCost({ prompt: '0.000001', completion: '0.00001', characters: '0.00001' }, 10, { promptTokens: 3, completionTokens: 2 })).toBe(0.000123);
    expect(speechCost(null, 10, null)).toBeNull();
  });

  it("failures are recorded too, without a cost; the key's usage counts only what was served", async () => {
    const { key, hash } = await createInferenceKey(env.t, { name: 'usage' });
    env.sim.setKnobs('sim-tts', { errorStatus: 500 });
    const failed = await speech(env, { model: 'test/tts', input: 'nope', voice: 'alloy' }, { key });
    expect(failed.status).toBe(502);
    const fg = await generation(env, failed.headers.get('x-generation-id')!);
    expect(fg).toMatchObject({ api_type: 'tts', status: 502, total_cost: 0, provider_name: null, error: { status: 502 } });
    env.advance(31_000);
    env.sim.resetKnobs();
    for (let i = 0; i < 2; i++) expect((await speech(env, { model: 'test/tts', input: 'x'.repeat(100), voice: 'alloy' }, { key })).status).toBe(200);
    // 2 × 100 characters × $0.000015 = $0.003, visible on the key once the batch is written.
    await until(async () => (await env.t.call('GET', `/keys/${hash}`)).body.data.usage > 0, 5000, 'usage flushed');
    const k = await env.t.call('GET', `/keys/${hash}`);
    expect(k.body.data.usage).toBeCloseTo(0.003, 12);
  });
});

/**
 * Audio is relayed as it arrives: the client reads the first bytes while the upstream is still producing (raw OpenAI
 * bytes and Gemini's SSE events alike), and a client that goes away aborts the upstream request at once.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatEnv } from '../chat-helpers.js';
import { isolatedEnv, until } from '../chat/util.js';
import { simSpeechAudio } from '../../src/sim/tts.js';
import { generation, speechCatalog } from './util.js';

async function open(env: ChatEnv, body: Record<string, unknown>, signal?: AbortSignal) {
  const res = await fetch(`${env.t.api}/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  return { res, reader: res.body!.getReader() };
}

describe('speech streaming', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: speechCatalog });
  let env: ChatEnv;
  beforeEach(() => {
    env = isolated();
  });
  const input = 'Streaming audio arrives piece by piece.';

  it.each([
    ['OpenAI raw bytes', 'test/tts', 'sim-tts', 'alloy'],
    ['Gemini SSE events', 'test/tts-gemini', 'sim-gtts', 'Leda'],
    ['OpenAI SSE events', 'test/tts-sse', 'sim-tts-sse', 'alloy'],
  ])('%s: the first bytes reach the client before the upstream finished', async (_name, model, provider, voice) => {
    // 6 chunks 150 ms apart: the upstream takes ≥ 750 ms.
    env.sim.setKnobs(provider, { completionTokens: 6, chunkGapMs: 150 });
    const t0 = Date.now();
    const { res, reader } = await open(env, { model, input, voice });
    expect(res.status).toBe(200);
    const first = await reader.read();
    const tFirst = Date.now() - t0;
    expect(first.done).toBe(false);
    // The upstream request is still open when the client has audio.
    expect(env.sim.stats(provider).inFlight).toBe(1);
    const parts = [Buffer.from(first.value!)];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(Buffer.from(value));
    }
    const total = Date.now() - t0;
    expect(tFirst).toBeLessThan(400);
    expect(total).toBeGreaterThanOrEqual(700);
    expect(parts.length).toBeGreaterThan(1);
    expect(Buffer.concat(parts).equals(simSpeechAudio({ input, voice, format: 'pcm' }))).toBe(true);
  });

  it('a client that goes away aborts the upstream request, recorded as cancelled', async () => {
    env.sim.setKnobs('sim-tts', { completionTokens: 10, chunkGapMs: 200 });
    const ac = new AbortController();
    const { res, reader } = await open(env, { model: 'test/tts', input, voice: 'alloy' }, ac.signal);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-generation-id')!;
    await reader.read();
    ac.abort();
    await until(() => env.sim.stats('sim-tts').aborted === 1, 3000, 'upstream aborted');
    expect(env.sim.stats('sim-tts').inFlight).toBe(0);
    let g = await generation(env, id);
    await until(async () => (g = await generation(env, id)).status === 499, 3000, 'record');
    // Audio went out: the input's 39 characters are billed at $0.000015 (docs/spend.md, "Cut streams").
    expect(Array.from(input).length).toBe(39);
    expect(g).toMatchObject({ cancelled: true, status: 499, total_cost: 0.000585 });
  });

  it('a client that goes away before the first byte aborts the upstream request too', async () => {
    env.sim.setKnobs('sim-tts', { latencyMs: 5000 });
    // node:http without an agent: the socket is simply destroyed (a pooled fetch may leave a spare connection open).
    const req = httpRequest(new URL(`${env.t.api}/audio/speech`), { method: 'POST', agent: false, headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'test/tts', input, voice: 'alloy' }));
    await until(() => env.sim.stats('sim-tts').inFlight === 1, 3000, 'upstream called');
    req.destroy();
    await until(() => env.sim.stats('sim-tts').aborted === 1, 3000, 'upstream aborted');
    expect(env.sim.stats('sim-tts').inFlight).toBe(0);
  });
});

/**
 * The simulator's text-to-speech endpoints, called directly: deterministic audio, chunked raw bytes, SSE, Gemini's
 * JSON shapes, validation, and the format-forcing header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simAudioTokens, simSpeechAudio, splitAudio } from '../../src/sim/tts.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (r: Response): Promise<any> => r.json();

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator();
});
afterAll(async () => sim.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('simulated speech', () => {
  it('audio is deterministic in (input, voice, format, speed) and sized by the input', () => {
    const a = simSpeechAudio({ input: 'abc', voice: 'v', format: 'pcm' });
    expect(a.equals(simSpeechAudio({ input: 'abc', voice: 'v', format: 'pcm' }))).toBe(true);
    expect(a.length).toBe(3 * 240 * 2);
    expect(a.equals(simSpeechAudio({ input: 'abc', voice: 'w', format: 'pcm' }))).toBe(false);
    expect(simSpeechAudio({ input: 'abc', voice: 'v', format: 'pcm', speed: 2 }).length).toBe(3 * 120 * 2);
    const mp3 = simSpeechAudio({ input: 'abc', voice: 'v', format: 'mp3' });
    expect([...mp3.subarray(0, 3)]).toEqual([0x49, 0x44, 0x33]);
    expect([...mp3.subarray(10, 14)]).toEqual([0xff, 0xfb, 0x90, 0x64]);
    expect(simSpeechAudio({ input: 'abc', voice: 'v', format: 'wav' }).subarray(0, 4).toString()).toBe('RIFF');
    expect(splitAudio(a, 5).every((c) => c.length % 2 === 0)).toBe(true);
    expect(Buffer.concat(splitAudio(a, 5)).equals(a)).toBe(true);
  });

  it('OpenAI: raw bytes with the format Content-Type, in the configured number of chunks', async () => {
    sim.setKnobs('tts', { completionTokens: 4 });
    const res = await post('/tts/v1/audio/speech', { model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'pcm' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    expect(Buffer.from(await res.arrayBuffer()).equals(simSpeechAudio({ input: 'Hello', voice: 'alloy', format: 'pcm' }))).toBe(true);
    const mp3 = await post('/tts/v1/audio/speech', { model: 'tts-1', input: 'Hello', voice: 'alloy' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg'); // OpenAI's default format
    const forced = await post('/tts/v1/audio/speech', { model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'pcm' }, { 'x-sim-tts-format': 'wav' });
    expect(forced.headers.get('content-type')).toBe('audio/wav');
  });

  it('OpenAI: SSE deltas and usage with stream_format sse', async () => {
    const res = await post('/tts/v1/audio/speech', { model: 'gpt-4o-mini-tts', input: 'Hello', voice: 'alloy', response_format: 'pcm', stream_format: 'sse' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.slice(6)));
    const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio, 'base64')));
    expect(audio.equals(simSpeechAudio({ input: 'Hello', voice: 'alloy', format: 'pcm' }))).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: { input_tokens: 2, output_tokens: simAudioTokens('Hello'), total_tokens: 2 + simAudioTokens('Hello') } });
  });

  it('OpenAI: validation errors in its envelope', async () => {
    for (const [body, param] of [
      [{ input: 'x', voice: 'a' }, 'model'],
      [{ model: 'm', voice: 'a' }, 'input'],
      [{ model: 'm', input: 'x' }, 'voice'],
      [{ model: 'm', input: 'x', voice: 'a', response_format: 'ogg' }, 'response_format'],
      [{ model: 'm', input: 'x', voice: 'a', speed: 9 }, 'speed'],
    ] as const) {
      const res = await post('/tts/v1/audio/speech', body);
      expect(res.status, param).toBe(400);
      expect((await json(res)).error.param).toBe(param);
    }
  });

  it('Gemini: SSE chunks of base64 PCM then the finish with usage; JSON answers without alt=sse', async () => {
    const body = { contents: [{ parts: [{ text: 'Hello' }] }], generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Puck' } } } } };
    const expected = simSpeechAudio({ input: 'Hello', voice: 'Puck', format: 'pcm' });
    const res = await post('/g/v1beta/models/gemini-2.5-flash-preview-tts:streamGenerateContent?alt=sse', body);
    const events = (await res.text()).split('\n\n').filter(Boolean).map((e) => JSON.parse(e.slice(6)));
    const parts = events.flatMap((e) => e.candidates[0].content.parts);
    expect(parts[0].inlineData.mimeType).toBe('audio/L16;codec=pcm;rate=24000');
    expect(Buffer.concat(parts.map((p: { inlineData: { data: string } }) => Buffer.from(p.inlineData.data, 'base64'))).equals(expected)).toBe(true);
    expect(events.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(events.at(-1).usageMetadata).toMatchObject({ promptTokenCount: 2, candidatesTokenCount: simAudioTokens('Hello') });
    const whole = await json(await post('/g/v1beta/models/gemini-2.5-flash-preview-tts:generateContent', body));
    expect(Buffer.from(whole.candidates[0].content.parts[0].inlineData.data, 'base64').equals(expected)).toBe(true);
    const arr = await json(await post('/g/v1beta/models/gemini-2.5-flash-preview-tts:streamGenerateContent', body));
    expect(Array.isArray(arr)).toBe(true);
  });

  it('Gemini: TEXT-only modalities are a 400; non-TTS models still reach the chat simulation', async () => {
    const res = await post('/g/v1beta/models/gemini-2.5-flash-preview-tts:generateContent', { contents: [{ parts: [{ text: 'Hi' }] }] });
    expect(res.status).toBe(400);
    expect((await json(res)).error.status).toBe('INVALID_ARGUMENT');
    const chat = await post('/g/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ parts: [{ text: 'Hi' }] }] });
    expect(chat.status).toBe(200);
    expect((await json(chat)).candidates[0].content.parts[0].text).toBeTypeOf('string');
  });
});

/**
 * The speech adapters as pure functions: request mapping (speed, SSE mode, options never overriding), the format
 * guarantee (Content-Type and first-bytes checks), Gemini event decoding (base64 PCM, sample rate, finish, usage,
 * blocked prompts, in-stream errors) and OpenAI SSE decoding.
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../src/core/catalog-types.js';
import { geminiTtsAdapter } from '../../src/providers/gemini-tts/index.js';
import { openaiTtsAdapter } from '../../src/providers/openai-tts/index.js';
import { sniffProblem } from '../../src/providers/speech.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import { optionsFor } from '../../src/services/speech.js';

const provider: ProviderDef = { slug: 'p', name: 'P', protocol: 'openai', baseUrl: 'https://tts.example/v1', dataPolicy: { training: false, retainsPrompts: false, zdr: true } };
const endpoint = (extra: Partial<EndpointDef> = {}): EndpointDef => ({
  model: 'a/tts',
  provider: 'p',
  tag: 'p',
  upstreamModel: 'tts-up',
  pricing: null,
  context_length: 4096,
  max_prompt_tokens: null,
  max_completion_tokens: null,
  quantization: 'unknown',
  supported_parameters: ['speed'],
  is_moderated: false,
  supports_implicit_caching: false,
  speech_protocol: 'openai-tts',
  ...extra,
});
const enc = (s: string) => new TextEncoder().encode(s);
const sse = (...events: unknown[]) => enc(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
const catchErr = (fn: () => unknown): UpstreamError => {
  try {
    fn();
  } catch (e) {
    return e as UpstreamError;
  }
  throw new Error('did not throw');
};

describe('openai-tts adapter', () => {
  it('builds /audio/speech with speed where supported, dropped elsewhere; options fill only unset fields', () => {
    const input = { input: 'Hi', voice: 'alloy', format: 'mp3' as const, speed: 1.5, options: { instructions: 'calm', voice: 'onyx', response_format: 'wav' } };
    const a = openaiTtsAdapter.buildRequest(input, { provider, endpoint: endpoint(), apiKey: 'sk-up' });
    expect(a.req.url.href).toBe('https://tts.example/v1/audio/speech');
    expect(a.req.headers.authorization).toBe('Bearer sk-up');
    expect(JSON.parse(a.req.body)).toEqual({ model: 'tts-up', input: 'Hi', voice: 'alloy', response_format: 'mp3', speed: 1.5, instructions: 'calm' });
    expect(a.dropped).toEqual([]);
    const b = openaiTtsAdapter.buildRequest(input, { provider, endpoint: endpoint({ supported_parameters: [] }), apiKey: null });
    expect(JSON.parse(b.req.body).speed).toBeUndefined();
    expect(b.dropped).toEqual(['speed']);
    expect(b.req.headers.authorization).toBeUndefined();
  });

  it('asks for SSE on stream_format endpoints and decodes deltas, with usage from speech.audio.done', () => {
    const r = openaiTtsAdapter.buildRequest({ input: 'Hi', voice: 'alloy', format: 'pcm', options: {} }, { provider, endpoint: endpoint({ supported_parameters: ['stream_format'] }), apiKey: null });
    expect(JSON.parse(r.req.body).stream_format).toBe('sse');
    const d = openaiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    const pcm = Buffer.from([1, 0, 2, 0, 3, 0, 4, 0, 5, 0]);
    const out = [
      ...d.push(sse({ type: 'speech.audio.delta', audio: pcm.subarray(0, 2).toString('base64') })),
      ...d.push(sse({ type: 'speech.audio.delta', audio: pcm.subarray(2).toString('base64') }, { type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 9, total_tokens: 12 } })),
      ...d.end(),
    ];
    expect(Buffer.concat(out).equals(pcm)).toBe(true);
    expect(d.usage).toEqual({ promptTokens: 3, completionTokens: 9 });
  });

  it('an SSE stream without speech.audio.done is incomplete (502)', () => {
    const d = openaiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    d.push(sse({ type: 'speech.audio.delta', audio: Buffer.from([0, 0, 0, 0]).toString('base64') }));
    expect(catchErr(() => d.end()).status).toBe(502);
  });

  it('refuses another audio type, a non-audio answer, and WAV/MP3 bytes where pcm was asked', () => {
    expect(catchErr(() => openaiTtsAdapter.openStream('pcm', { 'content-type': 'audio/wav' })).message).toMatch(/audio\/wav where pcm/);
    expect(catchErr(() => openaiTtsAdapter.openStream('mp3', { 'content-type': 'audio/pcm' })).status).toBe(502);
    expect(catchErr(() => openaiTtsAdapter.openStream('mp3', { 'content-type': 'application/json' })).message).toMatch(/instead of audio/);
    const d = openaiTtsAdapter.openStream('pcm', { 'content-type': 'application/octet-stream' });
    // "RIFF" split across two chunks is still caught before anything is released.
    expect(d.push(enc('RI'))).toEqual([]);
    expect(catchErr(() => d.push(enc('FF....'))).message).toMatch(/WAV/);
    const m = openaiTtsAdapter.openStream('mp3', { 'content-type': 'audio/mpeg' });
    expect(catchErr(() => m.push(Buffer.from([0, 0, 0, 0, 0]))).message).toMatch(/MP3/);
  });

  it('passes raw audio through unchanged, holding back only until the first 4 bytes are checked', () => {
    const d = openaiTtsAdapter.openStream('mp3', { 'content-type': 'audio/mpeg' });
    expect(d.push(Buffer.from([0xff, 0xfb]))).toEqual([]);
    expect(Buffer.concat(d.push(Buffer.from([0x90, 0x64, 7, 8]))).equals(Buffer.from([0xff, 0xfb, 0x90, 0x64, 7, 8]))).toBe(true);
    expect(Buffer.concat(d.push(Buffer.from([9]))).equals(Buffer.from([9]))).toBe(true);
    expect(d.end()).toEqual([]);
  });

  it('maps errors like chat: 429 with Retry-After, 5xx → 502, 401 → 502', () => {
    const e = openaiTtsAdapter.parseError(429, '{"error":{"message":"slow down"}}', { 'retry-after': '5' });
    expect([e.status, e.retryAfter, e.message]).toEqual([429, 5, 'slow down']);
    expect(openaiTtsAdapter.parseError(503, 'oops', {}).status).toBe(502);
    expect(openaiTtsAdapter.parseError(401, '{}', {}).type).toBe('authentication');
  });
});

describe('gemini-tts adapter', () => {
  const gEndpoint = endpoint({ speech_protocol: 'gemini-tts', upstreamModel: 'gemini-2.5-flash-preview-tts', supported_parameters: [] });
  const gProvider: ProviderDef = { ...provider, protocol: 'google', baseUrl: 'https://generativelanguage.googleapis.com/v1beta' };
  const chunk = (data: Buffer, mimeType = 'audio/L16;codec=pcm;rate=24000', extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType, data: data.toString('base64') } }] }, index: 0, ...extra }],
    responseId: 'r1',
  });

  it('builds streamGenerateContent?alt=sse with AUDIO and the voice; speed is dropped; the key in x-goog-api-key', () => {
    const { req, dropped } = geminiTtsAdapter.buildRequest({ input: 'Hello', voice: 'Kore', format: 'pcm', speed: 2, options: {} }, { provider: gProvider, endpoint: gEndpoint, apiKey: 'g-key' });
    expect(req.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash-preview-tts:streamGenerateContent?alt=sse');
    expect(req.headers['x-goog-api-key']).toBe('g-key');
    expect(JSON.parse(req.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
    });
    expect(dropped).toEqual(['speed']);
    expect(geminiTtsAdapter.formats).toEqual(['pcm']);
  });

  it('decodes base64 PCM event by event, with usage and the finish reason', () => {
    const d = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    const a = Buffer.from([1, 2, 3, 4, 5, 6]);
    const b = Buffer.from([7, 8]);
    const first = d.push(sse(chunk(a)));
    expect(Buffer.concat(first).equals(a)).toBe(true);
    const rest = d.push(sse(chunk(b), { candidates: [{ content: { parts: [] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 30, totalTokenCount: 32 } }));
    expect(Buffer.concat([...rest, ...d.end()]).equals(b)).toBe(true);
    expect(d.usage).toEqual({ promptTokens: 2, completionTokens: 30 });
    expect(d.native).toBe('STOP');
    expect(d.upstreamId).toBe('r1');
  });

  it('refuses PCM at another sample rate and non-PCM audio (no resampling, no transcoding)', () => {
    const d = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    expect(catchErr(() => d.push(sse(chunk(Buffer.alloc(8), 'audio/L16;codec=pcm;rate=16000')))).message).toMatch(/16000 Hz/);
    const w = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    expect(catchErr(() => w.push(sse(chunk(Buffer.alloc(8), 'audio/wav')))).message).toMatch(/audio\/wav where pcm/);
    expect(catchErr(() => geminiTtsAdapter.openStream('mp3', { 'content-type': 'text/event-stream' })).status).toBe(502);
  });

  it('a stream without finishReason, or finished without audio, is a 502; a blocked prompt a 400; in-stream errors mapped', () => {
    const cut = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    cut.push(sse(chunk(Buffer.alloc(8))));
    expect(catchErr(() => cut.end()).message).toMatch(/finishReason/);
    const empty = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    empty.push(sse({ candidates: [{ finishReason: 'OTHER', index: 0 }] }));
    expect(catchErr(() => empty.end()).message).toMatch(/without audio \(finishReason OTHER\)/);
    const blocked = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    expect(catchErr(() => blocked.push(sse({ promptFeedback: { blockReason: 'SAFETY' } }))).status).toBe(400);
    const err = geminiTtsAdapter.openStream('pcm', { 'content-type': 'text/event-stream' });
    expect(catchErr(() => err.push(sse({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }))).status).toBe(529);
  });
});

describe('format sniffing and options', () => {
  it('recognizes MP3 starts (ID3 or frame sync) and refuses container headers for pcm', () => {
    expect(sniffProblem('mp3', Buffer.from('ID3\x04'))).toBeNull();
    expect(sniffProblem('mp3', Buffer.from([0xff, 0xf3, 0, 0]))).toBeNull();
    expect(sniffProblem('mp3', Buffer.from('RIFF'))).not.toBeNull();
    expect(sniffProblem('pcm', Buffer.from([0xff, 0xff, 0xfe, 0xff]))).toBeNull(); // near-silence samples are fine
    for (const magic of ['RIFF', 'OggS', 'fLaC', 'ID3\x04']) expect(sniffProblem('pcm', Buffer.from(magic, 'latin1')), magic).not.toBeNull();
  });

  it('optionsFor: the slug, then the tag (winning); null values unset; everything else dropped', () => {
    const all = { openai: { a: 1, b: 2, gone: null }, 'openai/hd': { b: 3 }, other: { c: 4 }, junk: 'x' };
    expect(optionsFor(all, 'openai', 'openai/hd')).toEqual({ a: 1, b: 3 });
    expect(optionsFor(all, 'openai', 'openai')).toEqual({ a: 1, b: 2 });
    expect(optionsFor(all, 'nobody', 'nobody')).toEqual({});
    expect(optionsFor(undefined, 'openai', 'openai')).toEqual({});
  });
});

/**
 * POST /audio/transcriptions end to end through the simulator: the official `openai` SDK's multipart upload (json and
 * verbose_json), the hosted API's JSON `input_audio`, per-second and per-token prices, the generation record,
 * fallbacks, every error status and bad input.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError, toFile } from 'openai';
import { isolatedEnv, type ClockedEnv } from '../chat/util.js';
import { createInferenceKey } from '../helpers.js';
import { generation } from '../speech/util.js';
import { simTranscript, simTranscriptionUsage } from '../../src/sim/stt.js';
import { transcriptionCost, wavSeconds } from '../../src/services/transcriptions.js';
import { PER_TOKEN, transcriptionCatalog, wav } from './util.js';

describe('POST /audio/transcriptions', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra: transcriptionCatalog });
  let env: ClockedEnv;
  let client: OpenAI;
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  });
  const audio = wav(2);
  const upload = (file: Buffer, filename: string, fields: Record<string, string | string[]>, opts: { key?: string | null; headers?: Record<string, string> } = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) form.append(Array.isArray(v) ? `${k}[]` : k, x);
    form.append('file', new Blob([new Uint8Array(file)], { type: filename.endsWith('.wav') ? 'audio/wav' : 'application/octet-stream' }), filename);
    const key = opts.key === undefined ? env.key : opts.key;
    return fetch(`${env.t.api}/audio/transcriptions`, { method: 'POST', headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers }, body: form }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: (await r.json()) as any,
    }));
  };
  const json = (body: unknown) =>
    fetch(`${env.t.api}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: (await r.json()) as any,
    }));

  describe('the openai SDK', () => {
    it('a WAV upload: the transcript, seconds and the per-second price; the provider asked for verbose_json to state the duration', async () => {
      const { data, response } = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'test/whisper', language: 'en' }).withResponse();
      expect(data.text).toBe(simTranscript(audio, 'whisper-sim'));
      expect((data as unknown as { usage: unknown }).usage).toMatchObject({ seconds: 2, input_tokens: 0, output_tokens: 0, cost: 0.0002, is_byok: false });
      expect(Object.keys(data).sort()).toEqual(['text', 'usage']);
      expect(response.headers.get('x-generation-id')).toMatch(/^gen-/);
      const sent = env.sim.stats('sim-stt').lastBody as Record<string, unknown>;
      expect(sent).toMatchObject({ model: 'whisper-sim', language: 'en', response_format: 'verbose_json' });
      expect((sent.file as { filename: string; data: Buffer }).filename).toBe('hello.wav');
      expect(Buffer.compare((sent.file as { data: Buffer }).data, audio)).toBe(0);
    });

    it('verbose_json with word timestamps: segments, words, duration', async () => {
      const res = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'test/whisper', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
      expect(res).toMatchObject({ task: 'transcribe', duration: 2, text: simTranscript(audio, 'whisper-sim') });
      expect(res.segments!.length).toBeGreaterThan(0);
      expect(res.words!.map((w) => w.word).join(' ')).toBe(res.text.replace(/\.$/, ''));
      expect((env.sim.stats('sim-stt').lastBody as Record<string, unknown>).timestamp_granularities).toEqual(['word', 'segment']);
    });

    it('a token-priced model: audio, prompt and output tokens at their own prices', async () => {
      const prompt = 'Names: Ada, Grace.';
      const res = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'test/transcribe', prompt });
      const expected = simTranscriptionUsage('transcribe-sim', 2, prompt, res.text) as { input_tokens: number; output_tokens: number; input_token_details: { audio_tokens: number; text_tokens: number } };
      const usage = (res as unknown as { usage: Record<string, number> }).usage;
      expect(usage).toMatchObject({ input_tokens: expected.input_tokens, output_tokens: expected.output_tokens, total_tokens: expected.input_tokens + expected.output_tokens });
      // 20 audio tokens × $0.000006 + 5 prompt tokens × $0.0000025 + output × $0.00001, exact.
      const { audio_tokens, text_tokens } = expected.input_token_details;
      expect(audio_tokens).toBe(20);
      expect(usage.cost).toBe(transcriptionCost(PER_TOKEN, { audioTokens: audio_tokens, textTokens: text_tokens, outputTokens: expected.output_tokens, seconds: null, tokens: true }).cost);
      expect(usage.cost).toBeCloseTo(20 * 0.000006 + text_tokens * 0.0000025 + expected.output_tokens * 0.00001, 12);
      // The endpoint does not take response_format: json, the default, is not sent.
      expect((env.sim.stats('sim-stt').lastBody as Record<string, unknown>).response_format).toBeUndefined();
    });

    it('errors surface as APIError with the status', async () => {
      env.sim.setKnobs('sim-stt', { errorStatus: 429, retryAfter: 2 });
      const err = await client.audio.transcriptions.create({ file: await toFile(audio, 'a.wav'), model: 'test/whisper' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(429);
    });
  });

  describe('text formats (text, srt, vtt), rendered by the gateway', () => {
    it('text: the transcript as text/plain through the SDK; the provider is asked for JSON and the answer is billed', async () => {
      const { data, response } = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'test/transcribe', response_format: 'text' }).withResponse();
      expect(data).toBe(`${simTranscript(audio, 'transcribe-sim')}\n`);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      // The endpoint does not take response_format: json, the default, is asked (not sent).
      expect((env.sim.stats('sim-stt').lastBody as Record<string, unknown>).response_format).toBeUndefined();
      const g = await generation(env, response.headers.get('x-generation-id')!);
      expect(g).toMatchObject({ api_type: 'stt', status: 200, total_cost: expect.any(Number) });
      expect(g.total_cost).toBeGreaterThan(0);
    });

    it('srt: numbered SubRip cues from the segments of a verbose_json answer; timestamp_granularities is not sent', async () => {
      const verbose = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'test/whisper', response_format: 'verbose_json' });
      const { data, response } = await client.audio.transcriptions
        .create({ file: await toFile(audio, 'hello.wav'), model: 'test/whisper', response_format: 'srt', timestamp_granularities: ['word'] })
        .withResponse();
      const sent = env.sim.stats('sim-stt').lastBody as Record<string, unknown>;
      expect(sent.response_format).toBe('verbose_json');
      expect(sent.timestamp_granularities).toBeUndefined();
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const srt = data as unknown as string;
      const blocks = srt.trimEnd().split('\n\n');
      expect(blocks).toHaveLength(verbose.segments!.length);
      expect(blocks[0]).toMatch(/^1\n00:00:00,000 --> 00:00:\d\d,\d{3}\n\S/);
      expect(blocks.map((b) => b.split('\n')[2]).join(' ')).toBe(verbose.segments!.map((s) => s.text.trim()).join(' '));
      expect(srt.endsWith('\n\n')).toBe(true);
      const g = await generation(env, response.headers.get('x-generation-id')!);
      expect(g.total_cost).toBe(0.0002); // 2 s at $0.0001
    });

    it('vtt: a WEBVTT document as text/vtt', async () => {
      const r = await fetch(`${env.t.api}/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/whisper', response_format: 'vtt', input_audio: { data: audio.toString('base64'), format: 'wav' } }),
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
      expect(r.headers.get('x-generation-id')).toMatch(/^gen-/);
      const vtt = await r.text();
      expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:\d\d\.\d{3}\n\S/);
    });

    it('srt or vtt on a model whose endpoints answer json only → 404 naming the format, nothing sent; an error stays JSON', async () => {
      const r = await upload(audio, 'a.wav', { model: 'test/transcribe', response_format: 'vtt' });
      expect(r.status).toBe(404);
      expect(r.body.error.message).toBe('No endpoint of test/transcribe can answer response_format "vtt" (subtitles are made from a verbose_json answer)');
      expect(env.sim.stats('sim-stt').requests).toBe(0);
      env.sim.setKnobs('sim-stt', { errorStatus: 500 });
      const e = await upload(audio, 'a.wav', { model: 'test/whisper', response_format: 'text' });
      expect(e.status).toBe(502);
      expect(e.headers.get('content-type')).toMatch(/^application\/json/);
    });
  });

  describe('the JSON form (input_audio)', () => {
    it('base64 or a data URL: the same transcript as the upload', async () => {
      const a = await json({ model: 'test/whisper', input_audio: { data: audio.toString('base64'), format: 'wav' } });
      expect(a.status).toBe(200);
      expect(a.body.text).toBe(simTranscript(audio, 'whisper-sim'));
      const b = await json({ model: 'test/whisper', input_audio: { data: `data:audio/wav;base64,${audio.toString('base64')}`, format: 'wav' } });
      expect(b.body.text).toBe(a.body.text);
      expect((env.sim.stats('sim-stt').lastBody as { file: { filename: string } }).file.filename).toBe('audio.wav');
    });
  });

  describe('cost, records, routing', () => {
    it('the generation record: api_type stt, tokens and cost', async () => {
      const r = await upload(audio, 'a.wav', { model: 'test/transcribe' });
      const g = await generation(env, r.headers.get('x-generation-id')!);
      expect(g).toMatchObject({ api_type: 'stt', model: 'test/transcribe', provider_name: 'sim-stt', status: 200, tokens_prompt: r.body.usage.input_tokens, tokens_completion: r.body.usage.output_tokens, total_cost: r.body.usage.cost });
    });

    it('per second without usage or verbose_json: a WAV header gives the duration; another file leaves the price unknown (null, never $0)', async () => {
      const w = await upload(wav(3), 'a.wav', { model: 'test/whisper-blind' });
      expect(w.body.usage).toMatchObject({ seconds: 3, cost: 0.0003 });
      const m = await upload(Buffer.from('ID3 not really an mp3 but bytes'), 'a.mp3', { model: 'test/whisper-blind' });
      expect(m.status).toBe(200);
      expect(m.body.usage.cost).toBeNull();
      expect(m.body.usage.seconds).toBeUndefined();
    });

    it('verbose_json on a model whose endpoints answer json only → 404, nothing sent', async () => {
      const r = await upload(audio, 'a.wav', { model: 'test/transcribe', response_format: 'verbose_json' });
      expect(r.status).toBe(404);
      expect(r.body.error.message).toBe('No endpoint of test/transcribe can answer response_format "verbose_json"');
      expect(env.sim.stats('sim-stt').requests).toBe(0);
    });

    it('an upstream 5xx falls back to the next endpoint', async () => {
      env.sim.setKnobs('sim-stt', { errorStatus: 503 });
      const r = await upload(audio, 'a.wav', { model: 'test/stt-fallback', provider: JSON.stringify({ order: ['sim-stt', 'sim-stt2'] }) }, { headers: { 'x-gateway-metadata': 'enabled' } });
      expect(r.status).toBe(200);
      expect(r.body.text).toBe(simTranscript(audio, 'whisper-b'));
      expect(r.body.gateway_metadata.attempts.map((a: { status: number }) => a.status)).toEqual([502, 200]);
      expect(r.body.usage.cost).toBe(0.0004);
    });

    it('provider.options of the provider that serves go as extra form fields; others are dropped', async () => {
      const options = { 'sim-stt': { chunking_strategy: 'auto', include: ['logprobs'], model: 'not-replaced' }, 'sim-other': { secret: 'x' } };
      const r = await upload(audio, 'a.wav', { model: 'test/whisper', provider: JSON.stringify({ options }) });
      expect(r.status).toBe(200);
      const sent = env.sim.stats('sim-stt').lastBody as Record<string, unknown>;
      expect(sent).toMatchObject({ model: 'whisper-sim', chunking_strategy: 'auto', include: ['logprobs'] });
      expect(sent.secret).toBeUndefined();
    });

    it('dropped parameters are named', async () => {
      const r = await upload(audio, 'a.wav', { model: 'test/whisper-blind', temperature: '0.2', language: 'fr' }, { headers: { 'x-gateway-metadata': 'enabled' } });
      expect(r.body.gateway_metadata.dropped_parameters).toEqual(['temperature']);
      expect(env.sim.stats('sim-stt-nousage').lastBody).toMatchObject({ language: 'fr' });
    });

    it('a key whose limit is spent → 402', async () => {
      const { key } = await createInferenceKey(env.t, { name: 'stt-limited', limit: 0.0001 });
      expect((await upload(audio, 'a.wav', { model: 'test/whisper' }, { key })).status).toBe(200); // $0.0002
      const r = await upload(audio, 'a.wav', { model: 'test/whisper' }, { key });
      expect(r.status).toBe(402);
    });
  });

  describe('error statuses', () => {
    it.each([
      [500, 502],
      [529, 529],
    ])('upstream %i → %i', async (upstream, status) => {
      env.sim.setKnobs('sim-stt', { errorStatus: upstream });
      const r = await upload(audio, 'a.wav', { model: 'test/whisper' });
      expect(r.status).toBe(status);
      expect(r.body.error.code).toBe(status);
    });

    it('upstream 429 → 429 with Retry-After', async () => {
      env.sim.setKnobs('sim-stt', { errorStatus: 429, retryAfter: 9 });
      const r = await upload(audio, 'a.wav', { model: 'test/whisper' });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('9');
    });

    it('no answer within the first-byte timeout → 524', async () => {
      env.sim.setKnobs('sim-stt-slow', { hang: true });
      const r = await upload(audio, 'a.wav', { model: 'test/stt-slow' });
      expect(r.status).toBe(524);
    });

    it('unknown model → 404; a chat model → 400; a transcription model on the chat API → 400', async () => {
      expect((await upload(audio, 'a.wav', { model: 'test/nope' })).status).toBe(404);
      const chatModel = await upload(audio, 'a.wav', { model: 'test/alpha' });
      expect(chatModel.status).toBe(400);
      expect(chatModel.body.error.metadata.field).toBe('model');
      const c = await env.t.call('POST', '/chat/completions', { body: { model: 'test/whisper', messages: [{ role: 'user', content: 'hi' }] }, key: env.key });
      expect(c.status).toBe(400);
      expect(c.body.error.message).toBe('test/whisper is a transcription model: use POST /audio/transcriptions');
    });

    it("the key's guardrail applies: a blocked provider's model is a 403", async () => {
      const { key, hash } = await createInferenceKey(env.t, { name: 'stt-guarded' });
      const g = await env.t.call('POST', '/guardrails', { body: { name: 'only stt2', allowed_providers: ['sim-stt2'] } });
      expect((await env.t.call('POST', `/guardrails/${g.body.data.id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
      const ok = await upload(audio, 'a.wav', { model: 'test/stt-fallback', provider: JSON.stringify({ order: ['sim-stt'] }) }, { key });
      expect(ok.status).toBe(200);
      expect(ok.body.text).toBe(simTranscript(audio, 'whisper-b'));
      const blocked = await upload(audio, 'a.wav', { model: 'test/whisper' }, { key });
      expect(blocked.status).toBe(403);
      expect(env.sim.stats('sim-stt').requests).toBe(0);
    });

    it('no key → 401', async () => {
      expect((await upload(audio, 'a.wav', { model: 'test/whisper' }, { key: null })).status).toBe(401);
    });
  });

  describe('validation (400 naming the field, nothing sent)', () => {
    it.each([
      ['no file', null, 'a.wav', { model: 'test/whisper' }, 'file'],
      ['no model', audio, 'a.wav', {}, 'model'],
      ['a text file', Buffer.from('hello'), 'notes.txt', { model: 'test/whisper' }, 'file'],
      ['an empty file', Buffer.alloc(0), 'a.wav', { model: 'test/whisper' }, 'file'],
      ['temperature 2', audio, 'a.wav', { model: 'test/whisper', temperature: '2' }, 'temperature'],
      ['response_format diarized_json', audio, 'a.wav', { model: 'test/whisper', response_format: 'diarized_json' }, 'response_format'],
      ['a bad language', audio, 'a.wav', { model: 'test/whisper', language: 'english!' }, 'language'],
      ['a provider field that is not preferences', audio, 'a.wav', { model: 'test/whisper', provider: '{"sort":"fastest"}' }, 'provider'],
    ] as const)('%s → 400', async (_label, file, name, fields, field) => {
      let r;
      if (file === null) {
        const form = new FormData();
        for (const [k, v] of Object.entries(fields)) form.append(k, v);
        r = await fetch(`${env.t.api}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` }, body: form }).then(async (x) => ({ status: x.status, body: (await x.json()) as { error: { message: string } } }));
      } else r = await upload(file, name, fields as Record<string, string>);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain(field);
      expect(env.sim.stats('sim-stt').requests).toBe(0);
    });

    it.each([
      ['no input_audio', { model: 'test/whisper' }, 'input_audio'],
      ['an unknown format', { model: 'test/whisper', input_audio: { data: 'AAAA', format: 'aiff' } }, 'format'],
      ['not base64', { model: 'test/whisper', input_audio: { data: '***', format: 'wav' } }, 'input_audio.data'],
    ])('JSON: %s → 400', async (_label, body, field) => {
      const r = await json(body);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain(field);
    });

    it('a file over 25 MiB → 413', async () => {
      const r = await upload(Buffer.alloc(25 * 1024 * 1024 + 10), 'big.wav', { model: 'test/whisper' });
      expect(r.status).toBe(413);
      expect(env.sim.stats('sim-stt').requests).toBe(0);
    });

    it('wavSeconds reads a WAV header; other bytes give null', () => {
      expect(wavSeconds(wav(1.5))).toBe(1.5);
      expect(wavSeconds(Buffer.from('not a wav file at all, no RIFF header here....'))).toBeNull();
    });
  });

  it('the OpenAPI document has the operation with both request forms', async () => {
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    const op = doc.body.paths['/audio/transcriptions'].post;
    expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/plain', 'text/vtt']);
    expect(op.responses['200'].content['application/json'].schema.properties.usage).toBeTruthy();
    expect(op.requestBody.content['multipart/form-data'].schema.properties.response_format.enum).toEqual(['json', 'verbose_json', 'text', 'srt', 'vtt']);
  });
});

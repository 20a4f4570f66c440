/**
 * Issue 16 item 3: upstream-shaped hostility. For every upstream protocol the gateway speaks — OpenAI chat, Anthropic
 * Messages, Gemini, OpenAI Responses (through POST /chat/completions, plain and streamed), embeddings, rerank (jina,
 * cohere, voyage), transcriptions, speech (OpenAI raw audio and SSE, Gemini) — the simulator answers badly: an error
 * status, a body cut mid-JSON, no body, every value of the wrong JSON type, an HTML page, a reply larger than
 * GATEWAY_UPSTREAM_MAX_BYTES, the connection cut before or after the first content, no answer at all, a stall past
 * the idle timeout (src/sim/corrupt.ts and the knobs in src/sim/knobs.ts).
 *
 * Each case runs twice, on models of their own (an endpoint that failed is routed last for a while):
 * - alone: the client gets the documented status (docs/chat.md "Fallbacks and errors": 429, 529, 502, 524) in the
 *   API's error envelope — or, once a stream has sent content, a 200 whose stream ends with the error event;
 * - with a healthy fallback endpoint (ten times dearer, so always second): the client gets a 200 served by it, and
 *   the hostile endpoint was tried first — unless content had already been streamed (then there is no going back).
 * Video submissions (asynchronous) have their own table below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { wav } from '../transcriptions/util.js';
import { startVideoEnv, videoCatalog, waitForJob, type VideoEnv } from '../videos/util.js';
import type { KnobPatch } from '../../src/sim/knobs.js';

const MAX_BYTES = 1024 * 1024;
const TIMEOUTS = { first_byte_ms: 600, idle_ms: 600, total_ms: 10_000 };
const zdr = { training: false, retains_prompts: false, zdr: true };

type Mode = 'plain' | 'stream';
interface Reply {
  status: number;
  /** The error message of a JSON error answer, or of the stream's error event. */
  error: string | null;
  /** A 200 whose stream ended with an error (an error event, or the connection cut). */
  streamFailed: boolean;
  text: string;
}

interface Shape {
  name: string;
  protocol: 'openai' | 'anthropic' | 'google' | 'openai-responses';
  version: string;
  modes: Mode[];
  model: Record<string, unknown>;
  endpoint: Record<string, unknown>;
  /** Prices of the hostile endpoint; the fallback's are ten times these. */
  price: Record<string, string>;
  call(env: ChatEnv, model: string, mode: Mode): Promise<Reply>;
}

const auth = (env: ChatEnv) => ({ authorization: `Bearer ${env.key}` });

async function jsonCall(env: ChatEnv, path: string, body: unknown): Promise<Reply> {
  const res = await fetch(`${env.t.api}${path}`, { method: 'POST', headers: { ...auth(env), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, error: errorOf(res.status, text), streamFailed: false, text };
}

function errorOf(status: number, text: string): string | null {
  if (status === 200) return null;
  const body = JSON.parse(text) as { error?: { code?: number; message?: string } };
  expect(body.error?.code, `an error envelope: ${text.slice(0, 300)}`).toBe(status);
  return body.error?.message ?? '';
}

/** A chat stream read to its end: a cut connection or a final error chunk is a failed stream. */
async function chatCall(env: ChatEnv, model: string, mode: Mode): Promise<Reply> {
  const stream = mode === 'stream';
  const res = await fetch(`${env.t.api}/chat/completions`, {
    method: 'POST',
    headers: { ...auth(env), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say something' }], stream }),
  });
  let text = '';
  let cut = false;
  try {
    text = await res.text();
  } catch {
    cut = true;
  }
  if (!stream || res.status !== 200) return { status: res.status, error: errorOf(res.status, text), streamFailed: false, text };
  const errorEvent = /"finish_reason":"error"/.test(text) ? (/"message":"([^"]*)"/.exec(text)?.[1] ?? '') : null;
  return { status: 200, error: errorEvent, streamFailed: cut || errorEvent !== null || !text.includes('data: [DONE]'), text };
}

async function speechCall(env: ChatEnv, model: string, format: string): Promise<Reply> {
  const res = await fetch(`${env.t.api}/audio/speech`, {
    method: 'POST',
    headers: { ...auth(env), 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: 'Hello there, how are you today?', voice: 'alloy', response_format: format }),
  });
  if (res.status !== 200) {
    const text = await res.text();
    return { status: res.status, error: errorOf(res.status, text), streamFailed: false, text };
  }
  try {
    await res.arrayBuffer();
    return { status: 200, error: null, streamFailed: false, text: '' };
  } catch {
    return { status: 200, error: null, streamFailed: true, text: '' };
  }
}

const chatShape = (name: string, protocol: Shape['protocol'], version: string): Shape => ({
  name,
  protocol,
  version,
  modes: ['plain', 'stream'],
  model: { context_length: 32000 },
  endpoint: { supported_parameters: ['max_tokens', 'temperature'] },
  price: { prompt: '0.000001', completion: '0.000002' },
  call: chatCall,
});

const rerankShape = (name: string, protocol: string, version: string): Shape => ({
  name,
  protocol: 'openai',
  version,
  modes: ['plain'],
  model: { context_length: 8192, input_modalities: ['text'], output_modalities: ['rerank'] },
  endpoint: { rerank_protocol: protocol },
  price: { prompt: '0.0000001', completion: '0', search_unit: '0.002' },
  call: (env, model) => jsonCall(env, '/rerank', { model, query: 'which one', documents: ['alpha', 'beta', 'gamma'] }),
});

const ttsModel = { context_length: 4096, input_modalities: ['text'], output_modalities: ['audio'] };

const CHAT_SHAPES = [chatShape('openai chat', 'openai', 'v1'), chatShape('anthropic', 'anthropic', 'v1'), chatShape('google', 'google', 'v1beta'), chatShape('openai responses', 'openai-responses', 'v1')];
const CHAT = new Set<Shape>(CHAT_SHAPES);

const SHAPES: Shape[] = [
  ...CHAT_SHAPES,
  {
    name: 'embeddings',
    protocol: 'openai',
    version: 'v1',
    modes: ['plain'],
    model: { context_length: 8192, input_modalities: ['text'], output_modalities: ['embeddings'] },
    endpoint: {},
    price: { prompt: '0.0000001', completion: '0' },
    call: (env, model) => jsonCall(env, '/embeddings', { model, input: ['one', 'two'] }),
  },
  rerankShape('rerank jina', 'jina', 'v1'),
  rerankShape('rerank cohere', 'cohere', 'v2'),
  rerankShape('rerank voyage', 'voyage', 'voyage/v1'),
  {
    name: 'transcriptions',
    protocol: 'openai',
    version: 'v1',
    modes: ['plain'],
    model: { context_length: 0, input_modalities: ['audio'], output_modalities: ['transcription'] },
    endpoint: { supported_parameters: ['language'] },
    price: { prompt: '0.000001', completion: '0.000001', audio_second: '0.0001' },
    async call(env, model) {
      const form = new FormData();
      form.append('model', model);
      form.append('file', new Blob([new Uint8Array(wav(1))], { type: 'audio/wav' }), 'a.wav');
      const res = await fetch(`${env.t.api}/audio/transcriptions`, { method: 'POST', headers: auth(env), body: form });
      const text = await res.text();
      return { status: res.status, error: errorOf(res.status, text), streamFailed: false, text };
    },
  },
  {
    name: 'speech openai (raw mp3)',
    protocol: 'openai',
    version: 'v1',
    modes: ['stream'],
    model: ttsModel,
    endpoint: { speech_protocol: 'openai-tts' },
    price: { characters: '0.000015' },
    call: (env, model) => speechCall(env, model, 'mp3'),
  },
  {
    name: 'speech openai (SSE)',
    protocol: 'openai',
    version: 'v1',
    modes: ['stream'],
    model: ttsModel,
    endpoint: { speech_protocol: 'openai-tts', supported_parameters: ['stream_format'] },
    price: { prompt: '0.0000005', completion: '0.00001' },
    call: (env, model) => speechCall(env, model, 'pcm'),
  },
  {
    name: 'speech gemini',
    protocol: 'google',
    version: 'v1beta',
    modes: ['stream'],
    model: ttsModel,
    endpoint: { speech_protocol: 'gemini-tts' },
    price: { prompt: '0.0000005', completion: '0.00001' },
    call: (env, model) => speechCall(env, model, 'pcm'),
  },
];

interface Case {
  name: string;
  knobs: KnobPatch;
  /** The status alone (a number), or a 200 whose stream failed after content ('stream-failed'), or a full 200 ('ok'). */
  expect: number | 'stream-failed' | 'ok';
  message?: RegExp;
}

const ERRORS: Case[] = [
  { name: 'rate limited (429)', knobs: { errorStatus: 429, retryAfter: 7 }, expect: 429 },
  { name: 'overloaded (529)', knobs: { errorStatus: 529 }, expect: 529 },
  { name: 'server error (500)', knobs: { errorStatus: 500 }, expect: 502 },
  { name: 'gateway timeout (504)', knobs: { errorStatus: 504 }, expect: 524 },
  { name: 'body cut mid-JSON', knobs: { malformed: 'json' }, expect: 502 },
  { name: 'empty body', knobs: { malformed: 'empty' }, expect: 502 },
  { name: 'wrong JSON types', knobs: { malformed: 'types' }, expect: 502, message: / must be .*\(got / },
  { name: 'garbage (an HTML page)', knobs: { malformed: 'garbage' }, expect: 502 },
  { name: 'huge reply', knobs: { malformed: 'huge', hugeBytes: 2 * MAX_BYTES }, expect: 502, message: /larger than/ },
  { name: 'connection cut before any content', knobs: { disconnectAfterChunks: 0 }, expect: 502 },
  { name: 'no answer (past the first-byte timeout)', knobs: { hang: true }, expect: 524, message: /first-byte timeout/ },
  { name: 'slow first token (past the timeouts)', knobs: { ttftMs: 1500 }, expect: 524 },
];

/** Failures after the first content: a plain answer is still a clean error; a stream has committed its 200. */
const LATE: Case[] = [
  { name: 'connection cut mid-answer', knobs: { disconnectAfterChunks: 3 }, expect: 502 },
  { name: 'stall mid-answer past the idle timeout', knobs: { chunkGapMs: 1500, completionTokens: 4 }, expect: 524 },
];

/** What a case answers for a shape and mode, where the protocol or the mode makes it differ from `c.expect`. */
function expected(s: Shape, mode: Mode, c: Case): { status: number | 'stream-failed' | 'ok'; message?: RegExp } | null {
  const late = LATE.includes(c);
  // A one-piece answer (embeddings, rerank, transcriptions) has no middle to stall in: "slow first token" covers it.
  if (late && c.knobs.chunkGapMs !== undefined && !s.name.startsWith('speech') && !CHAT.has(s)) return null;
  if (s.name.startsWith('speech')) {
    // Raw audio is relayed as it comes: appended bytes are more audio, and after the first bytes a failure can only
    // cut the connection. An HTML page under an audio type is refused when MP3 was asked (pcm has no header to check).
    if (s.name.includes('raw') && c.knobs.malformed === 'huge') return { status: 'ok' };
    if (late) return { status: 'stream-failed' };
    if (s.name.includes('raw') && c.knobs.malformed) return { status: 502, message: /does not start like MP3|no bytes|audio/ };
  }
  if (mode === 'stream' && late) return { status: 'stream-failed' };
  // Plain replies of the simulator are written at once, after the whole generation time: a stall is a first-byte timeout.
  if (late && c.knobs.chunkGapMs !== undefined) return { status: 524 };
  return { status: c.expect, message: c.message };
}

// ---------------------------------------------------------------------------------------------------- environment

const slug = (s: Shape) => s.name.replace(/[^a-z0-9]+/g, '-');
const key = (s: Shape, mode: Mode, c: Case, fb: boolean) => `${slug(s)}-${mode}-${[...ERRORS, ...LATE].indexOf(c)}-${fb ? 'fb' : 'solo'}`;
const ALL_CASES = [...ERRORS, ...LATE];

/** The simulator serves Gemini speech for model ids containing `tts` (and chat for the others). */
const upstreamModel = (s: Shape, what: string) => (s.name.startsWith('speech') ? `${what}-tts-sim` : `${what}-sim`);

function catalog(simUrl: string) {
  const providers: object[] = [];
  const models: object[] = [];
  const endpoints: object[] = [];
  const provider = (name: string, s: Shape, timeouts?: object) => providers.push({ slug: name, name, protocol: s.protocol, base_url: `${simUrl}/${name}/${s.version}`, no_auth: true, data_policy: zdr, ...(timeouts ? { timeouts } : {}) });
  const dearer = (p: Record<string, string>) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, String(Number(v) * 10)]));
  for (const s of SHAPES) {
    provider(`good-${slug(s)}`, s);
    for (const mode of s.modes) {
      for (const c of ALL_CASES) {
        for (const fb of [false, true]) {
          const k = key(s, mode, c, fb);
          provider(`bad-${k}`, s, TIMEOUTS);
          models.push({ id: `h/${k}`, name: k, ...s.model });
          endpoints.push({ model: `h/${k}`, provider: `bad-${k}`, upstream_model: upstreamModel(s, 'hostile'), pricing: s.price, ...s.endpoint });
          if (fb) endpoints.push({ model: `h/${k}`, provider: `good-${slug(s)}`, upstream_model: upstreamModel(s, 'healthy'), pricing: dearer(s.price), ...s.endpoint });
        }
      }
    }
  }
  // Copies, not shared objects: YAML would write shared ones as aliases (and refuse that many when reading).
  return JSON.parse(JSON.stringify({ providers, models, endpoints })) as { providers: object[]; models: object[]; endpoints: object[] };
}

let env: ChatEnv;

beforeAll(async () => {
  env = await startChatEnv('sqlite', { env: { GATEWAY_UPSTREAM_MAX_BYTES: String(MAX_BYTES) }, catalog: catalog });
  for (const s of SHAPES) for (const mode of s.modes) for (const c of ALL_CASES) for (const fb of [false, true]) env.sim.setKnobs(`bad-${key(s, mode, c, fb)}`, c.knobs);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

// ---------------------------------------------------------------------------------------------------------- tables

for (const s of SHAPES) {
  describe(`${s.name} upstream`, () => {
    for (const mode of s.modes) {
      for (const c of ALL_CASES) {
        const want = expected(s, mode, c);
        if (!want) continue;
        it.concurrent(`${mode}: ${c.name} → ${want.status === 'ok' ? '200' : want.status === 'stream-failed' ? '200, then the stream fails' : want.status}, and with a fallback → 200 from it`, async () => {
          const solo = await s.call(env, `h/${key(s, mode, c, false)}`, mode);
          const what = `${s.name} ${mode} ${c.name}: ${solo.status} ${solo.error ?? ''} ${solo.text.slice(0, 200)}`;
          if (want.status === 'ok') expect(solo.status, what).toBe(200);
          else if (want.status === 'stream-failed') {
            expect(solo.status, what).toBe(200);
            expect(solo.streamFailed, what).toBe(true);
          } else {
            expect(solo.status, what).toBe(want.status);
            if (want.message) expect(solo.error, what).toMatch(want.message);
          }
          if (want.status === 429) expect(solo.status).toBe(429);

          const fbKey = key(s, mode, c, true);
          const withFallback = await s.call(env, `h/${fbKey}`, mode);
          const fbWhat = `${s.name} ${mode} ${c.name} with a fallback: ${withFallback.status} ${withFallback.error ?? ''} ${withFallback.text.slice(0, 200)}`;
          expect(withFallback.status, fbWhat).toBe(200);
          expect(env.sim.stats(`bad-${fbKey}`).requests, fbWhat).toBe(1);
          if (want.status === 'stream-failed') expect(withFallback.streamFailed, fbWhat).toBe(true);
          else if (want.status !== 'ok') expect(withFallback.streamFailed, fbWhat).toBe(false);
        });
      }
    }
  });
}

// ------------------------------------------------------------------------------------------------ video submissions

describe('video submissions', () => {
  const VIDEO_CASES: Array<{ name: string; knobs: KnobPatch; status: number; message: RegExp }> = [
    { name: 'body cut mid-JSON', knobs: { malformed: 'json' }, status: 502, message: /invalid response \(not JSON\)/ },
    { name: 'empty body', knobs: { malformed: 'empty' }, status: 502, message: /not JSON/ },
    { name: 'wrong JSON types', knobs: { malformed: 'types' }, status: 502, message: /invalid video object: id must be a string \(got \d+\)/ },
    { name: 'garbage (an HTML page)', knobs: { malformed: 'garbage' }, status: 502, message: /not JSON/ },
    { name: 'huge reply', knobs: { malformed: 'huge', hugeBytes: 5 * MAX_BYTES }, status: 502, message: /larger than/ },
    { name: 'overloaded (529)', knobs: { errorStatus: 529 }, status: 529, message: /./ },
    { name: 'no answer (past the first-byte timeout)', knobs: { hang: true }, status: 524, message: /first-byte timeout/ },
  ];
  // One model per case: its hostile endpoint first (cheaper), the healthy sim-ov2 second.
  const catalog = (simUrl: string) => {
    const base = videoCatalog(simUrl) as { providers: Array<Record<string, unknown>>; models: object[]; endpoints: Array<Record<string, unknown>> };
    const template = base.endpoints.find((e) => e.model === 'test/sora-fallback' && e.provider === 'sim-ov')!;
    VIDEO_CASES.forEach((_c, i) => {
      base.providers.push({ ...base.providers.find((p) => p.slug === 'sim-ov')!, slug: `ov-bad-${i}`, name: `ov-bad-${i}`, base_url: `${simUrl}/ov-bad-${i}/v1`, timeouts: TIMEOUTS });
      base.models.push({ id: `h/video-${i}`, name: `h/video-${i}`, input_modalities: ['text'], output_modalities: ['video'] });
      base.endpoints.push({ ...template, model: `h/video-${i}`, provider: `ov-bad-${i}` }, { ...template, model: `h/video-${i}`, provider: 'sim-ov2', pricing: { video_second: '0.20' } });
    });
    return JSON.parse(JSON.stringify(base)) as unknown;
  };
  let venv: VideoEnv;
  beforeAll(async () => {
    venv = await startVideoEnv('sqlite', { env: { GATEWAY_UPSTREAM_MAX_BYTES: String(MAX_BYTES) }, catalog });
  }, 60_000);
  afterAll(async () => {
    await venv?.close();
  });

  VIDEO_CASES.forEach((c, i) => {
    it(`openai-video: ${c.name} → the job falls back to the next endpoint, the attempt recorded with its reason`, async () => {
      venv.sim.setKnobs(`ov-bad-${i}`, c.knobs);
      const res = await venv.call('POST', '/videos', { body: { model: `h/video-${i}`, prompt: `hostile ${c.name}`, provider: { sort: 'price' } } });
      expect(res.status).toBe(202);
      const { job } = await waitForJob(venv.t, venv.key, res.body.id);
      expect(job.status).toBe('completed');
      const gen = await venv.call('GET', `/generation?id=${job.generation_id}`);
      const attempts = gen.body.data.provider_responses as Array<{ provider: string; status: number; message?: string }>;
      expect(attempts.map((a) => a.provider)).toEqual([`ov-bad-${i}`, 'sim-ov2']);
      expect(attempts[0].status).toBe(c.status);
      expect(attempts[0].message ?? '').toMatch(c.message);
    });
  });

  it('google-veo: wrong JSON types in the submission → the job fails with a message naming the field', async () => {
    venv.sim.setKnobs('sim-veo', { malformed: 'types' });
    const res = await venv.call('POST', '/videos', { body: { model: 'test/veo', prompt: 'hostile veo' } });
    const { job } = await waitForJob(venv.t, venv.key, res.body.id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/invalid operation: name must be a string \(got \d+\)/);
  });
});

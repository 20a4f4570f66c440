/**
 * Speech test harness: simulated TTS providers added to the chat test catalog, and raw calls to POST /audio/speech.
 *
 * Providers (all on one simulator, each its own knobs): `sim-tts` and `sim-tts2` (OpenAI speech API, raw bytes),
 * `sim-mp3` (OpenAI speech API, declared mp3-only), `sim-tts-sse` (OpenAI speech API asked for SSE, token-priced),
 * `sim-gtts` (Gemini speech, pcm only), `sim-wav` (answers WAV whatever is asked: a provider ignoring the format),
 * `sim-tts-slow` (short timeouts), `sim-keyed` (needs a key nobody configured).
 */
import type { ChatEnv } from '../chat-helpers.js';

/** USD per character of `test/tts` on sim-tts. */
export const CHAR_PRICE = '0.000015';
/** Token prices of the token-priced speech endpoints (sim-gtts, sim-tts-sse). */
export const TOKEN_PRICES = { prompt: '0.0000005', completion: '0.00001' };

export function speechCatalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const provider = (slug: string, name: string, protocol = 'openai', version = 'v1', extra: Record<string, unknown> = {}) => ({
    slug,
    name,
    protocol,
    base_url: `${simUrl}/${slug}/${version}`,
    no_auth: true,
    data_policy: zdr,
    ...extra,
  });
  const model = (id: string) => ({ id, name: id, context_length: 4096, input_modalities: ['text'], output_modalities: ['audio'] });
  const tts = (model: string, provider: string, extra: Record<string, unknown> = {}) => ({
    model,
    provider,
    upstream_model: `${model.slice(5)}-${provider}`,
    speech_protocol: 'openai-tts',
    pricing: { characters: CHAR_PRICE },
    ...extra,
  });
  return {
    providers: [
      provider('sim-tts', 'Sim TTS'),
      provider('sim-tts2', 'Sim TTS 2'),
      provider('sim-mp3', 'Sim MP3'),
      provider('sim-tts-sse', 'Sim TTS SSE'),
      provider('sim-gtts', 'Sim Gemini TTS', 'google', 'v1beta'),
      provider('sim-wav', 'Sim WAV', 'openai', 'v1', { headers: { 'x-sim-tts-format': 'wav' } }),
      provider('sim-tts-slow', 'Sim TTS Slow', 'openai', 'v1', { timeouts: { first_byte_ms: 300, idle_ms: 300 } }),
      { ...provider('sim-keyed', 'Sim Keyed'), no_auth: false, api_key_env: 'SIM_KEYED_API_KEY_UNSET' },
    ],
    models: ['test/tts', 'test/tts-fallback', 'test/tts-mp3only', 'test/tts-gemini', 'test/tts-sse', 'test/tts-slow', 'test/tts-nokey', 'test/tts-wav'].map(model),
    endpoints: [
      tts('test/tts', 'sim-tts'),
      tts('test/tts-fallback', 'sim-tts'),
      tts('test/tts-fallback', 'sim-tts2', { pricing: { characters: '0.00003' } }),
      tts('test/tts-mp3only', 'sim-mp3', { audio_formats: ['mp3'] }),
      tts('test/tts-mp3only', 'sim-tts2', { pricing: { characters: '0.00003' } }),
      { model: 'test/tts-gemini', provider: 'sim-gtts', upstream_model: 'gemini-sim-tts', speech_protocol: 'gemini-tts', pricing: TOKEN_PRICES },
      tts('test/tts-sse', 'sim-tts-sse', { pricing: TOKEN_PRICES, supported_parameters: ['speed', 'stream_format'] }),
      tts('test/tts-slow', 'sim-tts-slow'),
      tts('test/tts-nokey', 'sim-keyed'),
      tts('test/tts-wav', 'sim-wav'),
      tts('test/tts-wav', 'sim-tts2', { pricing: { characters: '0.00003' } }),
    ],
  };
}

export interface SpeechReply {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The parsed JSON body of an error answer. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** POST /audio/speech with the env's inference key (or `key`); reads the whole answer. */
export async function speech(env: ChatEnv, body: Record<string, unknown>, opts: { key?: string | null; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<SpeechReply> {
  const key = opts.key === undefined ? env.key : opts.key;
  const res = await fetch(`${env.t.api}/audio/speech`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers },
    body: JSON.stringify(body),
    signal: opts.signal,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = null;
  if (res.headers.get('content-type')?.startsWith('application/json')) parsed = JSON.parse(bytes.toString());
  return { status: res.status, headers: res.headers, bytes, body: parsed };
}

/** The request bodies a simulated provider received, oldest first. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const received = (env: ChatEnv, provider: string): any[] => env.sim.requests.filter((r) => r.provider === provider).map((r) => r.body);

/** A generation record, once the gateway has it (GET /generation, with the management key). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function generation(env: ChatEnv, id: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const r = await env.t.call('GET', `/generation?id=${encodeURIComponent(id)}`);
    if (r.status === 200) return r.body.data;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`generation ${id} not found`);
}

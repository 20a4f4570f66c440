/**
 * OpenAI speech API, `POST {baseUrl}/audio/speech` (OpenAI and OpenAI-compatible TTS servers).
 *
 * Request: `{model, input, voice, response_format}` plus `speed` when the endpoint lists `speed` in
 * `supported_parameters` (dropped otherwise), then the provider options (e.g. `instructions`) for fields not set.
 *
 * Answer, two shapes:
 * - raw (default): the body is the audio in `response_format` (pcm = 24 kHz 16-bit little-endian mono, no header),
 *   relayed as it arrives. Such an answer reports no usage: these endpoints are priced per character.
 * - SSE, when the endpoint lists `stream_format` in `supported_parameters` (gpt-4o-mini-tts): the gateway asks for
 *   `stream_format: "sse"`; `speech.audio.delta` events carry base64 audio (decoded and relayed event by event) and
 *   `speech.audio.done` reports `usage` (`input_tokens` text, `output_tokens` audio), billed at the token prices.
 *   A stream without `speech.audio.done` is incomplete (502).
 * Errors: OpenAI's envelope, mapped like chat (429 + Retry-After, 5xx → 502, 401/403 → 502, 400 → 400, 529).
 */
import type { AudioFormat } from '../../core/catalog-types.js';
import type { TokenUsage } from '../../core/pricing.js';
import { openaiError, streamError } from '../openai/chat.js';
import { Type } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';
import { AudioGate, decodeBase64, fillFrom, invalidAudio, isObj, rawAudioDecoder, sseJsonEvents, type AudioDecoder, type Headers, type SpeechAdapter } from '../speech.js';

function isSse(headers: Headers): boolean {
  const v = headers['content-type'];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.toLowerCase().startsWith('text/event-stream');
}

/** A speech SSE event as the decoder reads it (unknown fields and event types pass). */
const checkSpeechEvent = wireCheck(
  Type.Object({ type: Opt(Type.String()), audio: Opt(Type.String()), usage: Opt(Type.Object({ input_tokens: Count, output_tokens: Count })) }),
  'stream event',
);

function sseDecoder(format: AudioFormat): AudioDecoder {
  const gate = new AudioGate(format);
  let done = false;
  const d = {
    usage: null as TokenUsage | null,
    upstreamId: null as string | null,
    native: null as string | null,
    push(chunk: Uint8Array): Buffer[] {
      return events.push(chunk);
    },
    end(): Buffer[] {
      if (!done) throw invalidAudio('Provider stream ended before speech.audio.done');
      return gate.flush();
    },
  };
  const events = sseJsonEvents((json) => {
    if (done || !isObj(json)) return [];
    if (isObj(json.error)) throw streamError(json as { error?: { message?: string } });
    checkSpeechEvent(json);
    if (json.type === 'speech.audio.delta') return gate.pass(decodeBase64(json.audio));
    if (json.type === 'speech.audio.done') {
      done = true;
      d.native = 'done';
      const u = isObj(json.usage) ? json.usage : null;
      if (u && typeof u.input_tokens === 'number') d.usage = { promptTokens: u.input_tokens, completionTokens: typeof u.output_tokens === 'number' ? u.output_tokens : 0 };
    }
    return [];
  });
  return d;
}

export const openaiTtsAdapter: SpeechAdapter = {
  protocol: 'openai-tts',
  formats: ['mp3', 'pcm'],
  buildRequest(req, ctx) {
    const params = ctx.endpoint.supported_parameters;
    const sse = params.includes('stream_format');
    const body: Record<string, unknown> = { model: ctx.endpoint.upstreamModel, input: req.input, voice: req.voice, response_format: req.format };
    const dropped: string[] = [];
    if (req.speed !== undefined) {
      if (params.includes('speed')) body.speed = req.speed;
      else dropped.push('speed');
    }
    if (sse) body.stream_format = 'sse';
    fillFrom(body, req.options);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: sse ? 'text/event-stream' : '*/*',
      'user-agent': 'model-gateway/0.1',
      ...ctx.provider.headers,
    };
    if (ctx.apiKey) headers.authorization = `Bearer ${ctx.apiKey}`;
    return { req: { url: new URL(`${ctx.provider.baseUrl}/audio/speech`), headers, body: JSON.stringify(body) }, dropped };
  },
  parseError: openaiError,
  openStream(format, headers) {
    return isSse(headers) ? sseDecoder(format) : rawAudioDecoder(format, headers);
  },
};

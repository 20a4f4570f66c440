/**
 * Gemini speech generation: `POST {baseUrl}/models/<model>:streamGenerateContent?alt=sse` with
 * `generationConfig.responseModalities: ["AUDIO"]` and the voice in
 * `generationConfig.speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName` (API key in `x-goog-api-key`).
 *
 * Answer: SSE events, each a GenerateContentResponse whose parts carry `inlineData {mimeType, data}` with base64 PCM
 * (`audio/L16;codec=pcm;rate=24000`: 16-bit mono at 24 kHz). Each event's audio is decoded and relayed as it comes, so
 * the client hears the first words before the model finished. Although L16 names big-endian samples, Gemini's bytes
 * are little-endian (Google's own examples play them as `s16le`): they are exactly the gateway's `pcm` and pass
 * through unchanged. Audio of another type or sample rate is refused (502, next endpoint): the gateway does not
 * resample or encode, so Gemini endpoints serve `pcm` only and routing skips them for `mp3`.
 *
 * Request: the text is the single user part; `speed` has no Gemini equivalent and is dropped; provider options fill
 * in fields the gateway does not set (e.g. `{generationConfig: {speechConfig: {languageCode: "fr-FR"}}}`).
 * Usage: `usageMetadata.promptTokenCount` (text) and `candidatesTokenCount` (audio), billed at the token prices.
 * Errors: Google's envelope, mapped as for Gemini chat (429 + RetryInfo, 503 "overloaded" → 529, …); a blocked prompt
 * is a 400; a stream that ends without a finishReason, or finishes without audio, is a 502.
 */
import { Type } from '@sinclair/typebox';
import type { TokenUsage } from '../../core/pricing.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { mapGoogleError, parseGoogleError } from '../google/errors.js';
import { geminiHeaders, geminiUrl } from '../google/request.js';
import { Count, Opt, wireCheck } from '../wire-schema.js';
import { AudioGate, decodeBase64, fillFrom, invalidAudio, isObj, sseJsonEvents, type AudioDecoder, type SpeechAdapter } from '../speech.js';

/** PCM as Gemini labels it; the sample rate, when given, must be 24 kHz. */
function checkMime(mime: unknown): void {
  if (typeof mime !== 'string') return;
  const [type, ...params] = mime.toLowerCase().split(';').map((s) => s.trim());
  if (type !== 'audio/l16' && type !== 'audio/pcm') throw invalidAudio(`Provider returned ${type} where pcm was asked`);
  const rate = params.find((p) => p.startsWith('rate='));
  if (rate && rate !== 'rate=24000') throw invalidAudio(`Provider returned PCM at ${rate.slice(5)} Hz; the gateway serves 24000 Hz`);
}

/** A speech stream event as the decoder reads it: candidates with inline audio parts, feedback, usage. */
const checkSpeechEvent = wireCheck(
  Type.Object({
    responseId: Opt(Type.String()),
    promptFeedback: Opt(Type.Object({ blockReason: Opt(Type.String()) })),
    usageMetadata: Opt(Type.Object({ promptTokenCount: Count, candidatesTokenCount: Count })),
    candidates: Opt(
      Type.Array(
        Type.Object({
          finishReason: Opt(Type.String()),
          content: Opt(Type.Object({ parts: Opt(Type.Array(Type.Object({ inlineData: Opt(Type.Object({ mimeType: Opt(Type.String()), data: Type.String() })) }))) })),
        }),
      ),
    ),
  }),
  'stream event',
);

const FINISHED_WITH_AUDIO = new Set(['STOP', 'MAX_TOKENS']);

function geminiDecoder(): AudioDecoder {
  const gate = new AudioGate('pcm');
  let bytes = 0;
  const d = {
    usage: null as TokenUsage | null,
    upstreamId: null as string | null,
    native: null as string | null,
    push: (chunk: Uint8Array) => events.push(chunk),
    end(): Buffer[] {
      const out = gate.flush();
      if (d.native === null) throw invalidAudio('Provider stream ended before a finishReason');
      if (bytes === 0 || !FINISHED_WITH_AUDIO.has(d.native)) throw invalidAudio(`Provider finished without audio (finishReason ${d.native})`);
      return out;
    },
  };
  const events = sseJsonEvents((json) => {
    if (!isObj(json)) return [];
    if (isObj(json.error)) {
      const err = json.error;
      throw mapGoogleError(typeof err.code === 'number' ? err.code : 500, err, json, null);
    }
    checkSpeechEvent(json);
    if (typeof json.responseId === 'string') d.upstreamId = json.responseId;
    if (isObj(json.promptFeedback) && typeof json.promptFeedback.blockReason === 'string') {
      throw new UpstreamError(400, `Provider blocked the input (${json.promptFeedback.blockReason})`, 'invalid_request', 200, json);
    }
    const u = json.usageMetadata;
    if (isObj(u) && typeof u.promptTokenCount === 'number') {
      d.usage = { promptTokens: u.promptTokenCount, completionTokens: typeof u.candidatesTokenCount === 'number' ? u.candidatesTokenCount : 0 };
    }
    const cand = Array.isArray(json.candidates) ? json.candidates[0] : undefined;
    if (!isObj(cand)) return [];
    if (typeof cand.finishReason === 'string' && cand.finishReason !== '') d.native = cand.finishReason;
    const parts = isObj(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
    const out: Buffer[] = [];
    for (const p of parts) {
      if (!isObj(p) || !isObj(p.inlineData)) continue;
      checkMime(p.inlineData.mimeType);
      const audio = decodeBase64(p.inlineData.data);
      bytes += audio.length;
      out.push(...gate.pass(audio));
    }
    return out;
  });
  return d;
}

export const geminiTtsAdapter: SpeechAdapter = {
  protocol: 'gemini-tts',
  formats: ['pcm'],
  buildRequest(req, ctx) {
    if (req.format !== 'pcm') throw new UpstreamError(400, `Gemini speech produces pcm only, not ${req.format}`, 'invalid_request', null, null);
    const body: Record<string, unknown> = {
      contents: [{ role: 'user', parts: [{ text: req.input }] }],
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: req.voice } } },
      },
    };
    fillFrom(body, req.options);
    const url = geminiUrl(ctx.provider.baseUrl, ctx.endpoint.upstreamModel, true);
    return { req: { url, headers: geminiHeaders(ctx, true), body: JSON.stringify(body) }, dropped: req.speed !== undefined ? ['speed'] : [] };
  },
  parseError: parseGoogleError,
  openStream(format, headers) {
    if (format !== 'pcm') throw invalidAudio(`Gemini speech produces pcm only, not ${format}`);
    const v = headers['content-type'];
    const type = (Array.isArray(v) ? v[0] : v) ?? '';
    if (!type.toLowerCase().startsWith('text/event-stream')) throw invalidAudio(`Provider answered ${type || 'without a content type'} instead of an event stream`);
    return geminiDecoder();
  },
};

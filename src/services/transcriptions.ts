/**
 * Speech-to-text (`POST /audio/transcriptions`, docs/transcriptions.md): policy and limits, routing over the
 * transcription endpoints, upstream attempts with fallbacks, cost and the generation record. The HTTP route reads the
 * audio (multipart file or base64 JSON), validates and hands over.
 *
 * Decisions:
 * - Routing reuses `planRoute` over `catalog.transcriptionRoute` (endpoints of models whose outputs include
 *   `transcription`), with organization settings, guardrails and the key's limit as for chat, speech and embeddings.
 * - `response_format: verbose_json` (segments, words) is only served by endpoints that take `response_format`; others
 *   are skipped for it. So are `srt` and `vtt`, which the HTTP route renders from the segments of a `verbose_json`
 *   answer (core/transcript-formats.ts); `text` is asked as `json`. A provider is never asked for a text format: those
 *   carry no usage, and every answer must be billed. `language`, `prompt`, `temperature` and `timestamp_granularities` are dropped for endpoints
 *   that do not list them (or such endpoints skipped with `provider.require_parameters`).
 * - Price: audio tokens at `pricing.audio` (else `prompt`), prompt text tokens at `prompt`, output tokens at
 *   `completion`, seconds of audio (rounded to the nearest second) at `audio_second`, plus `request`; exactly. A
 *   per-second endpoint is asked for `verbose_json` (when it takes `response_format`) so that the provider states the
 *   duration, and the caller still gets the format it asked for; a WAV file's own header gives it otherwise. A price
 *   that cannot be computed (no duration known) is reported as null, never $0.
 * - Record: `api_type: "stt"`, `tokens_prompt` the input (audio + text) tokens, `tokens_completion` the output tokens.
 */
import type { Pricing } from '../core/catalog-types.js';
import { computeCost, type CostResult } from '../core/pricing.js';
import type { ProviderPreferences } from '../core/provider-prefs.js';
import type { RoutePlan } from '../core/routing.js';
import { badRequest } from '../core/errors.js';
import { transcriptionWire, type AudioFile, type TranscriptionFormat, type TranscriptionUsage } from '../providers/registry.js';
import type { TextTranscriptFormat } from '../core/transcript-formats.js';
import { isTranscriptionModel } from './catalog.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { attemptKey } from './byok.js';
import { planRequest, runSingleAnswer } from './single-answer.js';
import type { JsonReply } from './attempts/cache-step.js';
import { optionsFor } from './speech.js';

export interface TranscriptionRequest {
  model: string;
  audio: AudioFile;
  language?: string;
  prompt?: string;
  temperature?: number;
  /** What the caller gets: one of the provider formats, or a text format the route renders (`text`, `srt`, `vtt`). */
  response_format: TranscriptionFormat | TextTranscriptFormat;
  timestamp_granularities?: Array<'word' | 'segment'>;
  provider?: ProviderPreferences | null;
}

export interface PreparedTranscription {
  req: TranscriptionRequest;
  plan: RoutePlan;
}

/** Seconds of audio in a WAV (RIFF/WAVE PCM) file, from its header: the data chunk's size ÷ the byte rate; else null. */
export function wavSeconds(b: Buffer): number | null {
  if (b.length < 44 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return null;
  let byteRate = 0;
  for (let off = 12; off + 8 <= b.length; ) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ' && off + 16 <= b.length) byteRate = b.readUInt32LE(off + 16);
    if (id === 'data') return byteRate > 0 ? Math.min(size, b.length - off - 8) / byteRate : null;
    off += 8 + size + (size % 2);
  }
  return null;
}

/**
 * Cost of one transcription, exact: audio tokens ride in computeCost's cache-read bucket (at `audio`, else `prompt`),
 * text prompt tokens at `prompt`, output at `completion`, rounded seconds in the per-unit slot at `audio_second`.
 * Null when unpriced, or when the endpoint is priced per second and the duration is unknown.
 */
export function transcriptionCost(pricing: Pricing | null, u: TranscriptionUsage): CostResult {
  const perSecond = pricing?.audio_second !== undefined;
  const seconds = u.seconds === null ? null : Math.round(u.seconds);
  const p: Pricing | null = pricing && (!perSecond || seconds !== null) ? { ...pricing, input_cache_read: pricing.audio ?? pricing.prompt, image: pricing.audio_second ?? '0' } : null;
  return computeCost(p, { promptTokens: u.audioTokens + u.textTokens, cachedReadTokens: u.audioTokens, completionTokens: u.outputTokens }, { images: perSecond ? (seconds ?? 0) : 0 });
}

export class TranscriptionService {
  constructor(private readonly deps: ApiServiceDeps) {}

  async prepare(req: TranscriptionRequest, call: ApiCall): Promise<PreparedTranscription> {
    const route = this.deps.catalog.transcriptionRoute;
    const model = req.model;
    const m = route.models.get(model);
    if (m && !isTranscriptionModel(m)) {
      throw badRequest(`${model} is not a transcription model (its outputs are ${m.architecture.output_modalities.join(', ')})`, { field: 'model', error_type: 'invalid_request' });
    }
    // Formats made from a verbose answer's segments: endpoints that cannot produce one are skipped.
    const format = req.response_format;
    const verbose = format === 'verbose_json' || format === 'srt' || format === 'vtt';
    const { plan } = await planRequest(this.deps, {
      key: call.key,
      route,
      model,
      endpointFilter: (ep) => (verbose && !ep.supported_parameters.includes('response_format') ? 'unsupported_parameter' : undefined),
      // Subtitles are always timed by segment: their timestamp_granularities are not sent.
      params: (['language', 'prompt', 'temperature', 'timestamp_granularities'] as const).filter((p) => req[p] !== undefined && !(p === 'timestamp_granularities' && (format === 'srt' || format === 'vtt'))),
      // Routing preferences; `options` are the providers' own (sent as extra form fields, see optionFields).
      provider: { ...(req.provider ?? {}), options: undefined } as ProviderPreferences,
      adjust: (plan) => {
        if (plan.error?.code === 'constraint_filtered' && verbose && plan.error.excluded_by?.includes('unsupported_parameter')) {
          plan.error.message = `No endpoint of ${model} can answer response_format "${format}"${format === 'verbose_json' ? '' : ' (subtitles are made from a verbose_json answer)'}`;
        }
      },
    });
    return { req, plan };
  }

  async transcribe(p: PreparedTranscription, call: ApiCall): Promise<JsonReply> {
    const wavDuration = wavSeconds(p.req.audio.data);
    return runSingleAnswer({
      deps: this.deps,
      apiType: 'stt',
      requested: p.req.model,
      call,
      prepared: p,
      request: (a) => {
        // A per-second price needs the duration: ask for verbose_json, which states it, where the endpoint can.
        // Subtitles need the segments: verbose_json with its default (segment) timestamps.
        const format = p.req.response_format;
        const subtitles = format === 'srt' || format === 'vtt';
        const perSecond = a.endpoint.pricing?.audio_second !== undefined;
        const ask: TranscriptionFormat = format === 'verbose_json' || subtitles || (perSecond && a.endpoint.supported_parameters.includes('response_format')) ? 'verbose_json' : 'json';
        const options = optionsFor((p.req.provider as { options?: Record<string, unknown> } | null | undefined)?.options, a.provider.slug, a.endpoint.tag);
        const params = { ...p.req, response_format: ask, timestamp_granularities: subtitles ? undefined : p.req.timestamp_granularities };
        const wire = transcriptionWire(a.provider);
        const built = wire.build(p.req.audio, params, a.endpoint, a.provider, attemptKey(this.deps, a), options);
        return { ...built.req, dropped: built.dropped, parseError: wire.parseError, parse: wire.parse };
      },
      served: (_id, a, parsed) => {
        const usage = { ...parsed.usage, seconds: parsed.usage.seconds ?? wavDuration };
        const cost = transcriptionCost(a.endpoint.pricing, usage);
        // The caller's format: verbose_json keeps the provider's fields (and so do srt and vtt, which the route renders
        // from the segments); json and text are the text alone.
        const f = p.req.response_format;
        const body: Record<string, unknown> = f === 'verbose_json' || f === 'srt' || f === 'vtt' ? { ...parsed.body } : {};
        body.text = parsed.text;
        const input = usage.audioTokens + usage.textTokens;
        const u: Record<string, unknown> = {};
        if (usage.seconds !== null) u.seconds = usage.seconds;
        u.input_tokens = input;
        u.output_tokens = usage.outputTokens;
        u.total_tokens = input + usage.outputTokens;
        u.cost = cost.cost;
        u.is_byok = a.byok !== undefined;
        body.usage = u;
        return { body, promptTokens: input, completionTokens: usage.outputTokens, cost: cost.cost, upstreamId: null };
      },
    });
  }
}

/**
 * OpenAI Audio Transcriptions protocol (`POST {base}/audio/transcriptions`, multipart/form-data; OpenAI's whisper-1 and
 * gpt-4o-transcribe models, and compatible servers: Groq, Fireworks, faster-whisper and whisper.cpp servers, …): the
 * upstream multipart body, and the answer checked and read for text, usage and duration.
 *
 * Usage comes in two shapes: `{type: "tokens", input_tokens, input_token_details: {audio_tokens, text_tokens},
 * output_tokens}` (token-billed models) and `{type: "duration", seconds}` (Whisper); `verbose_json` answers also carry
 * `duration`. Parameters an endpoint does not list in `supported_parameters` are not sent (and reported as dropped).
 */
import { randomBytes } from 'node:crypto';
import type { EndpointDef, ProviderDef } from '../../core/catalog-types.js';
import { chatHeaders, openaiError, providerUrl } from './chat.js';
import { parseJsonObject } from './ir-upstream.js';
import { checkTranscription } from './schemas.js';

export type TranscriptionFormat = 'json' | 'verbose_json';

export interface AudioFile {
  data: Buffer;
  /** File name sent upstream (its extension names the format for most servers). */
  filename: string;
  mime: string;
}

export interface TranscriptionParams {
  language?: string;
  prompt?: string;
  temperature?: number;
  /** What to ask the provider for (the service may ask verbose_json to learn the duration). */
  response_format: TranscriptionFormat;
  timestamp_granularities?: Array<'word' | 'segment'>;
}

export const transcriptionsUrl = providerUrl('audio/transcriptions');

/** A multipart/form-data body: text fields, then the file. */
export function multipartBody(fields: Array<[string, string]>, file: AudioFile & { field: string }): { body: Buffer; contentType: string } {
  const boundary = `----model-gateway-${randomBytes(12).toString('hex')}`;
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  const parts: Buffer[] = [];
  for (const [name, value] of fields) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\nContent-Type: ${quote(file.mime)}\r\n\r\n`));
  parts.push(file.data, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Fields the gateway sets itself: provider options never replace them. */
const RESERVED = new Set(['file', 'model', 'response_format', 'language', 'prompt', 'temperature', 'timestamp_granularities']);

/**
 * The provider's own options (`provider.options.<slug>`) as extra form fields: scalars as text, lists as repeated
 * `name[]` fields, objects as JSON text; the gateway's own fields are never replaced.
 */
export function optionFields(options: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(options)) {
    if (RESERVED.has(k) || v === null || v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) out.push([`${k}[]`, typeof x === 'object' ? JSON.stringify(x) : String(x)]);
    else out.push([k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
  }
  return out;
}

export function buildTranscriptionRequest(
  audio: AudioFile,
  params: TranscriptionParams,
  endpoint: EndpointDef,
  provider: ProviderDef,
  apiKey: string | null,
  options: Record<string, unknown> = {},
): { req: { url: URL; headers: Record<string, string>; body: Buffer }; dropped: string[] } {
  const supported = new Set(endpoint.supported_parameters);
  const fields: Array<[string, string]> = [['model', endpoint.upstreamModel]];
  const dropped: string[] = [];
  const add = (name: keyof TranscriptionParams, values: string[]) => {
    if (!supported.has(name)) {
      if (name !== 'response_format' || params.response_format !== 'json') dropped.push(name);
      return;
    }
    for (const v of values) fields.push([name === 'timestamp_granularities' ? 'timestamp_granularities[]' : name, v]);
  };
  if (params.language !== undefined) add('language', [params.language]);
  if (params.prompt !== undefined) add('prompt', [params.prompt]);
  if (params.temperature !== undefined) add('temperature', [String(params.temperature)]);
  add('response_format', [params.response_format]);
  if (params.timestamp_granularities && params.timestamp_granularities.length > 0) add('timestamp_granularities', params.timestamp_granularities);
  fields.push(...optionFields(options));
  const { body, contentType } = multipartBody(fields, { ...audio, field: 'file' });
  const headers = { ...chatHeaders(provider, apiKey, false), 'content-type': contentType };
  return { req: { url: transcriptionsUrl(provider), headers, body }, dropped };
}

export const parseTranscriptionError = openaiError;

export interface TranscriptionUsage {
  /** Audio input tokens (token-billed models). */
  audioTokens: number;
  /** Text input tokens (the prompt) of token-billed models. */
  textTokens: number;
  outputTokens: number;
  /** Seconds of input audio, when the provider says (usage or verbose_json duration). */
  seconds: number | null;
  /** Whether the provider reported tokens. */
  tokens: boolean;
}

export interface ParsedTranscription {
  text: string;
  /** The whole answer (verbose_json fields: task, language, duration, segments, words). */
  body: Record<string, unknown>;
  usage: TranscriptionUsage;
}

const nonNegative = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

export function parseTranscription(text: string): ParsedTranscription {
  const o = parseJsonObject(text);
  if (o.text === undefined && o.error) throw openaiError(502, text, {});
  checkTranscription(o);
  const u = (o.usage && typeof o.usage === 'object' ? o.usage : {}) as Record<string, unknown>;
  const details = (u.input_token_details && typeof u.input_token_details === 'object' ? u.input_token_details : {}) as Record<string, unknown>;
  const input = nonNegative(u.input_tokens);
  const audio = nonNegative(details.audio_tokens);
  const textTokens = nonNegative(details.text_tokens);
  const tokens = input !== null || nonNegative(u.output_tokens) !== null;
  const usage: TranscriptionUsage = {
    // Without a breakdown, every input token is audio (the prompt is optional and short).
    audioTokens: audio ?? (input !== null ? input - (textTokens ?? 0) : 0),
    textTokens: textTokens ?? 0,
    outputTokens: nonNegative(u.output_tokens) ?? 0,
    seconds: nonNegative(u.seconds) ?? nonNegative(o.duration),
    tokens,
  };
  return { text: o.text as string, body: o, usage };
}

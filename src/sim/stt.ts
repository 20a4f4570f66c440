/**
 * Simulated OpenAI Audio Transcriptions API (under `/<provider>/…` like the other protocols):
 *
 *   POST /v1/audio/transcriptions   multipart/form-data: file, model, language?, prompt?, temperature?,
 *                                   response_format? (json | verbose_json | text), timestamp_granularities[]?
 *
 * The transcript is deterministic (`simTranscript`, exported for tests): words drawn from the file's bytes and the model.
 * Duration: a WAV file's header (data size ÷ byte rate); any other file counts as 16 kHz 16-bit mono (32000 bytes a
 * second). Usage follows the model: a model id containing `whisper` reports `{type: "duration", seconds}` (Whisper),
 * any other `{type: "tokens", input_tokens, input_token_details: {audio_tokens, text_tokens}, output_tokens,
 * total_tokens}` with audio tokens = ceil(seconds × 10), text tokens = ceil(prompt characters / 4), output tokens =
 * ceil(transcript characters / 4). `verbose_json` adds task, language, duration and one segment per 4 words (and
 * `words` with `timestamp_granularities[]=word`).
 *
 * Validation, as OpenAI's: `file` and `model` required; a known `response_format`; `temperature` 0–1. The request
 * header `x-sim-stt-usage: none` leaves usage out (a server that reports none). The usual knobs apply.
 */
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply } from './protocol.js';
import { hash32, prng, tokensOfChars } from './text.js';

export interface SimUpload {
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A multipart/form-data body: text fields as strings (repeated `x[]` fields as lists), files as SimUpload; null if malformed. */
export function parseMultipart(raw: Buffer, contentType: string): Record<string, unknown> | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) return null;
  const boundary = Buffer.from(`--${m[1] ?? m[2]}`);
  const out: Record<string, unknown> = {};
  let pos = raw.indexOf(boundary);
  if (pos < 0) return null;
  for (;;) {
    pos += boundary.length;
    if (raw.subarray(pos, pos + 2).toString() === '--') return out;
    pos += 2; // CRLF
    const headEnd = raw.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) return null;
    const head = raw.subarray(pos, headEnd).toString();
    const next = raw.indexOf(boundary, headEnd + 4);
    if (next < 0) return null;
    const data = raw.subarray(headEnd + 4, next - 2); // minus the CRLF before the boundary
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) return null;
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    if (filename !== undefined) out[name] = { filename, contentType: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream', data: Buffer.from(data) } satisfies SimUpload;
    else if (name.endsWith('[]')) out[name.slice(0, -2)] = [...((out[name.slice(0, -2)] as string[] | undefined) ?? []), data.toString()];
    else out[name] = data.toString();
    pos = next;
  }
}

/** Seconds of audio the simulator hears in a file: a WAV header's duration, else 32000 bytes a second. */
export function simAudioSeconds(data: Buffer): number {
  if (data.length >= 44 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WAVE') {
    let byteRate = 0;
    for (let off = 12; off + 8 <= data.length; ) {
      const id = data.toString('latin1', off, off + 4);
      const size = data.readUInt32LE(off + 4);
      if (id === 'fmt ') byteRate = data.readUInt32LE(off + 16);
      if (id === 'data' && byteRate > 0) return Math.min(size, data.length - off - 8) / byteRate;
      off += 8 + size + (size % 2);
    }
  }
  return data.length / 32000;
}

const WORDS = 'the gateway heard a simulated voice reading numbers letters and a short sentence about routing audio to text'.split(' ');

/** The simulator's transcript of a file for a model. */
export function simTranscript(data: Buffer, model: string): string {
  const next = prng(hash32(`${model}\u0000${data.subarray(0, 4096).toString('base64')}\u0000${data.length}`));
  const n = 4 + (next() % 12);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(WORDS[next() % WORDS.length]);
  const text = words.join(' ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

/** The usage the simulator reports for a transcription. */
export function simTranscriptionUsage(model: string, seconds: number, prompt: string | undefined, text: string): Record<string, unknown> {
  if (/whisper/i.test(model)) return { type: 'duration', seconds: Math.round(seconds * 100) / 100 };
  const audio = Math.ceil(seconds * 10);
  const textTokens = prompt ? tokensOfChars(prompt.length) : 0;
  const output = tokensOfChars(text.length);
  return { type: 'tokens', input_tokens: audio + textTokens, input_token_details: { audio_tokens: audio, text_tokens: textTokens }, output_tokens: output, total_tokens: audio + textTokens + output };
}

const invalid = (ctx: EndpointContext, message: string, param: string | null): JsonReply => openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code: null });

function transcriptions(ctx: EndpointContext): Reply {
  const b = ctx.body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object') return invalid(ctx, 'Expected a multipart/form-data body.', null);
  const file = b.file as SimUpload | undefined;
  if (!file || !Buffer.isBuffer(file.data)) return invalid(ctx, "Missing required parameter: 'file'.", 'file');
  if (typeof b.model !== 'string' || b.model === '') return invalid(ctx, "Missing required parameter: 'model'.", 'model');
  if (file.data.length === 0) return invalid(ctx, 'The audio file could not be decoded or its format is not supported.', 'file');
  const format = (b.response_format as string | undefined) ?? 'json';
  if (!['json', 'verbose_json', 'text'].includes(format)) return invalid(ctx, `Invalid value: '${format}'. Supported values are: 'json', 'text', 'verbose_json'.`, 'response_format');
  if (b.temperature !== undefined && !(Number(b.temperature) >= 0 && Number(b.temperature) <= 1)) return invalid(ctx, "Invalid 'temperature': expected a number between 0 and 1.", 'temperature');
  const seconds = simAudioSeconds(file.data);
  const text = simTranscript(file.data, b.model);
  if (format === 'text') return { kind: 'json', status: 200, body: `${text}\n`, headers: { 'content-type': 'text/plain; charset=utf-8' }, chunks: 1 };
  const usage = ctx.headers['x-sim-stt-usage'] === 'none' ? undefined : simTranscriptionUsage(b.model, seconds, b.prompt as string | undefined, text);
  let out: Record<string, unknown> = { text, usage };
  if (format === 'verbose_json') {
    const words = text.replace(/\.$/, '').split(' ');
    const per = seconds / words.length;
    const segments = [];
    for (let i = 0; i < words.length; i += 4) {
      segments.push({ id: segments.length, seek: 0, start: i * per, end: Math.min(words.length, i + 4) * per, text: ` ${words.slice(i, i + 4).join(' ')}`, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 });
    }
    out = { task: 'transcribe', language: (b.language as string | undefined) ?? 'english', duration: seconds, text, segments, usage };
    const granularities = (b.timestamp_granularities as string[] | undefined) ?? [];
    if (granularities.includes('word')) out.words = words.map((word, i) => ({ word, start: i * per, end: (i + 1) * per }));
  }
  return { kind: 'json', status: 200, body: JSON.stringify(out), headers: { 'content-type': 'application/json' }, chunks: 1 };
}

export const sttEndpoints: Endpoint[] = [{ method: 'POST', path: '/v1/audio/transcriptions', protocol: openaiProtocol, modelCall: true, handle: transcriptions }];

/**
 * Simulated text-to-speech APIs (under `/<provider>/…` like the other protocols):
 *
 *   POST /v1/audio/speech                               OpenAI speech: raw audio bytes streamed in chunks, or SSE
 *                                                       (`stream_format: "sse"`: `speech.audio.delta` base64 events,
 *                                                       then `speech.audio.done` with usage)
 *   POST /v1beta/models/<…tts…>:streamGenerateContent   Gemini speech (a model id containing `tts`, as Google's do):
 *        (?alt=sse: SSE; else one JSON array)           base64 PCM in `inlineData` (`audio/L16;codec=pcm;rate=24000`)
 *   POST /v1beta/models/<…tts…>:generateContent         the whole audio in one JSON answer
 *
 * Audio is deterministic (`simSpeechAudio`, exported for tests): `pcm` is 240 samples (10 ms at 24 kHz) per input
 * character divided by `speed`, signed 16-bit little-endian, a tone whose pitch follows the characters and the voice;
 * `mp3` is an ID3v2 header and MPEG-1 Layer III frame headers (`FF FB 90 64`) over deterministic payload bytes (it
 * looks like MP3 to a sniffer; it is not decodable music); `wav` is the pcm with a RIFF header.
 * Chunks: the audio is split into `completionTokens` (default 12) near-equal chunks of whole samples; the usual knobs
 * pace and cut them (`ttftMs` before the first, `chunkGapMs` / `tokensPerSecond` between them,
 * `disconnectAfterChunks` and — raw audio having no error event — `errorAfterChunks` cut the connection after N
 * chunks; `malformed: "empty"` answers 200 with no bytes, `huge` appends `hugeBytes` zero bytes, any other kind an
 * HTML page under the audio Content-Type; SSE answers are broken as any stream, see corrupt.ts). `latencyMs`, `hang`, `errorStatus`, `failTimes` and
 * `retryAfter` work as everywhere (errors in OpenAI's, resp. Google's, envelope).
 * Usage (SSE and Gemini): text tokens = ceil(characters / 4); audio tokens = ceil(audio seconds × 25).
 * The request header `x-sim-tts-format` (also settable as a provider header in a catalog) forces the produced format
 * (`mp3`, `pcm`, `wav`) whatever was asked, with its own Content-Type / mimeType: a provider that ignores the format.
 *
 * Validation, as the real APIs: OpenAI needs `model`, `input` (≤ 4096 characters), `voice`, a known
 * `response_format` (mp3, opus, aac, flac, wav, pcm; the simulator produces mp3, pcm and wav, others are 400) and
 * `speed` 0.25–4; Gemini needs `contents` with text and `responseModalities` including AUDIO.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { geminiProtocol } from './gemini.js';
import { corrupt, DEFAULT_HUGE_BYTES, type Malformed } from './corrupt.js';
import type { Knobs } from './knobs.js';
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply, SseEvent } from './protocol.js';
import { hash32, prng, tokensOfChars } from './text.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type SimAudioFormat = 'mp3' | 'pcm' | 'wav';
export const SIM_SAMPLE_RATE = 24_000;
const SAMPLES_PER_CHAR = 240;
const DEFAULT_CHUNKS = 12;
export const TTS_FORMAT_HEADER = 'x-sim-tts-format';
const CONTENT_TYPES: Record<SimAudioFormat, string> = { mp3: 'audio/mpeg', pcm: 'audio/pcm', wav: 'audio/wav' };
const GEMINI_MIME: Record<SimAudioFormat, string> = { pcm: 'audio/L16;codec=pcm;rate=24000', mp3: 'audio/mpeg', wav: 'audio/wav' };

function pcm(input: string, voice: string, speed: number): Buffer {
  const chars = Array.from(input.length > 0 ? input : ' ');
  const per = SAMPLES_PER_CHAR / speed;
  const n = Math.max(1, Math.round(chars.length * per));
  const base = 90 + (hash32(voice) % 60);
  const out = Buffer.alloc(n * 2);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const c = chars[Math.min(chars.length - 1, Math.floor(i / per))].codePointAt(0) ?? 32;
    phase += (2 * Math.PI * (base + (c % 48) * 9)) / SIM_SAMPLE_RATE;
    out.writeInt16LE(Math.round(9000 * Math.sin(phase)), i * 2);
  }
  return out;
}

function mp3(input: string, voice: string, speed: number): Buffer {
  const seconds = (Array.from(input).length * SAMPLES_PER_CHAR) / speed / SIM_SAMPLE_RATE;
  const frames = Math.max(1, Math.ceil(seconds / 0.026));
  const rnd = prng(hash32(`${voice}|${speed}|${input}`));
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const parts: Buffer[] = [id3];
  for (let f = 0; f < frames; f++) {
    const frame = Buffer.alloc(417);
    frame.set([0xff, 0xfb, 0x90, 0x64]);
    for (let i = 4; i < frame.length; i++) frame[i] = rnd() & 0xff;
    parts.push(frame);
  }
  return Buffer.concat(parts);
}

function wav(samples: Buffer): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + samples.length, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(SIM_SAMPLE_RATE, 24);
  h.writeUInt32LE(SIM_SAMPLE_RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(samples.length, 40);
  return Buffer.concat([h, samples]);
}

/** The simulator's audio for a request: deterministic in (input, voice, format, speed). */
export function simSpeechAudio(o: { input: string; voice: string; format: SimAudioFormat; speed?: number }): Buffer {
  const speed = o.speed ?? 1;
  if (o.format === 'mp3') return mp3(o.input, o.voice, speed);
  const samples = pcm(o.input, o.voice, speed);
  return o.format === 'wav' ? wav(samples) : samples;
}

/** Audio tokens reported for the speech of `input`: 25 per second of audio, at least 1. */
export function simAudioTokens(input: string, speed = 1): number {
  const seconds = (Array.from(input).length * SAMPLES_PER_CHAR) / speed / SIM_SAMPLE_RATE;
  return Math.max(1, Math.ceil(seconds * 25));
}

/** `audio` split into `n` near-equal chunks of whole 16-bit samples. */
export function splitAudio(audio: Buffer, n: number): Buffer[] {
  const count = Math.max(1, Math.min(n, Math.ceil(audio.length / 2)));
  const size = Math.ceil(audio.length / count / 2) * 2;
  const out: Buffer[] = [];
  for (let i = 0; i < audio.length; i += size) out.push(audio.subarray(i, Math.min(audio.length, i + size)));
  return out;
}

/** A raw audio answer: status 200, the audio's Content-Type, and the chunks the server writes one by one. */
export interface AudioReply extends JsonReply {
  audio: Buffer[];
}

export function isAudioReply(r: Reply): r is AudioReply {
  return r.kind === 'json' && Array.isArray((r as Partial<AudioReply>).audio);
}

function forcedFormat(ctx: EndpointContext): SimAudioFormat | undefined {
  const h = ctx.headers[TTS_FORMAT_HEADER];
  const v = Array.isArray(h) ? h[h.length - 1] : h;
  return v === 'mp3' || v === 'pcm' || v === 'wav' ? v : undefined;
}

// ---------------------------------------------------------------- OpenAI speech

const OPENAI_FORMATS = new Set(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']);

const invalid = (ctx: EndpointContext, message: string, param: string | null, code: string | null = null): JsonReply =>
  openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code });

/** OpenAI's `POST /audio/speech` handler (also behind Azure's deployment URL, azure.ts). */
export function openaiSpeech(ctx: EndpointContext): Reply {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'We could not parse the JSON body of your request.', null);
  if (typeof b.model !== 'string' || b.model === '') return invalid(ctx, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof b.input !== 'string') return invalid(ctx, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (b.input.length > 4096) return invalid(ctx, "Invalid 'input': string too long. Expected a string with maximum length 4096.", 'input', 'string_above_max_length');
  if (typeof b.voice !== 'string' || b.voice === '') return invalid(ctx, "Missing required parameter: 'voice'.", 'voice', 'missing_required_parameter');
  const asked = b.response_format ?? 'mp3';
  if (typeof asked !== 'string' || !OPENAI_FORMATS.has(asked)) return invalid(ctx, `Invalid value: '${String(asked)}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`, 'response_format', 'invalid_value');
  const speed = b.speed ?? 1;
  if (typeof speed !== 'number' || speed < 0.25 || speed > 4) return invalid(ctx, `Invalid 'speed': expected a number between 0.25 and 4.`, 'speed', 'invalid_value');
  const format = forcedFormat(ctx) ?? (asked as SimAudioFormat);
  if (!(format in CONTENT_TYPES)) return invalid(ctx, `The simulator does not produce ${format}.`, 'response_format', 'unsupported_value');
  const audio = simSpeechAudio({ input: b.input, voice: b.voice, format, speed });
  const chunks = splitAudio(audio, ctx.knobs.completionTokens ?? DEFAULT_CHUNKS);
  if (b.stream_format === 'sse') {
    const events: SseEvent[] = chunks.map((c) => ({ data: JSON.stringify({ type: 'speech.audio.delta', audio: c.toString('base64') }), content: true }));
    const input_tokens = tokensOfChars(b.input.length);
    const output_tokens = simAudioTokens(b.input, speed);
    events.push({ data: JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens } }) });
    return { kind: 'sse', events };
  }
  const reply: AudioReply = { kind: 'json', status: 200, body: '', headers: { 'content-type': CONTENT_TYPES[format] }, chunks: chunks.length, audio: chunks };
  return reply;
}

// ---------------------------------------------------------------- Gemini speech

const GEMINI_TTS_PATH = /^\/v1beta\/models\/([^/:]*tts[^/:]*)(?::|%3A)(generateContent|streamGenerateContent)$/i;
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json; charset=UTF-8' };

function geminiSpeech(ctx: EndpointContext): Reply {
  const m = GEMINI_TTS_PATH.exec(ctx.path);
  if (!m) return geminiProtocol.error(404, ctx);
  const model = decodeURIComponent(m[1]);
  const stream = m[2].toLowerCase() === 'streamgeneratecontent';
  const sse = stream && new URLSearchParams(ctx.query).get('alt') === 'sse';
  const b = ctx.body;
  const bad = (message: string) => geminiProtocol.error(400, ctx, { message });
  if (!isObj(b)) return bad('Invalid JSON payload received. Expected an object.');
  const contents = Array.isArray(b.contents) ? b.contents : isObj(b.contents) ? [b.contents] : [];
  let text = '';
  for (const c of contents) if (isObj(c) && Array.isArray(c.parts)) for (const p of c.parts) if (isObj(p) && typeof p.text === 'string') text += p.text;
  if (text === '') return bad('* GenerateContentRequest.contents: contents is not specified\n');
  const cfg = isObj(b.generationConfig) ? b.generationConfig : {};
  const modalities = Array.isArray(cfg.responseModalities) ? cfg.responseModalities.map((x) => String(x).toUpperCase()) : ['TEXT'];
  if (!modalities.includes('AUDIO')) return bad(`The requested combination of response modalities (${modalities.join(', ')}) is not supported by the model. models/${model} accepts the following combination of response modalities:\n* AUDIO\n`);
  const speech = isObj(cfg.speechConfig) ? cfg.speechConfig : {};
  const prebuilt = isObj(speech.voiceConfig) && isObj(speech.voiceConfig.prebuiltVoiceConfig) ? speech.voiceConfig.prebuiltVoiceConfig : {};
  const voice = typeof prebuilt.voiceName === 'string' ? prebuilt.voiceName : 'Kore';

  const format = forcedFormat(ctx) ?? 'pcm';
  const audio = simSpeechAudio({ input: text, voice, format });
  const chunks = splitAudio(audio, ctx.knobs.completionTokens ?? DEFAULT_CHUNKS);
  const prompt = tokensOfChars(text.length);
  const out = simAudioTokens(text);
  const usage = {
    promptTokenCount: prompt,
    candidatesTokenCount: out,
    totalTokenCount: prompt + out,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    candidatesTokensDetails: [{ modality: 'AUDIO', tokenCount: out }],
  };
  const meta = { modelVersion: ctx.knobs.model ?? model, responseId: `simTts${ctx.rid}` };
  const part = (c: Buffer) => ({ inlineData: { mimeType: GEMINI_MIME[format], data: c.toString('base64') } });
  if (!stream) {
    const body = { candidates: [{ content: { role: 'model', parts: [part(audio)] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...meta };
    return { kind: 'json', status: 200, body: JSON.stringify(body), headers: JSON_HEADERS, chunks: chunks.length };
  }
  const running = { promptTokenCount: prompt, totalTokenCount: prompt };
  const values: Array<{ value: Obj; content: boolean }> = chunks.map((c) => ({ value: { candidates: [{ content: { role: 'model', parts: [part(c)] }, index: 0 }], usageMetadata: running, ...meta }, content: true }));
  values.push({ value: { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...meta }, content: false });
  if (sse) return { kind: 'sse', events: values.map((v) => ({ data: JSON.stringify(v.value), ...(v.content ? { content: true } : {}) })) };
  return { kind: 'json', status: 200, body: JSON.stringify(values.map((v) => v.value)), headers: JSON_HEADERS, chunks: chunks.length };
}

/** Registered before the Gemini chat endpoints, whose path pattern also matches TTS models. */
export const ttsEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/audio/speech', protocol: openaiProtocol, modelCall: true, handle: openaiSpeech },
  { method: 'POST', path: GEMINI_TTS_PATH, protocol: geminiProtocol, modelCall: true, handle: geminiSpeech },
];

// ---------------------------------------------------------------- writing raw audio

/** What the server lends `writeAudio`: its interruptible wait and its deliberate disconnect. */
export interface AudioWriterIo {
  /** Waits `ms`; false when the connection closed meanwhile. */
  sleep(ms: number): Promise<boolean>;
  /** Destroys the connection on purpose (not counted as a client abort). */
  disconnect(): void;
  /** Records the status sent. */
  status(code: number): void;
}

/**
 * Writes an AudioReply chunk by chunk: headers at once, `ttftMs` before the first chunk, the chunk gap between the
 * next ones; `disconnectAfterChunks` / `errorAfterChunks` (when faulty) cut the connection after N chunks.
 */
export async function writeAudio(
  res: ServerResponse,
  reply: AudioReply,
  knobs: Knobs,
  faults: { errorAfter?: number; disconnectAfter?: number; malformed?: Malformed },
  io: AudioWriterIo,
  rid: string,
): Promise<void> {
  io.status(200);
  res.writeHead(200, { ...reply.headers, 'x-request-id': `req_${rid}` });
  if (faults.malformed === 'empty') return void res.end();
  // Raw audio has no JSON to break: any other kind answers an HTML page under the audio Content-Type, `huge` adds
  // `hugeBytes` of zero bytes after the audio (streamed on as they come: only a JSON answer or one event is bounded).
  if (faults.malformed && faults.malformed !== 'huge') return void res.end(corrupt('', 'garbage'));
  res.flushHeaders();
  const cut = Math.min(faults.errorAfter ?? Infinity, faults.disconnectAfter ?? Infinity);
  const gap = knobs.chunkGapMs ?? (knobs.tokensPerSecond ? 1000 / knobs.tokensPerSecond : 0);
  // The cut comes after what was written has left (a destroyed socket may drop unflushed writes).
  const cutNow = () => void res.write(Buffer.alloc(0), () => io.disconnect());
  for (let i = 0; i < reply.audio.length; i++) {
    if (i === cut) return cutNow();
    const wait = i === 0 ? (knobs.ttftMs ?? 0) : gap;
    if (wait >= 1 && !(await io.sleep(wait))) return;
    res.write(reply.audio[i]);
  }
  if (cut !== Infinity && cut >= reply.audio.length) return cutNow();
  if (faults.malformed === 'huge') res.write(Buffer.alloc(knobs.hugeBytes ?? DEFAULT_HUGE_BYTES));
  res.end();
}

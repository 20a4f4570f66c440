/**
 * The speech adapter contract (`POST /audio/speech`, docs/speech.md) and what the speech adapters share.
 *
 * A SpeechAdapter speaks one upstream text-to-speech API: validated request → HTTP request, error answer →
 * UpstreamError, 2xx answer → a decoder that turns the body, piece by piece as it arrives, into the audio bytes the
 * client gets. Adapters are pure translation (no I/O): the speech service does the HTTP, routing and accounting.
 *
 * Format guarantee: the client's Content-Type names the format it asked for, so a decoder refuses (UpstreamError 502,
 * before any byte is relayed, so the next endpoint is tried) an answer that is visibly something else — another
 * audio Content-Type, a WAV/Ogg/FLAC/ID3 header where raw PCM was asked, no MP3 header where MP3 was asked.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AudioFormat, SpeechProtocol } from '../core/catalog-types.js';
import type { TokenUsage } from '../core/pricing.js';
import { UpstreamError } from '../core/provider-errors.js';
import { SseEventBound } from './sse.js';
import type { UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';

export type Headers = Record<string, string | string[] | undefined>;

/** A validated speech request, as the adapters see it. */
export interface SpeechInput {
  input: string;
  voice: string;
  format: AudioFormat;
  /** Given by the client; adapters forward it only where the endpoint lists `speed` in `supported_parameters`. */
  speed?: number;
  /** The matched provider's `provider.options` (null values removed): fields the gateway does not set itself. */
  options: Record<string, unknown>;
}

/** Incremental decoder of one upstream answer: body bytes in, audio bytes out. */
export interface AudioDecoder {
  /** The next piece of the body (any boundary); returns the audio completed by it. Throws UpstreamError. */
  push(chunk: Uint8Array): Buffer[];
  /** The body ended: the last audio; throws UpstreamError when the answer was incomplete. */
  end(): Buffer[];
  /** Tokens the upstream reported (null when it reports none, e.g. a raw byte stream). */
  readonly usage: TokenUsage | null;
  readonly upstreamId: string | null;
  /** The upstream's own finish reason, when it gives one. */
  readonly native: string | null;
}

export interface SpeechAdapter {
  readonly protocol: SpeechProtocol;
  /** The formats the API can produce (an endpoint's `audio_formats` narrows them). */
  readonly formats: readonly AudioFormat[];
  buildRequest(req: SpeechInput, ctx: UpstreamContext): { req: UpstreamHttpRequest; dropped: string[] };
  parseError(status: number, text: string, headers: Headers): UpstreamError;
  /** A decoder for a 2xx answer; throws UpstreamError when its headers show it is not audio in `format`. */
  openStream(format: AudioFormat, headers: Headers): AudioDecoder;
}

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Provider options added to an upstream body: only fields the gateway left unset are filled in (objects are merged
 * key by key), so options can never change the model, the text, the voice or the format.
 */
export function fillFrom(target: Obj, options: Obj): Obj {
  for (const [k, v] of Object.entries(options)) {
    if (v === null || v === undefined) continue;
    const cur = target[k];
    if (cur === undefined) target[k] = v;
    else if (isObj(cur) && isObj(v)) fillFrom(cur, v);
  }
  return target;
}

export const invalidAudio = (message: string, raw: unknown = null) => new UpstreamError(502, message, 'provider_unavailable', 200, raw);

function mediaType(headers: Headers): string {
  const v = headers['content-type'];
  const s = Array.isArray(v) ? v[0] : v;
  return (s ?? '').split(';')[0].trim().toLowerCase();
}

/** Audio Content-Types accepted for each format (a missing or generic binary type is judged by the bytes). */
const ACCEPTED: Record<AudioFormat, ReadonlySet<string>> = {
  mp3: new Set(['audio/mpeg', 'audio/mp3', 'audio/mpeg3', 'audio/x-mpeg', 'audio/x-mp3']),
  pcm: new Set(['audio/pcm', 'audio/l16', 'audio/raw', 'audio/x-raw', 'audio/s16le']),
};

/** Throws unless the Content-Type of a raw audio answer can be `format`. */
export function checkAudioType(format: AudioFormat, headers: Headers): void {
  const t = mediaType(headers);
  if (t === '' || t === 'application/octet-stream' || t === 'binary/octet-stream') return;
  if (t.startsWith('audio/') && !ACCEPTED[format].has(t)) throw invalidAudio(`Provider returned ${t} where ${format} was asked`);
  if (!t.startsWith('audio/')) throw invalidAudio(`Provider returned ${t} instead of audio`);
}

const MAGIC: Array<[string, number[]]> = [
  ['WAV', [0x52, 0x49, 0x46, 0x46]],
  ['Ogg', [0x4f, 0x67, 0x67, 0x53]],
  ['FLAC', [0x66, 0x4c, 0x61, 0x43]],
  ['MP3 (ID3)', [0x49, 0x44, 0x33]],
];

/** Why the first bytes of an answer cannot be `format` (null when they can). Needs at least 4 bytes (or all of them). */
export function sniffProblem(format: AudioFormat, head: Uint8Array): string | null {
  if (format === 'mp3') {
    const id3 = head.length >= 3 && head[0] === 0x49 && head[1] === 0x44 && head[2] === 0x33;
    const sync = head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0;
    return id3 || sync ? null : 'Provider returned audio that does not start like MP3';
  }
  for (const [name, bytes] of MAGIC) {
    if (head.length >= bytes.length && bytes.every((b, i) => head[i] === b)) return `Provider returned ${name} data where raw PCM was asked`;
  }
  return null;
}

/** Audio bytes checked once, at their start (the first 4 bytes, however they are split), then passed through. */
export class AudioGate {
  private head: Buffer | null = Buffer.alloc(0);

  constructor(private readonly format: AudioFormat) {}

  /** Bytes ready to go to the client (held back until the start is checked). */
  pass(bytes: Buffer): Buffer[] {
    if (bytes.length === 0) return [];
    if (this.head === null) return [bytes];
    const head = Buffer.concat([this.head, bytes]);
    if (head.length < 4) {
      this.head = head;
      return [];
    }
    this.head = null;
    const problem = sniffProblem(this.format, head);
    if (problem) throw invalidAudio(problem);
    return [head];
  }

  /** The end of the audio: whatever was held back (checked). */
  flush(): Buffer[] {
    const head = this.head;
    this.head = null;
    if (!head || head.length === 0) return [];
    const problem = sniffProblem(this.format, head);
    if (problem) throw invalidAudio(problem);
    return [head];
  }
}

/** A raw audio answer (the body is the audio): passed through as it arrives, its start checked. */
export function rawAudioDecoder(format: AudioFormat, headers: Headers): AudioDecoder {
  checkAudioType(format, headers);
  const gate = new AudioGate(format);
  return {
    usage: null,
    upstreamId: null,
    native: null,
    push: (chunk) => gate.pass(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
    end: () => gate.flush(),
  };
}

/** An SSE answer: each `data:` JSON goes to `onEvent`, which returns the audio it carries. */
export function sseJsonEvents(onEvent: (json: unknown, ev: EventSourceMessage) => Buffer[]): { push(chunk: Uint8Array): Buffer[] } {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (ev) => events.push(ev) });
  const text = new TextDecoder();
  const bound = new SseEventBound();
  return {
    push(chunk) {
      const piece = text.decode(chunk, { stream: true });
      parser.feed(piece);
      bound.fed(piece.length, events.length);
      const out: Buffer[] = [];
      try {
        for (const ev of events) {
          if (ev.data === '' || ev.data === '[DONE]') continue;
          let json: unknown;
          try {
            json = JSON.parse(ev.data);
          } catch {
            throw invalidAudio('Provider sent an invalid stream event', ev.data.slice(0, 512));
          }
          out.push(...onEvent(json, ev));
        }
      } finally {
        events.length = 0;
      }
      return out;
    },
  };
}

/** Base64 audio from a JSON field, decoded (throws on anything but base64 text). */
export function decodeBase64(data: unknown): Buffer {
  if (typeof data !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(data.replace(/\s+/g, ''))) throw invalidAudio('Provider sent audio that is not base64');
  return Buffer.from(data, 'base64');
}

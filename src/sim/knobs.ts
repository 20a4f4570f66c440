/**
 * Behaviour knobs of the provider simulator: the type, validation of knob
 * objects (control API, `setKnobs`) and parsing of per-request `x-sim-*`
 * header overrides. Every knob is optional; an absent knob means
 * "no added delay, success".
 */
import type { IncomingHttpHeaders } from 'node:http';
import { MALFORMED_KINDS, type Malformed } from './corrupt.js';

export interface Knobs {
  /** Delay (ms) before the response headers are sent. */
  latencyMs?: number;
  /** Delay (ms) before the first streamed event, after the headers (non-streaming: added before the body). */
  ttftMs?: number;
  /** Pace content chunks at this rate; 0/absent = no pacing. */
  tokensPerSecond?: number;
  /** Fixed gap (ms) between content chunks; wins over `tokensPerSecond`. */
  chunkGapMs?: number;
  /**
   * Streaming, with `chunkGapMs`: content events go out in bursts of this many, each burst one write followed by a
   * pause of `chunkGapMs` (after the write, not on a schedule, so a late burst is not joined to the next one). For
   * benchmarks whose socket reads must carry a fixed number of events.
   */
  burstChunks?: number;
  /** Answer with this HTTP status (400–599) and the protocol's error envelope. */
  errorStatus?: number;
  /** Seconds sent in `retry-after` on 429 (default 1); also sent on other statuses when set. */
  retryAfter?: number;
  /** Streaming: after N content chunks send an in-stream error event and end (non-streaming: 500). */
  errorAfterChunks?: number;
  /** Only the first N requests to the provider get the fault knobs (default fault: errorStatus 500). */
  failTimes?: number;
  /** Accept the request and never answer. */
  hang?: boolean;
  /** Destroy the socket after N content chunks (no terminator). */
  disconnectAfterChunks?: number;
  /**
   * A 200 whose body (or first content event) is broken (corrupt.ts): `json` cut in half, `empty` nothing, `types`
   * every value of the wrong JSON type, `garbage` an HTML page, `huge` padded by `hugeBytes`.
   */
  malformed?: Malformed;
  /** Size of the padding of `malformed: "huge"` (default 4 MiB). */
  hugeBytes?: number;
  /** Number of content tokens (= chunks) of generated replies; default 12. */
  completionTokens?: number;
  /** Fixed reply text instead of generated text. */
  content?: string;
  /** With `content`: stream it in chunks of this many characters (instead of word by word), e.g. to split a marker. */
  chunkChars?: number;
  /** Force (true) or forbid (false) a tool call when the request has tools; absent = automatic. */
  toolCall?: boolean;
  /** The tool a call picks when the request has it (default: the one `tool_choice` names, else the first tool). */
  toolName?: string;
  /** Report this many cached prompt tokens. */
  cachedTokens?: number;
  /** Report this many reasoning tokens (also counted in completion tokens). */
  reasoningTokens?: number;
  /** Model name echoed in responses (default: the request's model). */
  model?: string;
  /** Known model ids: listed by `GET /models`; other requested models get 404 model_not_found. */
  models?: string[];
  /** Report this many prompt tokens written to the provider's cache (Anthropic `cache_creation_input_tokens`). */
  cacheWriteTokens?: number;
  /** Video jobs (video.ts): time (ms) a job created now takes to finish upstream; default 0. */
  videoJobMs?: number;
  /** Video jobs: a job created now fails upstream (after `videoJobMs`) with this message. */
  videoFail?: string;
  /** Video jobs: size in bytes of the generated (fake MP4) video; default 2048. */
  videoBytes?: number;
  /** Images (OpenAI's images API, images.ts): size in bytes of each generated PNG (padded); default: the bare 8×8 PNG. */
  imageBytes?: number;
  /** API keys (Bearer, `x-api-key`, `x-goog-api-key`, `api-key`) this provider refuses with 401, as a revoked key is. */
  rejectKeys?: string[];
  /** Vertex AI's token endpoint (`/token`): lifetime, in seconds, of the access tokens it issues (default 3599). */
  tokenExpiresIn?: number;
}

export type KnobName = keyof Knobs;

/** A knob update: `null` (or `undefined`) removes the knob. */
export type KnobPatch = { [K in KnobName]?: Knobs[K] | null };

type Kind = 'ms' | 'count' | 'status' | 'bool' | 'string' | 'malformed' | 'list';

const SPEC: { readonly [K in KnobName]-?: Kind } = {
  latencyMs: 'ms',
  ttftMs: 'ms',
  tokensPerSecond: 'ms',
  chunkGapMs: 'ms',
  burstChunks: 'count',
  errorStatus: 'status',
  retryAfter: 'ms',
  errorAfterChunks: 'count',
  failTimes: 'count',
  hang: 'bool',
  disconnectAfterChunks: 'count',
  malformed: 'malformed',
  hugeBytes: 'count',
  completionTokens: 'count',
  content: 'string',
  chunkChars: 'count',
  toolCall: 'bool',
  toolName: 'string',
  cachedTokens: 'count',
  reasoningTokens: 'count',
  model: 'string',
  models: 'list',
  cacheWriteTokens: 'count',
  videoJobMs: 'ms',
  videoFail: 'string',
  videoBytes: 'count',
  imageBytes: 'count',
  rejectKeys: 'list',
  tokenExpiresIn: 'count',
};

export const KNOB_NAMES = Object.keys(SPEC) as KnobName[];

/** `latencyMs` → `x-sim-latency-ms`. */
export function knobHeader(name: KnobName): string {
  return 'x-sim-' + name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

const HEADER_TO_KNOB = new Map<string, KnobName>(KNOB_NAMES.map((k) => [knobHeader(k), k]));

export class KnobError extends Error {
  override name = 'KnobError';
}

/** Validate one knob value (already typed, e.g. from JSON). Throws `KnobError`. */
function checkValue(name: KnobName, v: unknown): unknown {
  const bad = (want: string): never => {
    throw new KnobError(`knob ${name}: expected ${want}, got ${JSON.stringify(v)}`);
  };
  switch (SPEC[name]) {
    case 'ms':
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : bad('a number >= 0');
    case 'count':
      return Number.isInteger(v) && (v as number) >= 0 ? v : bad('an integer >= 0');
    case 'status':
      return Number.isInteger(v) && (v as number) >= 400 && (v as number) <= 599 ? v : bad('an HTTP status 400-599');
    case 'bool':
      return typeof v === 'boolean' ? v : bad('a boolean');
    case 'string':
      return typeof v === 'string' ? v : bad('a string');
    case 'malformed':
      return (MALFORMED_KINDS as readonly unknown[]).includes(v) ? v : bad(MALFORMED_KINDS.map((k) => `"${k}"`).join(', '));
    case 'list':
      return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : bad('an array of strings');
  }
}

/** Validate a knob object (control API body or `setKnobs` argument). Throws `KnobError`. */
export function parseKnobs(input: unknown): KnobPatch {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new KnobError('knobs must be a JSON object');
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (!(k in SPEC)) throw new KnobError(`unknown knob ${k}; known: ${KNOB_NAMES.join(', ')}`);
    out[k] = v === null || v === undefined ? null : checkValue(k as KnobName, v);
  }
  return out as KnobPatch;
}

/** New knob object = base with the patch applied (`null`/`undefined` values remove knobs). */
export function applyPatch(base: Knobs, patch: KnobPatch): Knobs {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined) delete out[k];
    else out[k] = v;
  }
  return out as Knobs;
}

/** Convert a header string to the knob's type. Throws `KnobError`. */
function fromHeader(name: KnobName, raw: string): unknown {
  const s = raw.trim();
  switch (SPEC[name]) {
    case 'ms':
    case 'count':
    case 'status':
      return checkValue(name, s === '' ? NaN : Number(s));
    case 'bool':
      if (s === 'true' || s === '1' || s === 'yes') return true;
      if (s === 'false' || s === '0' || s === 'no') return false;
      return checkValue(name, s);
    case 'string':
      return raw;
    case 'malformed':
      return checkValue(name, s);
    case 'list':
      return s.split(',').map((x) => x.trim()).filter(Boolean);
  }
}

/**
 * Knob overrides carried by `x-sim-<knob-kebab>` request headers, or
 * `undefined` when there are none (the common, allocation-free case).
 * Unknown `x-sim-*` headers are ignored. Throws `KnobError` on a bad value.
 */
export function headerKnobs(headers: IncomingHttpHeaders): Knobs | undefined {
  let out: Record<string, unknown> | undefined;
  for (const h in headers) {
    if (h.length < 7 || !h.startsWith('x-sim-')) continue;
    const name = HEADER_TO_KNOB.get(h);
    if (name === undefined) continue;
    const raw = headers[h];
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    (out ??= {})[name] = fromHeader(name, value);
  }
  return out as Knobs | undefined;
}

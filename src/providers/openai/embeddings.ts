/**
 * OpenAI Embeddings protocol (`POST {base}/embeddings`; OpenAI and every compatible server: Mistral, Together,
 * Fireworks, DeepInfra, vLLM, Ollama, llama.cpp, …): the upstream request body, and the answer checked and normalized.
 *
 * - Body: the caller's fields pass through (unknown ones included, as on the chat path) with the endpoint's upstream
 *   model id; gateway-only fields (`provider`) are removed; `dimensions` is sent as asked (routing has already skipped
 *   endpoints without it); `encoding_format`, `input_type` and `user` are sent only to endpoints that list them in
 *   `supported_parameters` — other optional parameters are dropped and reported.
 * - Answer: must be a list of exactly one vector per input, each an array of numbers or OpenAI's base64 form (float32
 *   little-endian). Vectors are delivered in the format the caller asked for, whatever the upstream sent: a server
 *   that ignores `encoding_format` (or an endpoint not sent it) is converted here. When the caller asked for
 *   `dimensions`, every vector must have that length; otherwise the answer is refused as invalid (502, and the next
 *   endpoint is tried) rather than delivered with the wrong size.
 */
import { endianness } from 'node:os';
import type { EndpointDef, ProviderDef } from '../../core/catalog-types.js';
import { chatHeaders, openaiError, providerUrl } from './chat.js';
import { invalidResponse, parseJsonObject, tokenCount } from './ir-upstream.js';
import { checkEmbeddingsResponse } from './schemas.js';

export type EmbeddingFormat = 'float' | 'base64';
export type Embedding = number[] | string;

/** Parameters the gateway may drop for an endpoint that does not list them (never `dimensions`: see above). */
export const DROPPABLE_EMBEDDING_PARAMETERS = ['encoding_format', 'input_type', 'user'] as const;

/** Fields of the gateway's embeddings body that are not the upstream's. */
const GATEWAY_FIELDS = new Set(['provider']);

export const embeddingsUrl = providerUrl('embeddings');

export interface EmbeddingsUpstreamRequest {
  req: { url: URL; headers: Record<string, string>; body: string };
  /** Parameters the caller set that this endpoint does not take (not sent). */
  dropped: string[];
}

export function buildEmbeddingsRequest(body: Record<string, unknown>, endpoint: EndpointDef, provider: ProviderDef, apiKey: string | null): EmbeddingsUpstreamRequest {
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const k in body) {
    const v = body[k];
    if (v === undefined || GATEWAY_FIELDS.has(k)) continue;
    if ((DROPPABLE_EMBEDDING_PARAMETERS as readonly string[]).includes(k) && !endpoint.supported_parameters.includes(k)) {
      if (v !== null) dropped.push(k);
      continue;
    }
    out[k] = v;
  }
  out.model = endpoint.upstreamModel;
  return { req: { url: embeddingsUrl(provider), headers: chatHeaders(provider, apiKey, false), body: JSON.stringify(out) }, dropped };
}

export const parseEmbeddingsError = openaiError;

const LITTLE_ENDIAN = endianness() === 'LE';

/** OpenAI's base64 form of a vector (float32 little-endian bytes). */
export function encodeBase64(v: readonly number[]): string {
  const f = Float32Array.from(v);
  if (LITTLE_ENDIAN) return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
  const buf = Buffer.alloc(f.length * 4);
  for (let i = 0; i < f.length; i++) buf.writeFloatLE(f[i], i * 4);
  return buf.toString('base64');
}

/** The numbers of a base64 vector; null when the text is not a whole number of float32 values. */
export function decodeBase64(s: string): number[] | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  const buf = Buffer.from(s, 'base64');
  if (buf.length % 4 !== 0) return null;
  const out = new Array<number>(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/** Length of a vector in either form (base64: its decoded byte length / 4). */
function lengthOf(e: Embedding): number {
  if (Array.isArray(e)) return e.length;
  const pad = e.endsWith('==') ? 2 : e.endsWith('=') ? 1 : 0;
  return ((e.length / 4) * 3 - pad) / 4;
}

export interface ParsedEmbeddings {
  /** One vector per input, in input order, in the format asked for. */
  vectors: Embedding[];
  /** The upstream's `usage.prompt_tokens`, or null when it reported none. */
  promptTokens: number | null;
  /** Any other usage fields the upstream reported (kept in the answer). */
  rawUsage: Record<string, unknown> | null;
  upstreamId: string | null;
}

const invalid = (message: string, raw: unknown) => invalidResponse(`Provider returned an invalid response (${message})`, raw);

/**
 * The upstream's answer, checked against the request (`inputs` vectors, of `dimensions` each when asked) and converted
 * to `format`. Throws UpstreamError (502) for anything else, and for an upstream `{ error }` body answered with 200.
 */
export function parseEmbeddings(text: string, want: { inputs: number; format: EmbeddingFormat; dimensions: number | null }): ParsedEmbeddings {
  const o = parseJsonObject(text) as { data?: unknown; usage?: unknown; id?: unknown; error?: unknown };
  if (o.error && !Array.isArray(o.data)) throw openaiError(502, text, {});
  const data = checkEmbeddingsResponse(o).data;
  if (data.length !== want.inputs) throw invalid(`${data.length} embeddings for ${want.inputs} inputs`, null);
  const vectors = new Array<Embedding>(want.inputs);
  let seen = 0;
  for (let i = 0; i < data.length; i++) {
    const item = data[i] as { index?: unknown; embedding?: unknown } | null;
    const index = typeof item?.index === 'number' ? item.index : i;
    if (!Number.isInteger(index) || index < 0 || index >= want.inputs || vectors[index] !== undefined) throw invalid(`embedding index ${String(item?.index)}`, null);
    let e = item?.embedding as unknown;
    if (typeof e === 'string') {
      if (want.format === 'float') {
        const decoded = decodeBase64(e);
        if (!decoded) throw invalid('an embedding is not base64 float32', null);
        e = decoded;
      }
    } else {
      // Numbers (the schema checked the types); JSON has no Infinity or NaN.
      if (want.format === 'base64') e = encodeBase64(e as number[]);
    }
    const v = e as Embedding;
    if (lengthOf(v) === 0) throw invalid('an empty embedding', null);
    if (want.dimensions !== null && lengthOf(v) !== want.dimensions) throw invalid(`${lengthOf(v)} dimensions where ${want.dimensions} were asked for`, null);
    vectors[index] = v;
    seen++;
  }
  if (seen !== want.inputs) throw invalid('missing embeddings', null);
  const usage = o.usage && typeof o.usage === 'object' && !Array.isArray(o.usage) ? (o.usage as Record<string, unknown>) : null;
  // OpenAI reports prompt_tokens; some compatible servers (Voyage) only total_tokens, which for embeddings is the same.
  const prompt = usage ? (tokenCount(usage.prompt_tokens) ?? tokenCount(usage.total_tokens)) : null;
  return { vectors, promptTokens: prompt, rawUsage: usage, upstreamId: typeof o.id === 'string' ? o.id : null };
}

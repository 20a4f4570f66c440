/**
 * Simulated OpenAI Embeddings API (under `/<provider>/…` like the other protocols):
 *
 *   POST /v1/embeddings   `{ model, input, dimensions?, encoding_format?, user? }` →
 *                         `{ object: "list", data: [{ object: "embedding", index, embedding }], model, usage }`
 *
 * Vectors are deterministic (`simEmbedding`, exported for tests): for each input, `dimensions` (default
 * `SIM_EMBEDDING_DIMENSIONS`) floats drawn from a generator seeded by the input's text (or token ids) and the model,
 * normalized to length 1, each rounded to a float32 as OpenAI's are. `encoding_format: "base64"` answers each vector as
 * the base64 of its float32 little-endian bytes, as OpenAI does.
 * Usage: `prompt_tokens` = `total_tokens` = the sum over inputs of ceil(characters / 4), or the number of token ids.
 *
 * Validation, as OpenAI's: `model` and `input` required; `input` a non-empty string, a list of 1–2048 non-empty strings,
 * a list of token ids or a list of such lists; `dimensions` a positive integer (≤ the model's size: 3072 here);
 * `encoding_format` `float` or `base64`. Anything else is a 400 in OpenAI's envelope.
 * The request header `x-sim-embedding-format` (also settable as a provider header in a catalog) forces the format of the
 * answer (`float` or `base64`) whatever was asked — a server that ignores `encoding_format`; `x-sim-embedding-dimensions`
 * forces the vector size — a server that ignores `dimensions`; `x-sim-embedding-usage: none` leaves `usage` out — a
 * server that reports no token count. The usual knobs (`latencyMs`, `errorStatus`, `failTimes`,
 * `retryAfter`, `hang`, `malformed`) apply as to any JSON answer.
 */
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply } from './protocol.js';
import { hash32, prng, tokensOfChars } from './text.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const SIM_EMBEDDING_DIMENSIONS = 1536;
const MAX_DIMENSIONS = 3072;
const MAX_INPUTS = 2048;
export const EMBEDDING_FORMAT_HEADER = 'x-sim-embedding-format';
export const EMBEDDING_DIMENSIONS_HEADER = 'x-sim-embedding-dimensions';
export const EMBEDDING_USAGE_HEADER = 'x-sim-embedding-usage';

/** The simulator's vector for one input (text or token ids) of `model`: unit length, float32 values. */
export function simEmbedding(input: string | number[], model: string, dimensions = SIM_EMBEDDING_DIMENSIONS): number[] {
  const seedText = typeof input === 'string' ? input : input.join(',');
  const next = prng(hash32(`${model}\u0000${seedText}`));
  const v = new Float64Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    v[i] = (next() / 4294967296) * 2 - 1;
    norm += v[i] * v[i];
  }
  norm = Math.sqrt(norm) || 1;
  return Array.from(Float32Array.from(v, (x) => x / norm));
}

/** Tokens of one input, as the simulator counts them. */
export function simEmbeddingTokens(input: string | number[]): number {
  return typeof input === 'string' ? tokensOfChars(input.length) : input.length;
}

/** A vector as OpenAI's base64 form: float32 little-endian bytes. */
export function float32Base64(v: readonly number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4);
  return buf.toString('base64');
}

const invalid = (ctx: EndpointContext, message: string, param: string | null, code: string | null = 'invalid_value'): JsonReply =>
  openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code });

const isTokenList = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && (t as number) >= 0);

/** The inputs of a request, or an error message naming what is wrong. */
function inputsOf(input: unknown): Array<string | number[]> | string {
  if (typeof input === 'string') return input.length > 0 ? [input] : "'$.input' is invalid: it must not be empty.";
  if (!Array.isArray(input) || input.length === 0) return "'$.input' is invalid: expected a string, a list of strings, a list of token ids or a list of lists of token ids.";
  if (input.length > MAX_INPUTS) return `'$.input' is invalid: at most ${MAX_INPUTS} inputs per request.`;
  if (input.every((s) => typeof s === 'string')) {
    const empty = (input as string[]).findIndex((s) => s.length === 0);
    return empty >= 0 ? `'$.input[${empty}]' is invalid: it must not be empty.` : (input as string[]);
  }
  if (isTokenList(input)) return [input];
  if (input.every(isTokenList)) return input as number[][];
  return "'$.input' is invalid: expected a string, a list of strings, a list of token ids or a list of lists of token ids.";
}

export function embeddings(ctx: EndpointContext): Reply {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'We could not parse the JSON body of your request.', null, null);
  if (typeof b.model !== 'string' || b.model === '') return invalid(ctx, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (b.input === undefined) return invalid(ctx, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  const inputs = inputsOf(b.input);
  if (typeof inputs === 'string') return invalid(ctx, inputs, 'input');
  let dimensions = SIM_EMBEDDING_DIMENSIONS;
  if (b.dimensions !== undefined && b.dimensions !== null) {
    if (!Number.isInteger(b.dimensions) || (b.dimensions as number) < 1 || (b.dimensions as number) > MAX_DIMENSIONS) {
      return invalid(ctx, `Invalid 'dimensions': expected an integer between 1 and ${MAX_DIMENSIONS}.`, 'dimensions');
    }
    dimensions = b.dimensions as number;
  }
  const forcedDims = Number(ctx.headers[EMBEDDING_DIMENSIONS_HEADER]);
  if (Number.isInteger(forcedDims) && forcedDims > 0) dimensions = forcedDims;
  const asked = b.encoding_format ?? 'float';
  if (asked !== 'float' && asked !== 'base64') return invalid(ctx, `Invalid value: '${String(asked)}'. Supported values are: 'float' and 'base64'.`, 'encoding_format');
  const forced = ctx.headers[EMBEDDING_FORMAT_HEADER];
  const format = forced === 'float' || forced === 'base64' ? forced : asked;
  let tokens = 0;
  const data = inputs.map((input, index) => {
    tokens += simEmbeddingTokens(input);
    const v = simEmbedding(input, b.model as string, dimensions);
    return { object: 'embedding', index, embedding: format === 'base64' ? float32Base64(v) : v };
  });
  const usage = ctx.headers[EMBEDDING_USAGE_HEADER] === 'none' ? undefined : { prompt_tokens: tokens, total_tokens: tokens };
  const body = JSON.stringify({ object: 'list', data, model: b.model, usage });
  return { kind: 'json', status: 200, body, headers: { 'content-type': 'application/json' }, chunks: 1 };
}

export const embeddingEndpoints: Endpoint[] = [{ method: 'POST', path: '/v1/embeddings', protocol: openaiProtocol, modelCall: true, handle: embeddings }];

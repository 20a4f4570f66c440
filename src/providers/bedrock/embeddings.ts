/**
 * Embeddings on Amazon Bedrock through InvokeModel (docs/clouds.md): `POST /model/{modelId}/invoke`, signed like
 * Converse (auth.ts). The body is the model family's own:
 *
 * - Cohere Embed (`cohere.embed-*`): `{texts, input_type, embedding_types: ["float"]}` → `{id, embeddings: {float:
 *   [[…]]}}`; up to 96 texts per call; `input_type` is the request's (`search_query`, `search_document`,
 *   `classification`, `clustering`), `search_document` by default.
 * - Amazon Titan Text Embeddings (`amazon.titan-embed-*`): `{inputText, dimensions?, normalize: true}` →
 *   `{embedding: […], inputTextTokenCount}`; one text per call (`maxInputs` is 1: the service routes a batch elsewhere).
 *
 * Inputs must be text (token-id arrays are OpenAI's). The answer is checked (one vector per input, the dimensions
 * asked) and converted to the client's format (float, or base64 float32).
 */
import type { EndpointDef, ProviderDef } from '../../core/catalog-types.js';
import { UpstreamError } from '../../core/provider-errors.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const COHERE_INPUT_TYPES = new Set(['search_query', 'search_document', 'classification', 'clustering']);

export type BedrockEmbeddingFamily = 'cohere' | 'titan';

/** The model family of an upstream model id (an inference profile's region prefix such as `us.` is skipped). */
export function embeddingFamily(modelId: string): BedrockEmbeddingFamily | null {
  const id = modelId.replace(/^(us|eu|apac|global)\./, '');
  if (id.startsWith('cohere.embed')) return 'cohere';
  if (id.startsWith('amazon.titan-embed')) return 'titan';
  return null;
}

/** Inputs one call of an endpoint takes (Titan: one). */
export function bedrockMaxInputs(endpoint: EndpointDef): number {
  return embeddingFamily(endpoint.upstreamModel) === 'titan' ? 1 : 96;
}

const refused = (message: string) => new UpstreamError(400, message, 'invalid_request', null, null);
const invalid = (message: string, raw: unknown) => new UpstreamError(502, `Provider returned an invalid response (${message})`, 'provider_unavailable', 200, raw);

export function buildBedrockEmbeddings(body: Obj, endpoint: EndpointDef, provider: ProviderDef): { req: { url: URL; headers: Record<string, string>; body: string }; dropped: string[] } {
  const family = embeddingFamily(endpoint.upstreamModel);
  if (!family) throw refused(`${endpoint.upstreamModel} is not a Bedrock embeddings model this gateway speaks (cohere.embed-*, amazon.titan-embed-*)`);
  const inputs = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : [];
  if (!inputs.every((t): t is string => typeof t === 'string')) throw refused('Bedrock embeddings take text inputs only (not token ids)');
  const dropped: string[] = [];
  let out: Obj;
  if (family === 'cohere') {
    out = { texts: inputs, input_type: 'search_document', embedding_types: ['float'] };
    if (typeof body.input_type === 'string' && COHERE_INPUT_TYPES.has(body.input_type)) out.input_type = body.input_type;
    else if (body.input_type !== undefined && body.input_type !== null) dropped.push('input_type');
  } else {
    if (inputs.length !== 1) throw refused('Titan embeddings take one input per request');
    out = { inputText: inputs[0], normalize: true };
    if (typeof body.dimensions === 'number') out.dimensions = body.dimensions;
    if (body.input_type !== undefined && body.input_type !== null) dropped.push('input_type');
  }
  if (body.user !== undefined && body.user !== null) dropped.push('user');
  const url = new URL(`${provider.baseUrl}/model/${encodeURIComponent(endpoint.upstreamModel)}/invoke`);
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...provider.headers };
  return { req: { url, headers, body: JSON.stringify(out) }, dropped };
}

function float32Base64(v: readonly number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4);
  return buf.toString('base64');
}

const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** A 2xx InvokeModel answer as the embeddings service reads every wire's answer. */
export function parseBedrockEmbeddings(text: string, want: { inputs: number; format: 'float' | 'base64'; dimensions: number | null }) {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw invalid('not JSON', text.slice(0, 200));
  }
  if (!isObj(o)) throw invalid('not an object', o);
  let vectors: unknown[];
  let promptTokens: number | null = null;
  if ('embedding' in o) {
    vectors = [o.embedding];
    if (typeof o.inputTextTokenCount === 'number') promptTokens = o.inputTextTokenCount;
  } else {
    const e = o.embeddings;
    vectors = isObj(e) && Array.isArray(e.float) ? e.float : Array.isArray(e) ? e : [];
  }
  if (vectors.length !== want.inputs) throw invalid(`${vectors.length} embeddings for ${want.inputs} inputs`, null);
  const out = vectors.map((v, i) => {
    if (!isVector(v)) throw invalid(`embedding ${i} is not a vector of numbers`, null);
    if (want.dimensions !== null && v.length !== want.dimensions) throw invalid(`embedding ${i} has ${v.length} dimensions, not ${want.dimensions}`, null);
    return want.format === 'base64' ? float32Base64(v) : v;
  });
  return { vectors: out, promptTokens, rawUsage: null, upstreamId: typeof o.id === 'string' ? o.id : null };
}

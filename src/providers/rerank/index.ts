/**
 * Rerank protocols: request building and answer parsing for the two shapes servers speak.
 *
 * - `jina` — `POST {base}/rerank` `{model, query, documents, top_n, return_documents}` →
 *   `{results: [{index, relevance_score, document?}], usage: {total_tokens}}`: Jina, vLLM, Infinity, text-embeddings-
 *   inference-style servers and most self-hosted rerankers. Documents go as given (strings, or `{text, image}`).
 * - `cohere` — Cohere's v2 `POST {base}/rerank` `{model, query, documents: string[], top_n}` →
 *   `{id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}`. Text documents only.
 * - `voyage` — Voyage AI's `POST {base}/rerank` `{model, query, documents: string[], top_k}` →
 *   `{object: "list", data: [{index, relevance_score}], usage: {total_tokens}}`. Text documents only.
 *
 * Either way the answer is checked (indexes within the documents, each once, finite scores) and handed over as
 * `{index, score}` pairs with the usage the provider reported; the service orders them and echoes the documents.
 */
import type { UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import type { EndpointDef, ProviderDef, RerankProtocol } from '../../core/catalog-types.js';
import { chatHeaders, openaiError, providerUrl } from '../openai/chat.js';
import { invalidResponse, parseJsonObject, tokenCount } from '../openai/ir-upstream.js';
import { checkCohereRerank, checkJinaRerank, checkVoyageRerank } from './schemas.js';

/** A document as the caller sent it: text, or a structured `{text?, image?}`. */
export type RerankDocument = string | { text?: string; image?: string };

export interface RerankInput {
  query: string;
  documents: RerankDocument[];
  top_n?: number;
}

export interface ParsedRerank {
  /** `index` into the documents, and its relevance score. */
  results: Array<{ index: number; score: number }>;
  totalTokens: number | null;
  searchUnits: number | null;
  upstreamId: string | null;
}

export interface RerankAdapter {
  /** Whether the endpoint can take these documents (cohere: text only). */
  accepts(documents: RerankDocument[]): boolean;
  build(input: RerankInput, endpoint: EndpointDef, provider: ProviderDef, apiKey: string | null): { url: URL; headers: Record<string, string>; body: string; dropped: string[] };
  parse(text: string, documents: number): ParsedRerank;
  parseError: typeof openaiError;
  /** Signs the built request (Bedrock's SigV4), when the protocol authenticates that way. */
  authorize?(req: UpstreamHttpRequest, ctx: UpstreamContext): Promise<UpstreamHttpRequest>;
}

const rerankUrl = providerUrl('rerank');
const headers = (provider: ProviderDef, apiKey: string | null) => chatHeaders(provider, apiKey, false);
const invalid = (what: string, raw: unknown) => invalidResponse(`Provider returned an invalid response (${what})`, raw);

/** `[{index, relevance_score}]` (types checked by the schema) checked against the number of documents. */
function results(list: Array<{ index: number; relevance_score: number }>, documents: number, raw: unknown): ParsedRerank['results'] {
  const seen = new Set<number>();
  return list.map(({ index, relevance_score: score }) => {
    if (index < 0 || index >= documents || seen.has(index)) throw invalid(`result index ${index}`, raw);
    seen.add(index);
    return { index, score };
  });
}

const jina: RerankAdapter = {
  accepts: () => true,
  build(input, endpoint, provider, apiKey) {
    const supported = endpoint.supported_parameters.includes('top_n');
    const body: Record<string, unknown> = { model: endpoint.upstreamModel, query: input.query, documents: input.documents, return_documents: false };
    if (input.top_n !== undefined && supported) body.top_n = input.top_n;
    return { url: rerankUrl(provider), headers: headers(provider, apiKey), body: JSON.stringify(body), dropped: input.top_n !== undefined && !supported ? ['top_n'] : [] };
  },
  parse(text, documents) {
    const o = checkJinaRerank(parseJsonObject(text));
    const usage = o.usage ?? {};
    return { results: results(o.results, documents, o), totalTokens: tokenCount(usage.total_tokens) ?? tokenCount(usage.prompt_tokens), searchUnits: null, upstreamId: o.id ?? null };
  },
  parseError: openaiError,
};

/** Text-only APIs (Cohere, Voyage): documents as strings; `top_n` under the API's own name. */
const textOnly = (documents: RerankDocument[]) => documents.every((d) => typeof d === 'string' || (typeof d.text === 'string' && d.image === undefined));
function textOnlyBuild(topField: string): RerankAdapter['build'] {
  return (input, endpoint, provider, apiKey) => {
    const body: Record<string, unknown> = { model: endpoint.upstreamModel, query: input.query, documents: input.documents.map((d) => (typeof d === 'string' ? d : (d.text ?? ''))) };
    if (input.top_n !== undefined) body[topField] = input.top_n;
    return { url: rerankUrl(provider), headers: headers(provider, apiKey), body: JSON.stringify(body), dropped: [] };
  };
}

const cohere: RerankAdapter = {
  accepts: textOnly,
  build: textOnlyBuild('top_n'),
  parse(text, documents) {
    const o = checkCohereRerank(parseJsonObject(text));
    return { results: results(o.results, documents, o), totalTokens: null, searchUnits: tokenCount(o.meta?.billed_units?.search_units), upstreamId: o.id ?? null };
  },
  parseError: openaiError,
};

const voyage: RerankAdapter = {
  accepts: textOnly,
  build: textOnlyBuild('top_k'),
  parse(text, documents) {
    const o = checkVoyageRerank(parseJsonObject(text));
    return { results: results(o.data, documents, o), totalTokens: tokenCount(o.usage?.total_tokens), searchUnits: null, upstreamId: null };
  },
  parseError: openaiError,
};

/** The rerank shapes of this folder (Bedrock's Rerank API is in providers/bedrock, composed by the registry). */
export const RERANK_ADAPTERS: Record<Exclude<RerankProtocol, 'bedrock-rerank'>, RerankAdapter> = { jina, cohere, voyage };

/** The rerank API of an endpoint (its own `rerank_protocol`, else `jina`). */
export const rerankProtocolOf = (e: EndpointDef): RerankProtocol => e.rerank_protocol ?? 'jina';

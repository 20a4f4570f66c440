/**
 * Rerank on Amazon Bedrock (docs/clouds.md, docs/rerank.md): the Agents for Amazon Bedrock runtime's Rerank API, the
 * way AWS documents calling a reranker model directly (docs.aws.amazon.com/bedrock/latest/userguide/rerank-use.html;
 * API: docs.aws.amazon.com/bedrock/latest/APIReference/API_agent-runtime_Rerank.html). One shape for every Bedrock
 * reranker (Amazon Rerank 1.0, Cohere Rerank 3.5):
 *
 *   POST https://bedrock-agent-runtime.<region>.amazonaws.com/rerank      (SigV4, service `bedrock`)
 *   {queries: [{type: "TEXT", textQuery: {text}}],
 *    sources: [{type: "INLINE", inlineDocumentSource: {type: "TEXT", textDocument: {text}}}, …],
 *    rerankingConfiguration: {type: "BEDROCK_RERANKING_MODEL",
 *      bedrockRerankingConfiguration: {modelConfiguration: {modelArn}, numberOfResults?}}}
 *   → {results: [{index, relevanceScore, document?}], nextToken?}
 *
 * The host is the provider's runtime host with `bedrock-agent-runtime` for `bedrock-runtime` (another base URL — a
 * VPC endpoint, the simulator — is used as it is). `modelArn` is
 * `arn:aws:bedrock:<region>::foundation-model/<upstream_model>` (an upstream model that is already an ARN goes as
 * it is). Documents are text (the API's JSON documents are not the gateway's `{text, image}`), up to 1,000; `top_n`
 * is `numberOfResults` (1–1,000). No usage is reported: the endpoint's `search_unit` price bills one query per 100
 * documents, as AWS prices it.
 */
import { Type } from '@sinclair/typebox';
import type { ProviderDef } from '../../core/catalog-types.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { Opt, wireCheck } from '../wire-schema.js';
import type { RerankAdapter, RerankDocument } from '../rerank/index.js';
import { authorizeBedrock, parseAwsCredentials, regionOf, type AwsCredentials } from './auth.js';
import { bedrockError } from './errors.js';

const RerankResponse = Type.Object({
  results: Type.Array(Type.Object({ index: Type.Integer(), relevanceScore: Type.Number() })),
  nextToken: Opt(Type.String()),
});
const checkRerank = wireCheck(RerankResponse, 'response');

/** The Rerank API's limit on sources. */
export const BEDROCK_RERANK_MAX_DOCUMENTS = 1000;

const AGENT_HOST = /^bedrock-runtime(-fips)?\.([a-z0-9-]+\.amazonaws\.com)$/;

/** The agent runtime's `/rerank` URL for a provider whose base URL is the Bedrock runtime's. */
export function rerankUrl(provider: ProviderDef): URL {
  const url = new URL(`${provider.baseUrl}/rerank`);
  const m = AGENT_HOST.exec(url.hostname);
  if (m) url.hostname = `bedrock-agent-runtime${m[1] ?? ''}.${m[2]}`;
  return url;
}

function credentialsOf(provider: ProviderDef, apiKey: string | null): AwsCredentials | undefined {
  if (!apiKey || provider.cloud?.auth === 'api-key') return undefined;
  try {
    return parseAwsCredentials(apiKey);
  } catch {
    return undefined; // refused with its reason when the request is signed
  }
}

const textOf = (d: RerankDocument) => (typeof d === 'string' ? d : (d.text ?? ''));
const invalid = (message: string, raw: unknown) => new UpstreamError(502, `Provider returned an invalid response (${message})`, 'provider_unavailable', 200, raw);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('not JSON', text.slice(0, 512));
  }
}

export const bedrockRerankAdapter: RerankAdapter = {
  accepts: (documents) => documents.length <= BEDROCK_RERANK_MAX_DOCUMENTS && documents.every((d) => typeof d === 'string' || (typeof d.text === 'string' && d.image === undefined)),
  build(input, endpoint, provider, apiKey) {
    const url = rerankUrl(provider);
    const model = endpoint.upstreamModel;
    const modelArn = model.startsWith('arn:') ? model : `arn:aws:bedrock:${regionOf(provider, url, credentialsOf(provider, apiKey))}::foundation-model/${model}`;
    const config: Record<string, unknown> = { modelConfiguration: { modelArn } };
    if (input.top_n !== undefined) config.numberOfResults = input.top_n;
    const body = {
      queries: [{ type: 'TEXT', textQuery: { text: input.query } }],
      sources: input.documents.map((d) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: textOf(d) } } })),
      rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: config },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'model-gateway/0.1', ...provider.headers };
    return { url, headers, body: JSON.stringify(body), dropped: [] };
  },
  authorize: authorizeBedrock,
  parse(text, documents) {
    const o = checkRerank(parseJson(text));
    const seen = new Set<number>();
    const results = o.results.map(({ index, relevanceScore }) => {
      if (index < 0 || index >= documents || seen.has(index)) throw invalid(`result index ${index}`, o);
      seen.add(index);
      return { index, score: relevanceScore };
    });
    return { results, totalTokens: null, searchUnits: null, upstreamId: null };
  },
  parseError: bedrockError,
};

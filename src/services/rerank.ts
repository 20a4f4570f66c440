/**
 * Rerank (`POST /rerank`, docs/rerank.md): documents ordered by relevance to a query. Policy and limits, routing over
 * the rerank endpoints, attempts with fallbacks, cost and the generation record — the same machinery as embeddings.
 *
 * Decisions:
 * - Results come sorted by relevance (highest first), at most `top_n`, each with the caller's document echoed — even
 *   from a provider that returned them in another order or more of them.
 * - Documents with images go only to endpoints whose API takes them (`jina`-style); others are skipped.
 * - Price: search units × `pricing.search_unit` (Cohere), tokens × `pricing.prompt`, plus `pricing.request`, exactly.
 *   A provider that reports neither tokens nor units on a token-priced endpoint is billed an estimate (4 characters
 *   per token over the query and every document) and the usage says `estimated: true`.
 * - Record: `api_type: "rerank"`, `tokens_prompt` the tokens billed.
 */
import { computeCost, type CostResult } from '../core/pricing.js';
import type { ProviderPreferences } from '../core/provider-prefs.js';
import type { RoutePlan } from '../core/routing.js';
import { badRequest } from '../core/errors.js';
import { rerankAdapter, type RerankDocument } from '../providers/registry.js';
import type { Pricing } from '../core/catalog-types.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { attemptKey } from './byok.js';
import { isRerankModel } from './catalog.js';
import { planRequest, runSingleAnswer } from './single-answer.js';
import { costAsk,  valueTokensBound } from '../core/spend-ask.js';
import type { JsonReply } from './attempts/cache-step.js';

export interface RerankBody {
  model: string;
  query: string;
  documents: RerankDocument[];
  top_n?: number;
  provider?: ProviderPreferences | null;
}

export interface PreparedRerank {
  body: RerankBody;
  plan: RoutePlan;
  estimatedTokens: number;
}

/** Tokens of a rerank request, estimated: 4 characters per token over the query and the documents' text. */
export function estimateRerankTokens(body: Pick<RerankBody, 'query' | 'documents'>): number {
  let chars = body.query.length;
  for (const d of body.documents) chars += typeof d === 'string' ? d.length : (d.text?.length ?? 0);
  return Math.ceil(chars / 4);
}

/** Cost of one rerank: tokens at `prompt`, search units at `search_unit` (the per-unit slot), plus `request`; exact. */
export function rerankCost(pricing: Pricing | null, tokens: number, searchUnits: number): CostResult {
  const p: Pricing | null = pricing ? { ...pricing, image: pricing.search_unit ?? '0' } : null;
  return computeCost(p, { promptTokens: tokens, completionTokens: 0 }, { images: pricing?.search_unit !== undefined ? searchUnits : 0 });
}

export class RerankService {
  constructor(private readonly deps: ApiServiceDeps) {}

  async prepare(body: RerankBody, call: ApiCall): Promise<PreparedRerank> {
    const route = this.deps.catalog.rerankRoute;
    const model = body.model;
    const m = route.models.get(model);
    if (m && !isRerankModel(m)) throw badRequest(`${model} is not a rerank model (its outputs are ${m.architecture.output_modalities.join(', ')})`, { field: 'model', error_type: 'invalid_request' });
    if (body.top_n !== undefined && body.top_n > body.documents.length) body = { ...body, top_n: body.documents.length };
    const { plan } = await planRequest(this.deps, {
      key: call.key,
      route,
      model,
      // An API that cannot take the documents (images on a text-only API) is skipped.
      endpointFilter: (ep) => (rerankAdapter(ep).accepts(body.documents) ? undefined : 'unsupported_parameter'),
      params: body.top_n !== undefined ? ['top_n'] : [],
      provider: body.provider,
    });
    return { body, plan, estimatedTokens: estimateRerankTokens(body) };
  }

  async rerank(p: PreparedRerank, call: ApiCall): Promise<JsonReply> {
    return runSingleAnswer({
      deps: this.deps,
      apiType: 'rerank',
      requested: p.body.model,
      call,
      prepared: p,
      cacheAs: 'rerank',
      input: { api: 'rerank', body: p.body as unknown as Record<string, unknown> },
      // Reserved: the query's and documents' bytes as tokens (an upper bound) and a search unit per 100 documents.
      ask: (a) => {
        const perUnit = a.endpoint.pricing?.search_unit !== undefined;
        const tokens = valueTokensBound([p.body.query, p.body.documents]);
        const cost = rerankCost(a.endpoint.pricing, tokens, perUnit ? Math.ceil(p.body.documents.length / 100) : 0).cost;
        return costAsk(cost, tokens, 'this rerank');
      },
      request: (a) => {
        const adapter = rerankAdapter(a.endpoint);
        const apiKey = attemptKey(this.deps, a);
        const built = adapter.build(p.body, a.endpoint, a.provider, apiKey);
        const ctx = { provider: a.provider, endpoint: a.endpoint, apiKey };
        const authorize = adapter.authorize ? (req: { url: URL; headers: Record<string, string>; body: string }) => adapter.authorize!(req, ctx) : undefined;
        return { ...built, parseError: adapter.parseError, parse: (text: string) => adapter.parse(text, p.body.documents.length), ...(authorize ? { authorize } : {}) };
      },
      served: (id, a, parsed) => {
        const perUnit = a.endpoint.pricing?.search_unit !== undefined;
        // Billed units: what the provider reports; a per-unit endpoint that reports none bills one unit per 100 documents.
        const units = parsed.searchUnits ?? (perUnit ? Math.ceil(p.body.documents.length / 100) : 0);
        const estimated = parsed.totalTokens === null && !perUnit;
        const tokens = parsed.totalTokens ?? (estimated ? p.estimatedTokens : 0);
        const cost = rerankCost(a.endpoint.pricing, tokens, units);
        const ranked = [...parsed.results].sort((x, y) => y.score - x.score).slice(0, p.body.top_n ?? parsed.results.length);
        const usage: Record<string, unknown> = {};
        if (perUnit || parsed.searchUnits !== null) usage.search_units = units;
        usage.total_tokens = tokens;
        usage.cost = cost.cost;
        usage.is_byok = a.byok !== undefined;
        if (estimated) usage.estimated = true;
        const body = {
          id,
          model: a.model,
          provider: a.provider.name,
          results: ranked.map((r) => {
            const d = p.body.documents[r.index];
            return { index: r.index, relevance_score: r.score, document: typeof d === 'string' ? { text: d } : d };
          }),
          usage,
        };
        return { body, promptTokens: tokens, completionTokens: 0, cost: cost.cost, upstreamId: parsed.upstreamId };
      },
    });
  }
}

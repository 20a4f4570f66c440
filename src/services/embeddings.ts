/**
 * Embeddings (`POST /embeddings`, docs/embeddings.md): policy and limits, routing over the embedding endpoints,
 * upstream attempts with fallbacks, the answer normalized to the format asked for, cost and the generation record. The
 * HTTP route only validates and hands over.
 *
 * Decisions:
 * - Routing reuses `planRoute` over `catalog.embeddingRoute` (endpoints of models whose outputs are embeddings), with
 *   the key's organization settings and guardrails applied as for chat and speech (403/404 refusals, budgets) and the
 *   key's own limit (402).
 * - `dimensions` changes what the caller gets back, so it is never dropped: an endpoint that does not list it is
 *   skipped (`unsupported_parameter`), and an answer of another size is refused (502) and the next endpoint tried.
 *   `encoding_format` is honoured by the gateway whatever the endpoint supports (providers/openai/embeddings.ts);
 *   `input_type` and `user` are dropped for endpoints that do not list them (or skip them with
 *   `provider.require_parameters`).
 * - Context: an endpoint is skipped when one input is longer than its context (estimated at 4 characters per token,
 *   as for chat); inputs are embedded separately, so the batch's total does not count.
 * - Price: prompt tokens × `pricing.prompt`, plus `pricing.request`, exactly (src/core/pricing.ts). The tokens are the
 *   provider's `usage.prompt_tokens`; a provider that reports none is billed the estimate, never $0.
 * - Record: `api_type: "embeddings"`, `tokens_prompt`, not streamed, `finish_reason: "stop"` on success.
 */
import { computeCost, type CostResult, type TokenUsage } from '../core/pricing.js';
import type { ProviderPreferences } from '../core/provider-prefs.js';
import type { Attempt, RoutePlan } from '../core/routing.js';
import { badRequest, HttpError } from '../core/errors.js';
import { embeddingsWire, type Embedding, type EmbeddingFormat } from '../providers/registry.js';
import { isEmbeddingModel } from './catalog.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { attemptKey } from './byok.js';
import { planRequest, runSingleAnswer } from './single-answer.js';
import { fixedAsk,  valueTokensBound } from '../core/spend-ask.js';
import type { JsonReply } from './attempts/cache-step.js';

/** The embeddings request body (schema-validated by the route). Unknown fields pass through to the upstream. */
export interface EmbeddingsBody {
  model: string;
  input: unknown;
  dimensions?: number;
  encoding_format?: EmbeddingFormat;
  input_type?: string;
  user?: string;
  provider?: ProviderPreferences | null;
  [k: string]: unknown;
}

export interface PreparedEmbeddings {
  body: EmbeddingsBody;
  format: EmbeddingFormat;
  /** Number of inputs (one vector each). */
  inputs: number;
  /** Tokens of the whole request, estimated (4 characters per token, or the token ids): billed when the provider reports none. */
  estimatedTokens: number;
  plan: RoutePlan;
  /** Ends the request's in-flight count against the key's limit (idempotent; called by the record and the route). */
}

/**
 * The inputs of a request as the gateway counts them: how many vectors it asks for, the estimated tokens of the whole
 * request and of its longest input. Strings count ceil(characters / 4); token-id lists their length; multimodal
 * inputs their text parts (other parts are not estimated).
 */
export function measureInputs(input: unknown): { count: number; tokens: number; longest: number } {
  const est = (x: unknown): number => {
    if (typeof x === 'string') return Math.ceil(x.length / 4);
    if (Array.isArray(x)) return x.every((t) => typeof t === 'number') ? x.length : 0;
    if (x && typeof x === 'object') {
      const content = (x as { content?: unknown }).content;
      if (!Array.isArray(content)) return 0;
      let n = 0;
      for (const p of content) if (p && typeof (p as { text?: unknown }).text === 'string') n += Math.ceil((p as { text: string }).text.length / 4);
      return n;
    }
    return 0;
  };
  // One input: a string, or a flat list of token ids. Otherwise a list of inputs.
  const items = typeof input === 'string' || (Array.isArray(input) && input.length > 0 && input.every((t) => typeof t === 'number')) ? [input] : Array.isArray(input) ? input : [input];
  let tokens = 0;
  let longest = 0;
  for (const x of items) {
    const t = est(x);
    tokens += t;
    if (t > longest) longest = t;
  }
  return { count: items.length, tokens, longest };
}

export class EmbeddingsService {
  constructor(private readonly deps: ApiServiceDeps) {}

  // ---- preparation -------------------------------------------------------------------------------

  /** Policy, limits and the route. Throws HttpError (4xx) when the request cannot be served. */
  async prepare(body: EmbeddingsBody, call: ApiCall): Promise<PreparedEmbeddings> {
    const route = this.deps.catalog.embeddingRoute;
    const model = body.model;
    const m = route.models.get(model);
    if (m && !isEmbeddingModel(m)) {
      throw badRequest(`${model} is not an embeddings model (its outputs are ${m.architecture.output_modalities.join(', ')}); GET /embeddings/models lists the embeddings models`, { field: 'model', error_type: 'invalid_request' });
    }
    const format: EmbeddingFormat = body.encoding_format ?? 'float';
    const measured = measureInputs(body.input);

    const wantsDimensions = typeof body.dimensions === 'number';
    const { plan } = await planRequest(this.deps, {
      key: call.key,
      route,
      model,
      // An endpoint that cannot size the vectors is skipped.
      // An endpoint that takes fewer inputs per call than sent (Titan on Bedrock: one) is skipped too.
      endpointFilter: (ep, provider) => {
        if (wantsDimensions && !ep.supported_parameters.includes('dimensions')) return 'unsupported_parameter';
        const max = embeddingsWire(provider).maxInputs?.(ep);
        return max !== undefined && inputCount(body.input) > max ? 'unsupported_parameter' : undefined;
      },
      // Optional parameters the caller set (encoding_format is always honoured by the gateway itself).
      params: (['input_type', 'user'] as const).filter((p) => body[p] !== undefined && body[p] !== null),
      provider: body.provider,
      estimatedPromptTokens: measured.longest,
      adjust: (plan) => {
        if (plan.error?.code === 'constraint_filtered' && wantsDimensions && plan.error.excluded_by?.includes('unsupported_parameter')) {
          plan.error.message = `No endpoint of ${model} can produce ${body.dimensions}-dimension embeddings (dimensions is not supported)${plan.error.excluded_by.length > 1 ? `; other endpoints excluded: ${plan.error.excluded_by.filter((r) => r !== 'unsupported_parameter').join(', ')}` : ''}`;
        }
      },
    });
    return { body, format, inputs: measured.count, estimatedTokens: measured.tokens, plan };
  }

  // ---- the call ----------------------------------------------------------------------------------

  /**
   * Tries the planned endpoints in order until one answers with valid embeddings. Throws HttpError when none did
   * (the route answers it in the envelope).
   */
  async create(p: PreparedEmbeddings, call: ApiCall): Promise<JsonReply> {
    const dimensions = typeof p.body.dimensions === 'number' ? p.body.dimensions : null;
    let bound: number | undefined;
    return runSingleAnswer({
      deps: this.deps,
      apiType: 'embeddings',
      requested: p.body.model,
      call,
      prepared: p,
      cacheAs: 'embeddings',
      input: { api: 'embeddings', body: p.body },
      // Reserved: every input's bytes as tokens (an upper bound, src/core/spend-ask.ts) at the prompt price.
      ask: (a) => fixedAsk(a.endpoint.pricing, { promptTokens: (bound ??= valueTokensBound(p.body.input)), completionTokens: 0 }, undefined, 'these embeddings'),
      request: (a) => {
        const wire = embeddingsWire(a.provider);
        const apiKey = attemptKey(this.deps, a);
        const built = wire.build(p.body, a.endpoint, a.provider, apiKey);
        const authorize = wire.authorize ? (req: { url: URL; headers: Record<string, string>; body: string }) => wire.authorize!(req, { provider: a.provider, endpoint: a.endpoint, apiKey }) : undefined;
        return { ...built.req, dropped: built.dropped, parseError: wire.parseError, parse: (text) => wire.parse(text, { inputs: p.inputs, format: p.format, dimensions }), ...(authorize ? { authorize } : {}) };
      },
      served: (id, a, parsed) => {
        const tokens = parsed.promptTokens ?? p.estimatedTokens;
        const cost = computeCost(a.endpoint.pricing, { promptTokens: tokens, completionTokens: 0 } satisfies TokenUsage);
        const body = this.answer(id, a, parsed.vectors, tokens, cost, parsed.promptTokens === null);
        return { body, promptTokens: tokens, completionTokens: 0, cost: cost.cost, upstreamId: parsed.upstreamId };
      },
    });
  }

  private answer(id: string, a: Attempt, vectors: Embedding[], tokens: number, cost: CostResult, estimated: boolean): Record<string, unknown> {
    // Unknown prices are reported as null, never as $0 (as on chat answers).
    const usage: Record<string, unknown> = {
      prompt_tokens: tokens,
      total_tokens: tokens,
      cost: cost.cost,
      is_byok: a.byok !== undefined,
      cost_details: {
        upstream_inference_prompt_cost: cost.priced ? cost.promptCost : null,
        upstream_inference_completions_cost: cost.priced ? 0 : null,
        upstream_inference_cost: cost.cost,
      },
    };
    if (estimated) usage.estimated = true;
    return {
      id,
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model: a.model,
      provider: a.provider.name,
      usage,
    };
  }
}

/** Inputs of an embeddings body (a string is one). */
function inputCount(input: unknown): number {
  if (!Array.isArray(input)) return 1;
  // A list of token ids is one input; a list of strings or of token-id lists is one per item.
  return input.length > 0 && typeof input[0] === 'number' ? 1 : input.length;
}

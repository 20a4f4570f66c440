/**
 * Rerank models and endpoints the gateway ships (POST /rerank; docs/rerank.md); `shippedCatalog()` adds them.
 *
 * - A model is a rerank model when its `output_modalities` include `rerank`; its endpoints are routed by the rerank
 *   service only, each over its own `rerank_protocol`.
 * - Sources (checked 2026-11): cohere.com/pricing (Rerank 3.5: $2.00 per 1,000 searches; a search is one query over
 *   up to 100 documents) and docs.cohere.com/reference/rerank (v2 API, 4096-token context per query and document).
 *
 * Pure data; no I/O.
 */
import type { EndpointDef, ModelDef } from '../core/catalog-types.js';
import { apiModel, unixDay } from './model-defaults.js';

export const DEFAULT_RERANK_MODELS: ModelDef[] = [
  apiModel(
    {
      id: 'cohere/rerank-v3.5',
      name: 'Cohere: Rerank 3.5',
      created: unixDay('2024-12-02'),
      description: "Cohere's multilingual reranker: documents ordered by relevance to a query; billed per search (up to 100 documents).",
      context_length: 4096,
    },
    { input: ['text'], output: ['rerank'] },
  ),
];

export const DEFAULT_RERANK_ENDPOINTS: EndpointDef[] = [
  {
    model: 'cohere/rerank-v3.5',
    provider: 'cohere',
    tag: 'cohere',
    upstreamModel: 'rerank-v3.5',
    pricing: { prompt: '0', completion: '0', search_unit: '0.002' },
    context_length: 4096,
    max_prompt_tokens: null,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: ['top_n'],
    is_moderated: false,
    supports_implicit_caching: false,
    rerank_protocol: 'cohere',
  },
];

/**
 * Embeddings models and endpoints the gateway ships (POST /embeddings; docs/embeddings.md). Kept apart from the chat
 * lists of default-catalog.ts, whose invariants (completion prices, chat parameters) embeddings do not share;
 * `shippedCatalog()` adds them.
 *
 * - A model is an embeddings model when its `output_modalities` include `embeddings`; its endpoints are routed by the
 *   embeddings service only, over OpenAI's `/embeddings` protocol.
 * - Prices: USD per input token (`prompt`); `completion` is "0" (embeddings produce no tokens).
 * - `supported_parameters`: `dimensions` only where the model can shorten its vectors (text-embedding-3-*).
 *
 * Sources (checked 2026-11): developers.openai.com/api/docs/pricing (embeddings: text-embedding-3-small $0.02,
 * text-embedding-3-large $0.13, text-embedding-ada-002 $0.10 per million tokens) and /guides/embeddings (8192-token
 * inputs; 1536, 3072 and 1536 dimensions; `dimensions` on the third generation only); mistral.ai/pricing (mistral-embed
 * $0.10 per million tokens, 1024 dimensions, 8k context).
 *
 * Pure data; no I/O.
 */
import type { EndpointDef, ModelDef } from '../core/catalog-types.js';
import { apiModel, unixDay as unix } from './model-defaults.js';

function embeddingModel(m: Pick<ModelDef, 'id' | 'name' | 'created' | 'description' | 'context_length'> & { tokenizer: string }): ModelDef {
  const { tokenizer, ...rest } = m;
  return apiModel(rest, { input: ['text'], output: ['embeddings'], tokenizer });
}

/** `perToken`: USD per input token as an exact decimal string (the list price per million ÷ 10^6). */
function embeddingEndpoint(e: { model: string; provider: string; upstreamModel: string; perToken: string; context: number; dimensions: boolean }): EndpointDef {
  return {
    model: e.model,
    provider: e.provider,
    tag: e.provider,
    upstreamModel: e.upstreamModel,
    pricing: { prompt: e.perToken, completion: '0' },
    context_length: e.context,
    max_prompt_tokens: e.context,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: e.dimensions ? ['dimensions', 'encoding_format', 'user'] : ['encoding_format', 'user'],
    is_moderated: false,
    supports_implicit_caching: false,
  };
}

export const DEFAULT_EMBEDDING_MODELS: ModelDef[] = [
  embeddingModel({
    id: 'openai/text-embedding-3-small',
    name: 'OpenAI: Text Embedding 3 Small',
    created: unix('2024-01-25'),
    description: "OpenAI's small third-generation text embedding model: 1536 dimensions, shortenable with `dimensions`.",
    context_length: 8192,
    tokenizer: 'GPT',
  }),
  embeddingModel({
    id: 'openai/text-embedding-3-large',
    name: 'OpenAI: Text Embedding 3 Large',
    created: unix('2024-01-25'),
    description: "OpenAI's most capable text embedding model: 3072 dimensions, shortenable with `dimensions`.",
    context_length: 8192,
    tokenizer: 'GPT',
  }),
  embeddingModel({
    id: 'openai/text-embedding-ada-002',
    name: 'OpenAI: Text Embedding Ada 002',
    created: unix('2022-12-15'),
    description: "OpenAI's second-generation text embedding model: 1536 dimensions.",
    context_length: 8192,
    tokenizer: 'GPT',
  }),
  embeddingModel({
    id: 'mistralai/mistral-embed',
    name: 'Mistral: Mistral Embed',
    created: unix('2023-12-11'),
    description: "Mistral's text embedding model: 1024 dimensions.",
    context_length: 8192,
    tokenizer: 'Mistral',
  }),
];

export const DEFAULT_EMBEDDING_ENDPOINTS: EndpointDef[] = [
  embeddingEndpoint({ model: 'openai/text-embedding-3-small', provider: 'openai', upstreamModel: 'text-embedding-3-small', perToken: '0.00000002', context: 8192, dimensions: true }),
  embeddingEndpoint({ model: 'openai/text-embedding-3-large', provider: 'openai', upstreamModel: 'text-embedding-3-large', perToken: '0.00000013', context: 8192, dimensions: true }),
  embeddingEndpoint({ model: 'openai/text-embedding-ada-002', provider: 'openai', upstreamModel: 'text-embedding-ada-002', perToken: '0.0000001', context: 8192, dimensions: false }),
  embeddingEndpoint({ model: 'mistralai/mistral-embed', provider: 'mistral', upstreamModel: 'mistral-embed', perToken: '0.0000001', context: 8192, dimensions: false }),
];

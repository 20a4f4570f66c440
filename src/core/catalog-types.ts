/**
 * Shared types of the model catalog: providers, models and endpoints.
 * Pure data; no I/O. Prices are decimal strings in USD per token (or per unit).
 */

/** Upstream wire protocols the gateway can speak. */
export type Protocol = 'openai' | 'anthropic' | 'google' | 'openai-responses';

/** How an upstream provider treats prompts sent to it. */
export interface DataPolicy {
  /** Provider may train on prompts. */
  training: boolean;
  /** Provider retains prompts (for any purpose, e.g. abuse monitoring). */
  retainsPrompts: boolean;
  /** Zero data retention: nothing is stored. */
  zdr: boolean;
}

export interface ProviderDef {
  /** Routing slug, e.g. `openai`, `groq`, `together`. */
  slug: string;
  /** Display name, e.g. `OpenAI`. */
  name: string;
  protocol: Protocol;
  /** Base URL including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Literal API key (from the config file). */
  apiKey?: string;
  /** Name of the environment variable holding the API key, e.g. `OPENAI_API_KEY`. */
  apiKeyEnv?: string;
  /** Providers that need no credentials (local vLLM, Ollama, the simulator). */
  noAuth?: boolean;
  /** Extra headers sent on every upstream request. */
  headers?: Record<string, string>;
  dataPolicy: DataPolicy;
  privacyPolicyUrl?: string | null;
  termsOfServiceUrl?: string | null;
  statusPageUrl?: string | null;
  headquarters?: string | null;
  datacenters?: string[] | null;
  /** Timeouts in milliseconds; unset fields take the gateway defaults. */
  timeouts?: Partial<Timeouts>;
}

export interface Timeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  totalMs: number;
}

/** Prices as decimal strings, USD per token (prompt, completion, cache, reasoning) or per unit (request, image). */
export interface Pricing {
  prompt: string;
  completion: string;
  request?: string;
  image?: string;
  /** Price of a prompt token read from the provider's cache. */
  input_cache_read?: string;
  /** Price of a prompt token written to the provider's cache. */
  input_cache_write?: string;
  /** Price of a reasoning token; when absent, reasoning tokens are billed at the completion price. */
  internal_reasoning?: string;
  /** Discount applied to the whole request (0..1). */
  discount?: number;
}

export interface Architecture {
  /** e.g. `text->text`, `text+image->text`. */
  modality: string;
  input_modalities: string[];
  output_modalities: string[];
  /** e.g. `GPT`, `Claude`, `Gemini`, `Llama3`, `Qwen`, `Mistral`, `DeepSeek`, `Other`. */
  tokenizer: string;
  instruct_type: string | null;
}

export interface ReasoningInfo {
  default_effort: string | null;
  default_enabled: boolean;
  mandatory: boolean;
  supported_efforts: string[];
}

export interface ModelDef {
  /** `author/slug`, e.g. `openai/gpt-4o-mini`. */
  id: string;
  /** Dated permaslug, e.g. `openai/gpt-4o-mini-2024-07-18`. */
  canonical_slug: string;
  name: string;
  /** Unix seconds. */
  created: number;
  description: string;
  context_length: number;
  architecture: Architecture;
  /** Null for models without reasoning. */
  reasoning: ReasoningInfo | null;
  knowledge_cutoff: string | null;
  expiration_date: string | null;
  hugging_face_id: string | null;
  default_parameters: Record<string, unknown> | null;
  supported_voices: string[] | null;
}

export interface EndpointDef {
  /** Model id (`author/slug`) this endpoint serves. */
  model: string;
  /** Provider slug. */
  provider: string;
  /** Routing tag, `<provider>` or `<provider>/<variant>` (e.g. `deepinfra/turbo`). */
  tag: string;
  /** The model id the upstream expects in its request body. */
  upstreamModel: string;
  /** Null when the price is unknown: such an endpoint is flagged, never priced at $0 silently. */
  pricing: Pricing | null;
  context_length: number;
  max_prompt_tokens: number | null;
  max_completion_tokens: number | null;
  /** e.g. `fp8`, `bf16`, `int4`, or `unknown`. */
  quantization: string;
  /** Request parameters the endpoint honours (`temperature`, `tools`, `response_format`, ...). */
  supported_parameters: string[];
  /** Overrides the provider's data policy for this endpoint. */
  dataPolicy?: Partial<DataPolicy>;
  is_moderated: boolean;
  supports_implicit_caching: boolean;
}

export interface Catalog {
  providers: ProviderDef[];
  models: ModelDef[];
  endpoints: EndpointDef[];
}

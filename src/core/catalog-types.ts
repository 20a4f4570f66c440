/**
 * Shared types of the model catalog: providers, models and endpoints.
 * Pure data; no I/O. Prices are decimal strings in USD per token (or per unit).
 */

/** Upstream wire protocols the gateway can speak. */
export type Protocol = 'openai' | 'anthropic' | 'google' | 'openai-responses' | 'azure-openai' | 'azure-openai-responses' | 'bedrock' | 'vertex' | 'vertex-anthropic';

/**
 * Upstream text-to-speech APIs (docs/speech.md). Kept apart from `Protocol` on purpose: a provider's `protocol` is its
 * chat API, and a speech endpoint names its speech API with `EndpointDef.speech_protocol`; endpoints that do are never
 * routed by the chat APIs.
 * - `openai-tts`: OpenAI `POST /audio/speech` (and OpenAI-compatible TTS servers): raw audio bytes, or SSE with
 *   base64 chunks and token usage when the endpoint lists `stream_format` in `supported_parameters`;
 * - `gemini-tts`: Gemini `streamGenerateContent` with `responseModalities: ["AUDIO"]`: base64 PCM inside JSON events;
 * - `azure-openai-tts`: OpenAI's speech API on an Azure OpenAI deployment (`/openai/deployments/{d}/audio/speech`).
 */
export type SpeechProtocol = 'openai-tts' | 'gemini-tts' | 'azure-openai-tts';

/**
 * Upstream image generation APIs (docs/images.md; see `EndpointDef.image_protocol`):
 * - `openai-images`: OpenAI `POST /images/generations` and `POST /images/edits` (gpt-image, DALL·E);
 * - `gemini-image`: Gemini `generateContent` with `responseModalities: ["TEXT", "IMAGE"]` (images as inlineData parts);
 * - `azure-openai-images`: OpenAI's images API on an Azure OpenAI deployment (`/openai/deployments/{d}/images/generations`);
 * - `bedrock-image`: Amazon Bedrock InvokeModel in the family's body (Nova Canvas, Titan Image Generator, Stability).
 */
export type ImageProtocol = 'openai-images' | 'gemini-image' | 'azure-openai-images' | 'bedrock-image';

/** Upstream rerank APIs (see `EndpointDef.rerank_protocol`; `bedrock-rerank`: the Bedrock Agent Runtime Rerank API). */
export type RerankProtocol = 'jina' | 'cohere' | 'voyage' | 'bedrock-rerank';

/** Audio formats of the speech API: `mp3`, or `pcm` (raw 16-bit signed little-endian samples, mono, 24 kHz). */
export type AudioFormat = 'mp3' | 'pcm';

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
  /** Most connections open to the provider's origin at once (HTTP/1.1: one request each); unset = GATEWAY_UPSTREAM_CONNECTIONS. */
  maxConnections?: number;
  /** Negotiate HTTP/2 with the provider (TLS ALPN), many streams per connection; unset = GATEWAY_UPSTREAM_HTTP2. */
  http2?: boolean;
  /**
   * A token-counting API beyond the protocol's own (Anthropic and Gemini have theirs; OpenAI Responses endpoints use
   * `/responses/input_tokens`): `openai-responses` for an OpenAI chat-protocol provider that also serves that one.
   */
  tokenCounting?: 'openai-responses';
  /**
   * Settings of a cloud protocol (docs/clouds.md), validated per protocol when the catalog is built: Azure
   * `api_version`, `auth` (`api-key` | `entra`); Bedrock `region`, `auth` (`sigv4` | `api-key`); Vertex `project`, `location`, `token_url`.
   */
  cloud?: Record<string, string>;
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
  /** Speech: price of one input character (USD). Token prices, when the provider reports tokens, add to it. */
  characters?: string;
  /** Rerank: USD per search unit (Cohere: one query over up to 100 documents). */
  search_unit?: string;
  /** Transcription: USD per audio input token (text prompt tokens take `prompt`); absent = `prompt`. */
  audio?: string;
  /** Transcription: USD per second of input audio (rounded to the nearest second, as OpenAI bills Whisper). */
  audio_second?: string;
  /** Video: USD per second of generated video (`VideoCapabilities.second_price_by_resolution` may override it). */
  video_second?: string;
  /** Video: USD per generated video, whatever its length. */
  video?: string;
  /** Images: USD per generated image (token prices, when the provider reports tokens, add to it). */
  image_output?: string;
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
  /**
   * Other ids clients send for this model, e.g. `claude-sonnet-4-5` (src/core/model-aliases.ts, docs/agents.md). Bare
   * and dated provider ids usually resolve without one; an alias names what the normalization cannot guess.
   */
  aliases?: string[];
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
  /** Set on text-to-speech endpoints: the speech API they speak (such endpoints serve `POST /audio/speech` only). */
  speech_protocol?: SpeechProtocol;
  /**
   * Rerank endpoints (a model whose outputs include `rerank`; docs/rerank.md): the rerank API they speak — `jina`
   * (`POST {base}/rerank`, Jina's shape, also vLLM's and most servers'; the default), `cohere` (Cohere's v2
   * `POST {base}/rerank`, billed in search units) or `voyage` (Voyage AI's `POST {base}/rerank`: `top_k`, `data`).
   */
  rerank_protocol?: RerankProtocol;
  /**
   * Image generation endpoints (a model whose outputs include `image`; docs/images.md): the image API they speak.
   * Absent on such an endpoint = derived from the provider's protocol (`openai` → `openai-images`, `google` →
   * `gemini-image`). A `gemini-image` endpoint of a model that also outputs text serves chat too.
   */
  image_protocol?: ImageProtocol;
  /**
   * Speech: the formats the endpoint produces natively; routing skips it for any other (absent = what its speech
   * protocol can produce: `openai-tts` mp3 and pcm, `gemini-tts` pcm).
   */
  audio_formats?: AudioFormat[];
  /**
   * Set on video generation endpoints only (docs/videos.md): what the endpoint accepts. Such endpoints serve
   * `POST /videos` only, never the chat APIs; their pricing uses `video_second` and/or `video` (prompt/completion "0").
   */
  video?: VideoCapabilities;
}

/** Parameters a video endpoint may honour (for `provider.require_parameters`). */
export const VIDEO_PARAMETERS = ['duration', 'resolution', 'aspect_ratio', 'size', 'frame_images', 'input_references', 'generate_audio', 'seed'] as const;

/** Upstream video APIs: OpenAI's Videos API (`/videos`) and Google Veo long-running operations (`:predictLongRunning`). */
export type VideoProtocol = 'openai-video' | 'google-veo';

/**
 * What a video endpoint accepts. The gateway refuses (400) a request value outside a list; a `null` list or flag means
 * "not checked here": the value goes upstream as given (`generate_audio`/`seed` false = refused when requested).
 */
export interface VideoCapabilities {
  /** Wire API; default derived from the provider protocol (`openai` → `openai-video`, `google` → `google-veo`). */
  protocol?: VideoProtocol;
  resolutions: string[] | null;
  aspect_ratios: string[] | null;
  /** Exact `WIDTHxHEIGHT` sizes. */
  sizes: string[] | null;
  /** Durations in seconds. */
  durations: number[] | null;
  frame_images: Array<'first_frame' | 'last_frame'> | null;
  generate_audio: boolean | null;
  seed: boolean | null;
  /** Keys of `provider.options.<slug>` forwarded upstream; other keys are dropped. */
  allowed_passthrough_parameters: string[];
  /** Sent (and billed) when the request sets no duration. */
  default_duration?: number;
  /** Used for pricing when the request sets neither resolution nor size. */
  default_resolution?: string;
  /** USD per second for an output resolution, overriding `pricing.video_second`. */
  second_price_by_resolution?: Record<string, string>;
}

export interface Catalog {
  providers: ProviderDef[];
  models: ModelDef[];
  endpoints: EndpointDef[];
}

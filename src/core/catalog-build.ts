/**
 * Builds the catalog from catalog files: the shipped ones (src/catalog/*.yaml), then the config file's `providers`,
 * `models` and `endpoints` sections, each completing and overriding what came before. The shape of every file is checked
 * by the schema (core/catalog-schema.ts); this module adds the rules between entries (an endpoint names a known model
 * and provider, a speech field needs a speech endpoint, …) and turns snake_case entries into the loaded definitions
 * (core/catalog-types.ts). Pure; no I/O.
 */
import type { AudioFormat, Catalog, DataPolicy, EndpointDef, ModelDef, Pricing, Protocol, ProviderDef, ImageProtocol, RerankProtocol, SpeechProtocol, Timeouts, VideoCapabilities, VideoProtocol } from './catalog-types.js';
import { VIDEO_PARAMETERS } from './catalog-types.js';
import { catalogFileProblems, DECIMAL, PROTOCOLS, VIDEO_PROTOCOL_NAMES } from './catalog-schema.js';

/** Video APIs an endpoint's `video.protocol` may name (docs/videos.md). */
const VIDEO_PROTOCOLS: readonly VideoProtocol[] = VIDEO_PROTOCOL_NAMES;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (o: Obj, k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
const num = (o: Obj, k: string): number | undefined => (typeof o[k] === 'number' ? (o[k] as number) : undefined);
const bool = (o: Obj, k: string): boolean | undefined => (typeof o[k] === 'boolean' ? (o[k] as boolean) : undefined);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
/** The object without its undefined fields (a loaded definition carries only what is set). */
function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}
/** A list without repeats, in first-seen order. */
const unique = <T>(v: unknown): T[] => [...new Set(Array.isArray(v) ? (v as T[]) : [])];

export class CatalogError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid catalog configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Whether a model reranks documents (`output_modalities` includes `rerank`): its endpoints serve POST /rerank. */
export function isRerankModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('rerank');
}

/** Whether a model transcribes audio (`output_modalities` includes `transcription`): its endpoints serve POST /audio/transcriptions. */
export function isTranscriptionModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('transcription');
}

/** Whether a model produces embeddings (`output_modalities` includes `embeddings`): its endpoints serve POST /embeddings. */
export function isEmbeddingModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('embeddings');
}

/** Whether a model generates images (`output_modalities` includes `image`): its endpoints serve POST /images. */
export function isImageModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('image');
}

/** The image API of an endpoint of an image model: its own `image_protocol`, else derived from the provider's protocol. */
export function imageProtocolOf(e: EndpointDef, provider: ProviderDef | undefined): ImageProtocol | null {
  if (e.image_protocol) return e.image_protocol;
  if (provider?.protocol === 'openai') return 'openai-images';
  if (provider?.protocol === 'google') return 'gemini-image';
  if (provider?.protocol === 'azure-openai') return 'azure-openai-images';
  if (provider?.protocol === 'bedrock') return 'bedrock-image';
  return null;
}

/** The video API of an endpoint: its own `video.protocol`, else derived from the provider's protocol. */
export function videoProtocolOf(e: EndpointDef, provider: ProviderDef | undefined): VideoProtocol | null {
  if (e.video?.protocol) return e.video.protocol;
  if (provider?.protocol === 'openai') return 'openai-video';
  if (provider?.protocol === 'google') return 'google-veo';
  return null;
}

/**
 * The `supported_parameters` of an endpoint that lists none, by what it serves. Embedding endpoints take
 * encoding_format and user, and `dimensions` only where listed (docs/embeddings.md); OpenAI speech takes `speed`.
 */
function defaultParameters(m: ModelDef, video: boolean, speech: SpeechProtocol | undefined): string[] {
  if (video) return [...VIDEO_PARAMETERS];
  if (isEmbeddingModel(m)) return ['encoding_format', 'user'];
  if (isRerankModel(m)) return ['top_n'];
  if (isImageModel(m) && !m.architecture.output_modalities.includes('text')) return ['n', 'size', 'quality', 'background', 'output_format', 'input_references'];
  if (isTranscriptionModel(m)) return ['language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities'];
  if (speech) return speech === 'openai-tts' || speech === 'azure-openai-tts' ? ['speed'] : [];
  return ['temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'tools', 'tool_choice', 'response_format'];
}

function timeoutsFrom(v: unknown): Partial<Timeouts> | undefined {
  if (!isObj(v)) return undefined;
  const out: Partial<Timeouts> = {};
  const names: Array<[keyof Timeouts, string]> = [['connectMs', 'connect_ms'], ['firstByteMs', 'first_byte_ms'], ['idleMs', 'idle_ms'], ['totalMs', 'total_ms']];
  for (const [key, name] of names) if (typeof v[name] === 'number') out[key] = v[name];
  return out;
}

/** Price fields whose presence makes token prices optional (they default to "0"). */
const UNIT_PRICES = ['characters', 'video_second', 'video', 'audio_second', 'search_unit', 'image_output'];

function pricingFrom(v: unknown, where: string, problems: string[]): Pricing | null | undefined {
  if (v === undefined || v === null) return v;
  if (!isObj(v)) return undefined;
  const out: Obj = {};
  for (const [k, p] of Object.entries(v)) {
    if (k === 'discount' || typeof p !== 'number') out[k] = p;
    else {
      // A number is accepted only where it prints as a plain decimal (0, 0.5): 1e-7 is not an exact price.
      if (!DECIMAL.test(String(p))) problems.push(`${where}.pricing.${k} must be a non-negative decimal string like "0.0000025" (got ${p})`);
      out[k] = String(p);
    }
  }
  // A speech endpoint priced per character, or a video endpoint priced per second or per video, needs no token prices.
  if (UNIT_PRICES.some((k) => typeof out[k] === 'string')) {
    out.prompt ??= '0';
    out.completion ??= '0';
  }
  if (typeof out.prompt !== 'string' || typeof out.completion !== 'string') problems.push(`${where}.pricing needs prompt and completion prices (or characters, for a speech endpoint; audio_second, for a transcription endpoint; search_unit, for a rerank endpoint; image_output, for an image endpoint; video_second or video, for a video endpoint)`);
  return out as unknown as Pricing;
}

/** An endpoint's `video` section (what a video generation endpoint accepts); fields left out keep `prev`'s. */
function videoFrom(v: unknown, prev: VideoCapabilities | undefined): VideoCapabilities | undefined {
  if (!isObj(v)) return prev;
  const listOr = <T>(k: 'resolutions' | 'aspect_ratios' | 'sizes' | 'durations' | 'frame_images', fallback: T[] | null): T[] | null => (v[k] === undefined ? fallback : v[k] === null ? null : unique<T>(v[k]));
  const flag = (k: 'generate_audio' | 'seed'): boolean | null => (v[k] === undefined ? (prev?.[k] ?? null) : typeof v[k] === 'boolean' ? v[k] : null);
  const out: VideoCapabilities = {
    resolutions: listOr('resolutions', prev?.resolutions ?? null),
    aspect_ratios: listOr('aspect_ratios', prev?.aspect_ratios ?? null),
    sizes: listOr('sizes', prev?.sizes ?? null),
    durations: listOr('durations', prev?.durations ?? null),
    frame_images: listOr('frame_images', prev?.frame_images ?? null),
    generate_audio: flag('generate_audio'),
    seed: flag('seed'),
    allowed_passthrough_parameters: v.allowed_passthrough_parameters === undefined ? (prev?.allowed_passthrough_parameters ?? []) : unique(v.allowed_passthrough_parameters),
  };
  const protocol = str(v, 'protocol') ?? prev?.protocol;
  if (protocol !== undefined) out.protocol = protocol as VideoProtocol;
  const defaultDuration = num(v, 'default_duration') ?? prev?.default_duration;
  if (defaultDuration !== undefined) out.default_duration = defaultDuration;
  const defaultResolution = str(v, 'default_resolution') ?? prev?.default_resolution;
  if (defaultResolution !== undefined) out.default_resolution = defaultResolution;
  const byRes = isObj(v.second_price_by_resolution) ? (v.second_price_by_resolution as Record<string, string>) : prev?.second_price_by_resolution;
  if (byRes !== undefined) out.second_price_by_resolution = { ...byRes };
  return out;
}

function providerFrom(p: Obj, prev: ProviderDef | undefined, where: string, problems: string[]): ProviderDef | undefined {
  const slug = str(p, 'slug');
  if (!slug) return undefined;
  const protocol = (str(p, 'protocol') ?? prev?.protocol) as Protocol | undefined;
  if (!protocol) problems.push(`${where}.protocol must be one of ${PROTOCOLS.join(', ')}`);
  const baseUrl = str(p, 'base_url') ?? prev?.baseUrl;
  if (!baseUrl) problems.push(`${where}.base_url must be an http(s) URL`);
  if (!protocol || !baseUrl) return undefined;
  const dp = isObj(p.data_policy) ? p.data_policy : {};
  const dataPolicy: DataPolicy = {
    training: bool(dp, 'training') ?? prev?.dataPolicy.training ?? false,
    retainsPrompts: bool(dp, 'retains_prompts') ?? prev?.dataPolicy.retainsPrompts ?? false,
    zdr: bool(dp, 'zdr') ?? prev?.dataPolicy.zdr ?? false,
  };
  const out: ProviderDef = {
    ...prev,
    slug,
    name: str(p, 'name') ?? prev?.name ?? slug,
    protocol,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: str(p, 'api_key') ?? prev?.apiKey,
    apiKeyEnv: str(p, 'api_key_env') ?? prev?.apiKeyEnv,
    noAuth: bool(p, 'no_auth') ?? prev?.noAuth,
    headers: isObj(p.headers) ? { ...(p.headers as Record<string, string>) } : prev?.headers,
    dataPolicy,
    timeouts: timeoutsFrom(p.timeouts) ?? prev?.timeouts,
    maxConnections: typeof p.max_connections === 'number' ? p.max_connections : prev?.maxConnections,
    http2: bool(p, 'http2') ?? prev?.http2,
    tokenCounting: p.token_counting === 'openai-responses' ? 'openai-responses' : p.token_counting === null ? undefined : prev?.tokenCounting,
    cloud: isObj(p.cloud) ? { ...(p.cloud as Record<string, string>) } : prev?.cloud,
  };
  for (const problem of cloudProblems(protocol, out.cloud)) problems.push(`${where}.cloud${problem}`);
  const meta: Array<['privacyPolicyUrl' | 'termsOfServiceUrl' | 'statusPageUrl' | 'headquarters', string]> = [['privacyPolicyUrl', 'privacy_policy_url'], ['termsOfServiceUrl', 'terms_of_service_url'], ['statusPageUrl', 'status_page_url'], ['headquarters', 'headquarters']];
  for (const [key, name] of meta) if (p[name] !== undefined) out[key] = str(p, name) ?? null;
  if (p.datacenters !== undefined) out.datacenters = strings(p.datacenters) ?? null;
  return defined(out);
}

/** The settings each cloud protocol accepts (docs/clouds.md): name → a check of its value (a rule, or null when fine). */
const CLOUD_SETTINGS: Partial<Record<Protocol, Record<string, (v: string) => string | null>>> = {
  'azure-openai': {
    api_version: (v) => (/^\d{4}-\d{2}-\d{2}(-preview)?$|^(v1|preview|latest)$/.test(v) ? null : 'must be an Azure api-version such as 2024-10-21 or 2025-04-01-preview'),
    auth: (v) => (v === 'api-key' || v === 'entra' ? null : 'must be api-key or entra'),
  },
};
CLOUD_SETTINGS['azure-openai-responses'] = CLOUD_SETTINGS['azure-openai'];
CLOUD_SETTINGS.bedrock = {
  region: (v) => (/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(v) ? null : 'must be an AWS region such as us-east-1'),
  auth: (v) => (v === 'sigv4' || v === 'api-key' ? null : 'must be sigv4 (an AWS key pair) or api-key (a Bedrock API key)'),
};
CLOUD_SETTINGS.vertex = {
  project: (v) => (/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(v) ? null : 'must be a Google Cloud project id'),
  location: (v) => (/^(global|[a-z]+-[a-z]+\d+)$/.test(v) ? null : 'must be a Vertex AI location such as us-east5 or global'),
  token_url: (v) => (/^https?:\/\/[^/]+/.test(v) ? null : 'must be an http(s) URL'),
};
CLOUD_SETTINGS['vertex-anthropic'] = CLOUD_SETTINGS.vertex;

function cloudProblems(protocol: Protocol, cloud: Record<string, string> | undefined): string[] {
  if (!cloud) return [];
  const known = CLOUD_SETTINGS[protocol];
  if (!known) return [` is for the cloud protocols (${Object.keys(CLOUD_SETTINGS).join(', ')}), not ${protocol}`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(cloud)) {
    const check = known[k];
    if (!check) out.push(`.${k} is not a ${protocol} setting (${Object.keys(known).join(', ')})`);
    else if (typeof v !== 'string') out.push(`.${k} must be a string`);
    else {
      const bad = check(v);
      if (bad) out.push(`.${k} ${bad}`);
    }
  }
  return out;
}

function reasoningFrom(v: unknown, prev: ModelDef['reasoning'] | undefined): ModelDef['reasoning'] {
  if (v === null) return null;
  if (!isObj(v)) return prev ?? null;
  return {
    default_effort: str(v, 'default_effort') ?? null,
    default_enabled: bool(v, 'default_enabled') ?? false,
    mandatory: bool(v, 'mandatory') ?? false,
    supported_efforts: strings(v.supported_efforts) ?? [],
  };
}

function modelFrom(m: Obj, id: string, prev: ModelDef | undefined): ModelDef {
  const input = strings(m.input_modalities) ?? prev?.architecture.input_modalities ?? ['text'];
  const output = strings(m.output_modalities) ?? prev?.architecture.output_modalities ?? ['text'];
  const model: ModelDef = {
    id,
    canonical_slug: str(m, 'canonical_slug') ?? prev?.canonical_slug ?? id,
    name: str(m, 'name') ?? prev?.name ?? id,
    created: num(m, 'created') ?? prev?.created ?? Math.floor(Date.now() / 1000),
    description: str(m, 'description') ?? prev?.description ?? '',
    context_length: num(m, 'context_length') ?? prev?.context_length ?? 8192,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: [...input],
      output_modalities: [...output],
      tokenizer: str(m, 'tokenizer') ?? prev?.architecture.tokenizer ?? 'Other',
      instruct_type: str(m, 'instruct_type') ?? prev?.architecture.instruct_type ?? null,
    },
    reasoning: reasoningFrom(m.reasoning, prev?.reasoning),
    knowledge_cutoff: str(m, 'knowledge_cutoff') ?? prev?.knowledge_cutoff ?? null,
    expiration_date: str(m, 'expiration_date') ?? prev?.expiration_date ?? null,
    hugging_face_id: str(m, 'hugging_face_id') ?? prev?.hugging_face_id ?? null,
    default_parameters: (isObj(m.default_parameters) ? { ...m.default_parameters } : prev?.default_parameters) ?? null,
    supported_voices: strings(m.supported_voices) ?? prev?.supported_voices ?? null,
  };
  const aliases = strings(m.aliases) ?? prev?.aliases;
  if (aliases !== undefined) model.aliases = [...new Set(aliases)];
  return model;
}

interface Maps {
  providers: Map<string, ProviderDef>;
  models: Map<string, ModelDef>;
  endpoints: Map<string, EndpointDef>;
}

/** The rules of an endpoint's speech, rerank and video fields that span entries. */
function checkKinds(e: EndpointDef, provider: ProviderDef | undefined, m: ModelDef, where: string, problems: string[]): void {
  if (e.audio_formats !== undefined && e.speech_protocol === undefined) problems.push(`${where}.audio_formats needs speech_protocol`);
  if (e.rerank_protocol !== undefined && !isRerankModel(m)) problems.push(`${where}.rerank_protocol needs a rerank model (output_modalities: [rerank])`);
  if (e.image_protocol !== undefined && !isImageModel(m)) problems.push(`${where}.image_protocol needs an image model (output_modalities: [image])`);
  // Azure's deployment URLs are built from an Azure OpenAI provider's resource endpoint and cloud settings.
  for (const [field, value] of [['speech_protocol', e.speech_protocol], ['image_protocol', e.image_protocol]] as const) {
    if ((value === 'azure-openai-tts' || value === 'azure-openai-images') && provider && provider.protocol !== 'azure-openai') problems.push(`${where}.${field} ${value} needs an azure-openai provider (got ${provider.protocol})`);
  }
  // Bedrock's InvokeModel and Rerank URLs, region and SigV4 signing come from a bedrock provider.
  for (const [field, value] of [['image_protocol', e.image_protocol], ['rerank_protocol', e.rerank_protocol]] as const) {
    if ((value === 'bedrock-image' || value === 'bedrock-rerank') && provider && provider.protocol !== 'bedrock') problems.push(`${where}.${field} ${value} needs a bedrock provider (got ${provider.protocol})`);
  }
  // AWS's Bedrock API keys do not cover the Agent Runtime's operations (Rerank): a key pair signs them.
  if (e.rerank_protocol === 'bedrock-rerank' && provider?.cloud?.auth === 'api-key') problems.push(`${where}.rerank_protocol bedrock-rerank needs AWS key pair credentials: Bedrock API keys (cloud.auth: api-key) do not authorize the Agent Runtime's Rerank`);
  if (e.video && !videoProtocolOf(e, provider)) problems.push(`${where}.video.protocol must be set (${VIDEO_PROTOCOLS.join(', ')}): the provider's protocol has no video API`);
}

function endpointFrom(e: Obj, maps: Maps, where: string, problems: string[]): EndpointDef | undefined {
  const model = str(e, 'model');
  const provider = str(e, 'provider');
  if (model !== undefined && !maps.models.has(model)) problems.push(`${where}.model must name a model of the catalog (got ${JSON.stringify(e.model)})`);
  if (provider !== undefined && !maps.providers.has(provider)) problems.push(`${where}.provider must name a configured provider (got ${JSON.stringify(e.provider)})`);
  if (!model || !provider || !maps.models.has(model) || !maps.providers.has(provider)) return undefined;
  const tag = str(e, 'tag') ?? provider;
  const prev = maps.endpoints.get(`${model}|${tag}`);
  const m = maps.models.get(model)!;
  const pricing = pricingFrom(e.pricing, where, problems);
  const speechProtocol = (str(e, 'speech_protocol') ?? prev?.speech_protocol) as SpeechProtocol | undefined;
  const rerankProtocol = (str(e, 'rerank_protocol') ?? prev?.rerank_protocol) as RerankProtocol | undefined;
  const imageProtocol = (str(e, 'image_protocol') ?? prev?.image_protocol) as ImageProtocol | undefined;
  const audioFormats = e.audio_formats !== undefined ? unique<AudioFormat>(e.audio_formats) : prev?.audio_formats;
  const video = videoFrom(e.video, prev?.video);
  const dp = isObj(e.data_policy) ? e.data_policy : undefined;
  const dataPolicy: Partial<DataPolicy> | undefined = dp ? { training: bool(dp, 'training'), retainsPrompts: bool(dp, 'retains_prompts'), zdr: bool(dp, 'zdr') } : prev?.dataPolicy;
  const out: EndpointDef = {
    model,
    provider,
    tag,
    upstreamModel: str(e, 'upstream_model') ?? prev?.upstreamModel ?? model,
    pricing: pricing !== undefined ? pricing : (prev?.pricing ?? null),
    context_length: num(e, 'context_length') ?? prev?.context_length ?? m.context_length,
    max_prompt_tokens: num(e, 'max_prompt_tokens') ?? prev?.max_prompt_tokens ?? null,
    max_completion_tokens: num(e, 'max_completion_tokens') ?? prev?.max_completion_tokens ?? null,
    quantization: str(e, 'quantization') ?? prev?.quantization ?? 'unknown',
    supported_parameters: strings(e.supported_parameters) ?? prev?.supported_parameters ?? defaultParameters(m, video !== undefined, speechProtocol),
    dataPolicy,
    is_moderated: bool(e, 'is_moderated') ?? prev?.is_moderated ?? false,
    supports_implicit_caching: bool(e, 'supports_implicit_caching') ?? prev?.supports_implicit_caching ?? false,
    ...(speechProtocol ? { speech_protocol: speechProtocol } : {}),
    ...(rerankProtocol ? { rerank_protocol: rerankProtocol } : {}),
    ...(imageProtocol ? { image_protocol: imageProtocol } : {}),
    ...(audioFormats ? { audio_formats: audioFormats } : {}),
    ...(video ? { video } : {}),
  };
  checkKinds(out, maps.providers.get(provider), m, where, problems);
  return defined(out);
}

/** The entries of one section (the schema has reported anything that is not a list of mappings). */
const entries = (file: Obj, name: string): Obj[] => (Array.isArray(file[name]) ? (file[name] as unknown[]).filter(isObj) : []);

/**
 * Applies a catalog file (a shipped one, or the catalog sections of the config file) to `base`. Throws CatalogError
 * listing every problem, each with its path. `base` is not modified.
 */
export function buildCatalog(file: Obj, base: Catalog): Catalog {
  const problems = catalogFileProblems(file);
  const maps: Maps = {
    providers: new Map(base.providers.map((p) => [p.slug, p])),
    models: new Map(base.models.map((m) => [m.id, m])),
    endpoints: new Map(base.endpoints.map((e) => [`${e.model}|${e.tag}`, e])),
  };
  entries(file, 'providers').forEach((p, i) => {
    const slug = str(p, 'slug');
    const provider = slug === undefined ? undefined : providerFrom(p, maps.providers.get(slug), `providers[${i}]`, problems);
    if (provider) maps.providers.set(provider.slug, provider);
  });
  entries(file, 'models').forEach((m) => {
    const id = str(m, 'id');
    if (id !== undefined) maps.models.set(id, modelFrom(m, id, maps.models.get(id)));
  });
  entries(file, 'endpoints').forEach((e, i) => {
    const endpoint = endpointFrom(e, maps, `endpoints[${i}]`, problems);
    if (endpoint) maps.endpoints.set(`${endpoint.model}|${endpoint.tag}`, endpoint);
  });
  checkAliases([...maps.models.values()], problems);
  if (problems.length > 0) throw new CatalogError([...new Set(problems)]);
  return { providers: [...maps.providers.values()], models: [...maps.models.values()], endpoints: [...maps.endpoints.values()] };
}

/** Each alias names one model, and never another model's id. */
function checkAliases(models: ModelDef[], problems: string[]): void {
  const owner = new Map<string, string>();
  const ids = new Set(models.map((m) => m.id));
  for (const m of models) {
    for (const a of m.aliases ?? []) {
      const key = a.toLowerCase();
      const other = owner.get(key);
      if (other && other !== m.id) problems.push(`models: alias ${a} is claimed by both ${other} and ${m.id}`);
      else if (ids.has(a)) problems.push(`models: alias ${a} of ${m.id} is another model's id`);
      owner.set(key, m.id);
    }
  }
}

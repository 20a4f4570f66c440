/**
 * The live catalog: the shipped default catalog, completed and overridden by the config file's `providers`,
 * `models` and `endpoints` sections. Provider credentials come from the environment or the config file; an endpoint
 * whose provider has none is kept in the catalog but is not routable (logged once at start-up).
 */
import type { Logger } from 'pino';
import { shippedCatalog } from '../catalog/default-catalog.js';
import type { AudioFormat, Catalog, DataPolicy, EndpointDef, ModelDef, Protocol, ProviderDef, RerankProtocol, SpeechProtocol, Timeouts, VideoCapabilities, VideoProtocol } from '../core/catalog-types.js';
import { VIDEO_PARAMETERS } from '../catalog/video-catalog.js';
import type { RouteCatalog } from '../core/routing.js';
import { buildAliasIndex, resolveModelId, type AliasIndex, type Resolution } from '../core/model-aliases.js';

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  // Reasoning models may think for minutes between visible chunks.
  idleMs: 300_000,
  totalMs: 1_200_000,
};

const PROTOCOLS: Protocol[] = ['openai', 'anthropic', 'google', 'openai-responses'];
/** Speech APIs an endpoint may name in `speech_protocol` (docs/speech.md). */
export const SPEECH_PROTOCOLS: readonly SpeechProtocol[] = ['openai-tts', 'gemini-tts'];
export const AUDIO_FORMATS: readonly AudioFormat[] = ['mp3', 'pcm'];
const DECIMAL = /^\d+(\.\d+)?$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export class CatalogError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid catalog configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function str(o: Obj, k: string): string | undefined {
  return typeof o[k] === 'string' ? (o[k] as string) : undefined;
}

function timeoutsFrom(v: unknown, where: string, problems: string[]): Partial<Timeouts> | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) {
    problems.push(`${where}.timeouts must be a mapping`);
    return undefined;
  }
  const out: Partial<Timeouts> = {};
  const names: Array<[keyof Timeouts, string]> = [
    ['connectMs', 'connect_ms'],
    ['firstByteMs', 'first_byte_ms'],
    ['idleMs', 'idle_ms'],
    ['totalMs', 'total_ms'],
  ];
  for (const [key, name] of names) {
    const n = v[name];
    if (n === undefined) continue;
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) problems.push(`${where}.timeouts.${name} must be a positive integer (milliseconds)`);
    else out[key] = n;
  }
  return out;
}

function pricingFrom(v: unknown, where: string, problems: string[]): EndpointDef['pricing'] | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (!isObj(v)) {
    problems.push(`${where}.pricing must be a mapping of decimal strings (USD per token) or null`);
    return undefined;
  }
  const out: Obj = {};
  for (const [k, p] of Object.entries(v)) {
    const s = typeof p === 'number' ? String(p) : p;
    if (k === 'discount') out[k] = Number(p);
    else if (typeof s !== 'string' || !DECIMAL.test(s)) problems.push(`${where}.pricing.${k} must be a non-negative decimal string like "0.0000025" (got ${JSON.stringify(p)})`);
    else out[k] = s;
  }
  // A speech endpoint priced per character, or a video endpoint priced per second or per video, needs no token prices.
  if (['characters', 'video_second', 'video', 'audio_second', 'search_unit'].some((k) => typeof out[k] === 'string')) {
    out.prompt ??= '0';
    out.completion ??= '0';
  }
  if (typeof out.prompt !== 'string' || typeof out.completion !== 'string') problems.push(`${where}.pricing needs prompt and completion prices (or characters, for a speech endpoint; audio_second, for a transcription endpoint; search_unit, for a rerank endpoint; video_second or video, for a video endpoint)`);
  return out as unknown as EndpointDef['pricing'];
}

/** Video APIs an endpoint's `video.protocol` may name (docs/videos.md). */
export const VIDEO_PROTOCOLS: readonly VideoProtocol[] = ['openai-video', 'google-veo'];

/** The video API of an endpoint: its own `video.protocol`, else derived from the provider's protocol. */
export function videoProtocolOf(e: EndpointDef, provider: ProviderDef | undefined): VideoProtocol | null {
  if (e.video?.protocol) return e.video.protocol;
  if (provider?.protocol === 'openai') return 'openai-video';
  if (provider?.protocol === 'google') return 'google-veo';
  return null;
}

/** An endpoint's `video` section (what a video generation endpoint accepts); fields left out keep `prev`'s. */
function videoFrom(v: unknown, prev: VideoCapabilities | undefined, where: string, problems: string[]): VideoCapabilities | undefined {
  if (v === undefined) return prev;
  if (!isObj(v)) {
    problems.push(`${where}.video must be a mapping (protocol, resolutions, aspect_ratios, sizes, durations, …)`);
    return prev;
  }
  const w = `${where}.video`;
  const strings = (k: 'resolutions' | 'aspect_ratios' | 'sizes' | 'allowed_passthrough_parameters'): string[] | null => {
    const x = v[k];
    if (x === undefined) return prev?.[k] ?? (k === 'allowed_passthrough_parameters' ? [] : null);
    if (x === null && k !== 'allowed_passthrough_parameters') return null;
    if (!Array.isArray(x) || !x.every((i) => typeof i === 'string' && i !== '')) {
      problems.push(`${w}.${k} must be a list of strings${k === 'allowed_passthrough_parameters' ? '' : ' or null'}`);
      return null;
    }
    return [...new Set(x as string[])];
  };
  const flag = (k: 'generate_audio' | 'seed'): boolean | null => {
    const x = v[k];
    if (x === undefined) return prev?.[k] ?? null;
    if (x !== null && typeof x !== 'boolean') problems.push(`${w}.${k} must be true, false or null`);
    return typeof x === 'boolean' ? x : null;
  };
  const out: VideoCapabilities = {
    resolutions: strings('resolutions'),
    aspect_ratios: strings('aspect_ratios'),
    sizes: strings('sizes'),
    durations: prev?.durations ?? null,
    frame_images: prev?.frame_images ?? null,
    generate_audio: flag('generate_audio'),
    seed: flag('seed'),
    allowed_passthrough_parameters: strings('allowed_passthrough_parameters') ?? [],
  };
  const protocol = v.protocol ?? prev?.protocol;
  if (protocol !== undefined) {
    if (!VIDEO_PROTOCOLS.includes(protocol as VideoProtocol)) problems.push(`${w}.protocol must be one of ${VIDEO_PROTOCOLS.join(', ')}`);
    else out.protocol = protocol as VideoProtocol;
  }
  if (v.durations !== undefined) {
    if (v.durations === null) out.durations = null;
    else if (!Array.isArray(v.durations) || !v.durations.every((d) => Number.isInteger(d) && (d as number) > 0)) problems.push(`${w}.durations must be a list of positive integers (seconds) or null`);
    else out.durations = [...new Set(v.durations as number[])];
  }
  if (v.frame_images !== undefined) {
    if (v.frame_images === null) out.frame_images = null;
    else if (!Array.isArray(v.frame_images) || !v.frame_images.every((f) => f === 'first_frame' || f === 'last_frame')) problems.push(`${w}.frame_images must be a list of first_frame, last_frame, or null`);
    else out.frame_images = [...new Set(v.frame_images as Array<'first_frame' | 'last_frame'>)];
  }
  const defaultDuration = v.default_duration ?? prev?.default_duration;
  if (defaultDuration !== undefined) {
    if (!Number.isInteger(defaultDuration) || (defaultDuration as number) <= 0) problems.push(`${w}.default_duration must be a positive integer (seconds)`);
    else out.default_duration = defaultDuration as number;
  }
  const defaultResolution = v.default_resolution ?? prev?.default_resolution;
  if (defaultResolution !== undefined) {
    if (typeof defaultResolution !== 'string') problems.push(`${w}.default_resolution must be a string`);
    else out.default_resolution = defaultResolution;
  }
  const byRes = v.second_price_by_resolution ?? prev?.second_price_by_resolution;
  if (byRes !== undefined) {
    if (!isObj(byRes) || !Object.values(byRes).every((p) => typeof p === 'string' && DECIMAL.test(p))) problems.push(`${w}.second_price_by_resolution must map resolutions to decimal strings (USD per second)`);
    else out.second_price_by_resolution = byRes as Record<string, string>;
  }
  return out;
}

/** Applies the config file's catalog sections to the default catalog. Throws CatalogError listing every problem. */
export function buildCatalog(file: Obj, base: Catalog = shippedCatalog()): Catalog {
  const problems: string[] = [];
  const providers = new Map(base.providers.map((p) => [p.slug, p]));
  const models = new Map(base.models.map((m) => [m.id, m]));
  const endpoints = new Map(base.endpoints.map((e) => [`${e.model}|${e.tag}`, e]));

  const list = (name: string): Obj[] => {
    const v = file[name];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every(isObj)) {
      problems.push(`${name} must be a list of mappings`);
      return [];
    }
    return v as Obj[];
  };

  list('providers').forEach((p, i) => {
    const where = `providers[${i}]`;
    const slug = str(p, 'slug');
    if (!slug || !/^[a-z0-9][a-z0-9._-]*$/.test(slug)) return problems.push(`${where}.slug must be a lowercase slug`);
    const prev = providers.get(slug);
    const protocol = (str(p, 'protocol') ?? prev?.protocol) as Protocol | undefined;
    if (!protocol || !PROTOCOLS.includes(protocol)) return problems.push(`${where}.protocol must be one of ${PROTOCOLS.join(', ')}`);
    const baseUrl = str(p, 'base_url') ?? prev?.baseUrl;
    if (!baseUrl || !/^https?:\/\/[^/]+/.test(baseUrl)) return problems.push(`${where}.base_url must be an http(s) URL`);
    const dp = isObj(p.data_policy) ? p.data_policy : {};
    const dataPolicy: DataPolicy = {
      training: typeof dp.training === 'boolean' ? dp.training : (prev?.dataPolicy.training ?? false),
      retainsPrompts: typeof dp.retains_prompts === 'boolean' ? dp.retains_prompts : (prev?.dataPolicy.retainsPrompts ?? false),
      zdr: typeof dp.zdr === 'boolean' ? dp.zdr : (prev?.dataPolicy.zdr ?? false),
    };
    if (p.headers !== undefined && (!isObj(p.headers) || !Object.values(p.headers).every((h) => typeof h === 'string'))) {
      problems.push(`${where}.headers must map header names to strings`);
    }
    if (p.token_counting !== undefined && p.token_counting !== null && p.token_counting !== 'openai-responses') {
      problems.push(`${where}.token_counting must be openai-responses (OpenAI's /responses/input_tokens) or null`);
    }
    providers.set(slug, {
      ...prev,
      slug,
      name: str(p, 'name') ?? prev?.name ?? slug,
      protocol,
      baseUrl: baseUrl.replace(/\/+$/, ''),
      apiKey: str(p, 'api_key') ?? prev?.apiKey,
      apiKeyEnv: str(p, 'api_key_env') ?? prev?.apiKeyEnv,
      noAuth: typeof p.no_auth === 'boolean' ? p.no_auth : prev?.noAuth,
      headers: isObj(p.headers) ? (p.headers as Record<string, string>) : prev?.headers,
      dataPolicy,
      timeouts: timeoutsFrom(p.timeouts, where, problems) ?? prev?.timeouts,
      tokenCounting: p.token_counting === 'openai-responses' ? 'openai-responses' : p.token_counting === null ? undefined : prev?.tokenCounting,
    });
  });

  list('models').forEach((m, i) => {
    const where = `models[${i}]`;
    const id = str(m, 'id');
    if (!id || !/^[^/\s]+\/[^\s]+$/.test(id)) return problems.push(`${where}.id must look like author/slug`);
    const prev = models.get(id);
    const input = Array.isArray(m.input_modalities) ? (m.input_modalities as string[]) : (prev?.architecture.input_modalities ?? ['text']);
    const output = Array.isArray(m.output_modalities) ? (m.output_modalities as string[]) : (prev?.architecture.output_modalities ?? ['text']);
    const model: ModelDef = {
      id,
      canonical_slug: str(m, 'canonical_slug') ?? prev?.canonical_slug ?? id,
      name: str(m, 'name') ?? prev?.name ?? id,
      created: typeof m.created === 'number' ? m.created : (prev?.created ?? Math.floor(Date.now() / 1000)),
      description: str(m, 'description') ?? prev?.description ?? '',
      context_length: typeof m.context_length === 'number' ? m.context_length : (prev?.context_length ?? 8192),
      architecture: {
        modality: `${input.join('+')}->${output.join('+')}`,
        input_modalities: input,
        output_modalities: output,
        tokenizer: str(m, 'tokenizer') ?? prev?.architecture.tokenizer ?? 'Other',
        instruct_type: str(m, 'instruct_type') ?? prev?.architecture.instruct_type ?? null,
      },
      reasoning: (isObj(m.reasoning) ? (m.reasoning as unknown as ModelDef['reasoning']) : prev?.reasoning) ?? null,
      knowledge_cutoff: str(m, 'knowledge_cutoff') ?? prev?.knowledge_cutoff ?? null,
      expiration_date: str(m, 'expiration_date') ?? prev?.expiration_date ?? null,
      hugging_face_id: str(m, 'hugging_face_id') ?? prev?.hugging_face_id ?? null,
      default_parameters: (isObj(m.default_parameters) ? m.default_parameters : prev?.default_parameters) ?? null,
      supported_voices: Array.isArray(m.supported_voices) ? m.supported_voices.filter((v): v is string => typeof v === 'string') : (prev?.supported_voices ?? null),
    };
    const aliases = aliasesFrom(m.aliases, prev?.aliases, where, problems);
    if (aliases) model.aliases = aliases;
    models.set(id, model);
  });

  list('endpoints').forEach((e, i) => {
    const where = `endpoints[${i}]`;
    const model = str(e, 'model');
    const provider = str(e, 'provider');
    if (!model || !models.has(model)) return problems.push(`${where}.model must name a model of the catalog (got ${JSON.stringify(e.model)})`);
    if (!provider || !providers.has(provider)) return problems.push(`${where}.provider must name a configured provider (got ${JSON.stringify(e.provider)})`);
    const tag = str(e, 'tag') ?? provider;
    const prev = endpoints.get(`${model}|${tag}`);
    const pricing = pricingFrom(e.pricing, where, problems);
    const m = models.get(model)!;
    const speechProtocol = (str(e, 'speech_protocol') ?? prev?.speech_protocol) as SpeechProtocol | undefined;
    if (speechProtocol !== undefined && !SPEECH_PROTOCOLS.includes(speechProtocol)) problems.push(`${where}.speech_protocol must be one of ${SPEECH_PROTOCOLS.join(', ')}`);
    let audioFormats = prev?.audio_formats;
    if (e.audio_formats !== undefined) {
      const list = e.audio_formats;
      if (!Array.isArray(list) || list.length === 0 || !list.every((f) => AUDIO_FORMATS.includes(f as AudioFormat))) {
        problems.push(`${where}.audio_formats must be a non-empty list of ${AUDIO_FORMATS.join(', ')}`);
      } else audioFormats = [...new Set(list as AudioFormat[])];
    }
    if (audioFormats !== undefined && speechProtocol === undefined) problems.push(`${where}.audio_formats needs speech_protocol`);
    const rerankProtocol = (str(e, 'rerank_protocol') ?? prev?.rerank_protocol) as RerankProtocol | undefined;
    if (rerankProtocol !== undefined && !RERANK_PROTOCOLS.includes(rerankProtocol)) problems.push(`${where}.rerank_protocol must be one of ${RERANK_PROTOCOLS.join(', ')}`);
    if (rerankProtocol !== undefined && !isRerankModel(m)) problems.push(`${where}.rerank_protocol needs a rerank model (output_modalities: [rerank])`);
    const video = videoFrom(e.video, prev?.video, where, problems);
    if (video && !video.protocol && !videoProtocolOf({ ...(prev ?? ({} as EndpointDef)), video }, providers.get(provider))) {
      problems.push(`${where}.video.protocol must be set (${VIDEO_PROTOCOLS.join(', ')}): the provider's protocol has no video API`);
    }
    const defaultParams = defaultParameters(m, video !== undefined, speechProtocol);
    endpoints.set(`${model}|${tag}`, {
      model,
      provider,
      tag,
      upstreamModel: str(e, 'upstream_model') ?? prev?.upstreamModel ?? model,
      pricing: pricing !== undefined ? pricing : (prev?.pricing ?? null),
      context_length: typeof e.context_length === 'number' ? e.context_length : (prev?.context_length ?? m.context_length),
      max_prompt_tokens: typeof e.max_prompt_tokens === 'number' ? e.max_prompt_tokens : (prev?.max_prompt_tokens ?? null),
      max_completion_tokens: typeof e.max_completion_tokens === 'number' ? e.max_completion_tokens : (prev?.max_completion_tokens ?? null),
      quantization: str(e, 'quantization') ?? prev?.quantization ?? 'unknown',
      supported_parameters: Array.isArray(e.supported_parameters)
        ? (e.supported_parameters as string[])
        : (prev?.supported_parameters ?? defaultParams),
      dataPolicy: isObj(e.data_policy) ? { training: e.data_policy.training as boolean, retainsPrompts: e.data_policy.retains_prompts as boolean, zdr: e.data_policy.zdr as boolean } : prev?.dataPolicy,
      is_moderated: typeof e.is_moderated === 'boolean' ? e.is_moderated : (prev?.is_moderated ?? false),
      supports_implicit_caching: typeof e.supports_implicit_caching === 'boolean' ? e.supports_implicit_caching : (prev?.supports_implicit_caching ?? false),
      ...(speechProtocol ? { speech_protocol: speechProtocol } : {}),
      ...(rerankProtocol ? { rerank_protocol: rerankProtocol } : {}),
      ...(audioFormats ? { audio_formats: audioFormats } : {}),
      ...(video ? { video } : {}),
    });
  });

  checkAliases([...models.values()], problems);
  if (problems.length > 0) throw new CatalogError(problems);
  return { providers: [...providers.values()], models: [...models.values()], endpoints: [...endpoints.values()] };
}

/** A model's `aliases` (a list of ids without spaces or slashes); absent keeps the previous list. */
function aliasesFrom(v: unknown, prev: string[] | undefined, where: string, problems: string[]): string[] | undefined {
  if (v === undefined) return prev;
  if (v === null) return undefined;
  if (!Array.isArray(v) || !v.every((a) => typeof a === 'string' && /^[^\s/]{1,200}$/.test(a))) {
    problems.push(`${where}.aliases must be a list of model ids without spaces or slashes (e.g. claude-sonnet-4-5)`);
    return prev;
  }
  return [...new Set(v as string[])];
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

/**
 * The `supported_parameters` of an endpoint that lists none, by what it serves. Embedding endpoints take
 * encoding_format and user, and `dimensions` only where listed (docs/embeddings.md); OpenAI speech takes `speed`.
 */
function defaultParameters(m: ModelDef, video: boolean, speech: SpeechProtocol | undefined): string[] {
  if (video) return [...VIDEO_PARAMETERS];
  if (isEmbeddingModel(m)) return ['encoding_format', 'user'];
  if (isRerankModel(m)) return ['top_n'];
  if (isTranscriptionModel(m)) return ['language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities'];
  if (speech) return speech === 'openai-tts' ? ['speed'] : [];
  return ['temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'tools', 'tool_choice', 'response_format'];
}

/** Whether a model reranks documents (`output_modalities` includes `rerank`): its endpoints serve POST /rerank. */
export function isRerankModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('rerank');
}

/** Rerank APIs an endpoint may name in `rerank_protocol` (docs/rerank.md). */
export const RERANK_PROTOCOLS: readonly RerankProtocol[] = ['jina', 'cohere', 'voyage'];

/** Whether a model transcribes audio (`output_modalities` includes `transcription`): its endpoints serve POST /audio/transcriptions. */
export function isTranscriptionModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('transcription');
}

/** Whether a model produces embeddings (`output_modalities` includes `embeddings`): its endpoints serve POST /embeddings. */
export function isEmbeddingModel(m: ModelDef): boolean {
  return m.architecture.output_modalities.includes('embeddings');
}

/** Wire protocols with an embeddings adapter (OpenAI's `/embeddings`); other endpoints of embedding models are not routed. */
export const EMBEDDING_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai']);

/** Wire protocols with a transcription adapter (OpenAI's `/audio/transcriptions`). */
export const TRANSCRIPTION_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai']);

/** An API other than chat that serves some models' endpoints (see CatalogService.otherApi). */
export interface OtherApi {
  /** Whether a model's outputs make it one of this API's. */
  is: (m: ModelDef) => boolean;
  route: RouteCatalog;
  /** The provider protocols its endpoints may speak; null: any (the endpoint names its own API). */
  protocols: ReadonlySet<Protocol> | null;
  /** What a chat request for such a model is told: "<model> is <article> <kind> model: use <path>". */
  kind: string;
  article: string;
  path: string;
}

/** Wire protocols with an adapter; endpoints of other protocols stay listed but are not routed. */
export const ROUTABLE_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai', 'anthropic', 'google', 'openai-responses']);

export class CatalogService {
  /** What the chat APIs route: every endpoint of a routable protocol except the speech endpoints. */
  readonly route: RouteCatalog;
  /** What `POST /audio/speech` routes: the speech endpoints only (`speech_protocol` set). */
  readonly speechRoute: RouteCatalog;
  /** What `POST /videos` routes: the video generation endpoints only (`video` set; docs/videos.md). */
  readonly videoRoute: RouteCatalog;
  /** What `POST /embeddings` routes: the endpoints of embedding models on an OpenAI-protocol provider (docs/embeddings.md). */
  readonly embeddingRoute: RouteCatalog;
  /** What `POST /rerank` routes: the endpoints of rerank models, each with its own rerank API (docs/rerank.md). */
  readonly rerankRoute: RouteCatalog;
  /** What `POST /audio/transcriptions` routes: the endpoints of transcription models on an OpenAI-protocol provider (docs/transcriptions.md). */
  readonly transcriptionRoute: RouteCatalog;
  readonly catalog: Catalog;
  /** Models served by an API other than chat (embeddings, rerank, transcriptions): that API (one object per API). */
  readonly otherApi = new Map<string, OtherApi>();
  /** Lookup tables of model ids as clients send them (aliases, bare and dated ids; src/core/model-aliases.ts). */
  readonly aliasIndex: AliasIndex;
  private readonly credentials = new Map<string, string | null>();
  /** Every endpoint that some API routes (the others are listed only: a protocol without an adapter). */
  private readonly routedEndpoints = new Set<EndpointDef>();

  constructor(catalog: Catalog, env: NodeJS.ProcessEnv, log?: Logger) {
    this.catalog = catalog;
    this.aliasIndex = buildAliasIndex(catalog.models);
    const models = new Map(catalog.models.map((m) => [m.id, m]));
    const providers = new Map(catalog.providers.map((p) => [p.slug, p]));
    const routeOver = (): RouteCatalog => ({ models, endpointsByModel: new Map(), providers });
    this.route = routeOver();
    this.speechRoute = routeOver();
    this.videoRoute = routeOver();
    this.embeddingRoute = routeOver();
    this.rerankRoute = routeOver();
    this.transcriptionRoute = routeOver();
    const push = (route: RouteCatalog, e: EndpointDef) => {
      this.routedEndpoints.add(e);
      const list = route.endpointsByModel.get(e.model);
      if (list) list.push(e);
      else route.endpointsByModel.set(e.model, [e]);
    };
    // The APIs other than chat that a model's outputs select (the first that matches), the protocols their endpoints
    // must speak (null: any, the endpoint names its own API), and what a chat request for such a model is told.
    const otherApis: OtherApi[] = [
      { is: isRerankModel, route: this.rerankRoute, protocols: null, kind: 'rerank', article: 'a', path: 'POST /rerank' },
      { is: isTranscriptionModel, route: this.transcriptionRoute, protocols: TRANSCRIPTION_PROTOCOLS, kind: 'transcription', article: 'a', path: 'POST /audio/transcriptions' },
      { is: isEmbeddingModel, route: this.embeddingRoute, protocols: EMBEDDING_PROTOCOLS, kind: 'embeddings', article: 'an', path: 'POST /embeddings' },
    ];
    const apiOf = new Map<string, OtherApi>();
    for (const m of catalog.models) {
      const api = otherApis.find((a) => a.is(m));
      if (api) apiOf.set(m.id, api);
    }
    const unrouted = new Set<string>();
    for (const e of catalog.endpoints) {
      if (e.video) {
        push(this.videoRoute, e);
        continue;
      }
      if (e.speech_protocol) {
        push(this.speechRoute, e);
        continue;
      }
      const protocol = providers.get(e.provider)?.protocol;
      const api = apiOf.get(e.model);
      if (api) {
        // Never routed by the chat APIs; by the model's own API when the provider speaks a protocol it has.
        if (api.protocols && protocol && !api.protocols.has(protocol)) unrouted.add(`${e.provider} (${protocol}, ${api.kind})`);
        else push(api.route, e);
        continue;
      }
      if (protocol && !ROUTABLE_PROTOCOLS.has(protocol)) {
        unrouted.add(`${e.provider} (${protocol})`);
        continue;
      }
      push(this.route, e);
    }
    for (const api of otherApis) for (const id of api.route.endpointsByModel.keys()) this.otherApi.set(id, api);
    if (unrouted.size > 0) log?.info({ providers: [...unrouted] }, 'providers whose wire protocol has no adapter yet are listed but not routed');
    const missing: string[] = [];
    for (const p of catalog.providers) {
      const key = p.apiKey ?? (p.apiKeyEnv ? env[p.apiKeyEnv] : undefined) ?? null;
      this.credentials.set(p.slug, key || null);
      if (!key && !p.noAuth) missing.push(`${p.slug}${p.apiKeyEnv ? ` (set ${p.apiKeyEnv})` : ''}`);
    }
    if (missing.length > 0) log?.info({ providers: missing }, 'providers without credentials are not routable');
  }

  /** A requested model id (no `:variant`) as a catalog id: exact, an organization alias, a model alias, or normalized. */
  resolve(id: string, orgAliases?: Readonly<Record<string, string>> | null): Resolution {
    return resolveModelId(id, this.aliasIndex, orgAliases);
  }

  /** Whether some API (chat, speech, video, embeddings, rerank, transcriptions) routes this endpoint. */
  isRouted(e: EndpointDef): boolean {
    return this.routedEndpoints.has(e);
  }

  hasCredentials = (p: ProviderDef): boolean => p.noAuth === true || Boolean(this.credentials.get(p.slug));

  apiKey(p: ProviderDef): string | null {
    return this.credentials.get(p.slug) ?? null;
  }

  timeouts(p: ProviderDef): Timeouts {
    return { ...DEFAULT_TIMEOUTS, ...p.timeouts };
  }
}

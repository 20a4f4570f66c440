/**
 * The live catalog: the shipped catalog files (services/shipped-catalog.ts), completed and overridden by the config
 * file's `providers`, `models` and `endpoints` sections (built and validated by core/catalog-build.ts). Provider
 * credentials come from the environment or the config file; an endpoint whose provider has none is kept in the catalog
 * but is not routable (logged once at start-up).
 */
import type { Logger } from 'pino';
import type { Catalog, EndpointDef, ModelDef, Protocol, ProviderDef, Timeouts } from '../core/catalog-types.js';
import { imageProtocolOf, isEmbeddingModel, isImageModel, isRerankModel, isTranscriptionModel } from '../core/catalog-build.js';
import type { RouteCatalog } from '../core/routing.js';
import { buildAliasIndex, resolveModelId, type AliasIndex, type Resolution } from '../core/model-aliases.js';

// Where the services and the start-up import them from.
export { buildCatalog, CatalogError, imageProtocolOf, isEmbeddingModel, isImageModel, isRerankModel, isTranscriptionModel, videoProtocolOf } from '../core/catalog-build.js';

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  // Reasoning models may think for minutes between visible chunks.
  idleMs: 300_000,
  totalMs: 1_200_000,
};

/** Wire protocols with an embeddings adapter (OpenAI's `/embeddings`); other endpoints of embedding models are not routed. */
export const EMBEDDING_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai', 'azure-openai', 'bedrock']);

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
export const ROUTABLE_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai', 'anthropic', 'google', 'openai-responses', 'azure-openai', 'azure-openai-responses', 'bedrock', 'vertex', 'vertex-anthropic']);

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
  /**
   * What `POST /images` routes: the endpoints of image models with an image API (docs/images.md). A `gemini-image`
   * endpoint of a model that outputs text too is also in `route` (chat with `modalities: ["image", "text"]`).
   */
  readonly imageRoute: RouteCatalog;
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
    this.imageRoute = routeOver();
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
      const m = models.get(e.model);
      if (m && isImageModel(m)) {
        const imageApi = imageProtocolOf(e, providers.get(e.provider));
        if (imageApi) push(this.imageRoute, e);
        // Image-only models (and image APIs other than Gemini's) are never chat models.
        if (imageApi === 'openai-images' || imageApi === 'azure-openai-images' || imageApi === 'bedrock-image' || !m.architecture.output_modalities.includes('text')) {
          if (!imageApi) unrouted.add(`${e.provider} (${protocol}, image)`);
          continue;
        }
      }
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

  /**
   * Connection limits of an upstream origin: its providers' `max_connections` (the largest, when several providers
   * share an origin) and `http2` (any), else the defaults.
   */
  originLimits(origin: string, defaults: { connections: number; http2: boolean }): { connections: number; http2: boolean } {
    let connections: number | undefined;
    let http2: boolean | undefined;
    for (const p of this.catalog.providers) {
      if (originOf(p.baseUrl) !== origin) continue;
      if (p.maxConnections !== undefined) connections = Math.max(connections ?? 0, p.maxConnections);
      if (p.http2 !== undefined) http2 = (http2 ?? false) || p.http2;
    }
    return { connections: connections ?? defaults.connections, http2: http2 ?? defaults.http2 };
  }
}

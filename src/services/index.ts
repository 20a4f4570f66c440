/** The services a running gateway is made of; routes receive this bundle. */
import type { GatewayConfig } from '../config.js';
import type { Store } from '../store/types.js';
import type { InvalidationBus } from './invalidation.js';
import type { RateLimiter } from './rate-limits.js';
import type { KeyService } from './keys.js';
import type { MemberService } from './members.js';
import type { PresetService } from './presets.js';
import type { WorkspaceService } from './workspaces.js';
import type { CatalogService } from './catalog.js';
import type { ChatService } from './chat.js';
import type { ServerToolService } from './server-tools.js';
import type { ResponseCache } from './response-cache.js';
import type { GenerationRecorder } from './generations.js';
import type { GenerationLookup } from './generation-lookup.js';
import type { ActivityService } from './activity.js';
import type { HealthTracker } from './health.js';
import type { GuardrailService } from './guardrails.js';
import type { SpeechService } from './speech.js';
import type { EmbeddingsService } from './embeddings.js';
import type { GatewayMetrics } from './metrics.js';
import type { CountTokensService } from './count-tokens.js';
import type { TranscriptionService } from './transcriptions.js';
import type { RerankService } from './rerank.js';
import type { ImagesService } from './images.js';
import type { VideoService } from './videos.js';
import type { SpendService } from './spend/index.js';
import type { CreditService } from './spend/credits.js';
import type { WorkspaceBudgetService } from './spend/budgets.js';
import type { ByokService } from './byok.js';
import type { FileService } from './files/index.js';

import type { IoLogging } from './observability/io-logging.js';
import type { Tracing } from './observability/tracing.js';
import type { DestinationService } from './observability/destinations.js';
import type { Broadcast } from './observability/broadcast.js';

export interface Services {
  config: GatewayConfig;
  /** Prometheus metrics (GET /metrics); null when GATEWAY_METRICS=off. */
  metrics: GatewayMetrics | null;
  store: Store;
  bus: InvalidationBus;
  keys: KeyService;
  /** Per-key rate limits, counted per instance or, with Redis, across instances. */
  rateLimits: RateLimiter;
  workspaces: WorkspaceService;
  members: MemberService;
  presets: PresetService;
  catalog: CatalogService;
  health: HealthTracker;
  recorder: GenerationRecorder;
  /** GET /generation: a record, for its own key or a management key. */
  generations: GenerationLookup;
  /** I/O logging: which requests keep their content, GET /generation/content, the retention job (docs/observability.md). */
  io: IoLogging;
  /** OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT); null when off — then no span is ever created. */
  tracing: Tracing | null;
  /** Broadcast destinations: their management (/observability/destinations) and their delivery. */
  destinations: DestinationService;
  broadcast: Broadcast;
  /** GET /activity: the organization's usage per day, model and endpoint. */
  activity: ActivityService;
  chat: ChatService;
  /** The response cache of the inference APIs (X-Gateway-Cache; docs/cache.md). */
  cache: ResponseCache;
  /** Server tools on chat (gateway:web_search, gateway:datetime): the model/tool loop (docs/server-tools.md). */
  serverTools: ServerToolService;
  /** Text-to-speech (POST /audio/speech). */
  speech: SpeechService;
  /** Embeddings (POST /embeddings). */
  embeddings: EmbeddingsService;
  /** Token counts of Messages requests (POST /messages/count_tokens). */
  countTokens: CountTokensService;
  /** Speech to text (POST /audio/transcriptions). */
  transcriptions: TranscriptionService;
  /** Rerank (POST /rerank). */
  rerank: RerankService;
  /** Image generation (POST /images, GET /images/models…). */
  images: ImagesService;
  /** Video generation jobs and their worker (POST /videos; docs/videos.md). */
  videos: VideoService;
  /** Organization settings and guardrails: management and the effective policy of each key. */
  guardrails: GuardrailService;
  /** Spend control: reservations over every limit of a request (docs/spend.md). */
  spend: SpendService;
  /** The organization's credit ledger and balance (GET /credits, POST /credits/adjustments). */
  credits: CreditService;
  /** Workspace budgets (/workspaces/{id}/budgets). */
  budgets: WorkspaceBudgetService;
  /** BYOK credentials (/byok; docs/byok.md): management and the credentials each request may route on. */
  byok: ByokService;
  /** Files (/files; docs/files.md). */
  files: FileService;
  /** Readiness checks (name → check) of GET /ready: the store first, then the subsystems that register one. */
  readiness: Map<string, () => Promise<boolean>>;
  /** Work to finish at shutdown after the server stopped accepting (flush usage, stop workers). */
  onShutdown: Array<() => Promise<void>>;
}

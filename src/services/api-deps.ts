/** What the services of the non-chat inference APIs (speech, embeddings, transcriptions, rerank) are built with and called with. */
import type { Logger } from 'pino';
import type { Cancellation, UpstreamHttp } from '../providers/http.js';
import type { KeyRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import type { GenerationRecorder } from './generations.js';
import type { GuardrailService } from './guardrails.js';
import type { HealthTracker } from './health.js';
import type { WorkspaceService } from './workspaces.js';
import type { CacheAsk, CacheStep } from './attempts/cache-step.js';
import type { ByokService } from './byok.js';
import type { IoLogging } from './observability/io-logging.js';
import type { RequestTrace } from './observability/tracing.js';

export interface ApiServiceDeps {
  catalog: CatalogService;
  health: HealthTracker;
  http: UpstreamHttp;
  recorder: GenerationRecorder;
  workspaces?: WorkspaceService;
  /** Organization settings and guardrails; absent = no policy. */
  guardrails?: GuardrailService;
  log: Logger;
  /** The clock (tests move it); default Date.now. */
  now?: () => number;
  /** Randomness of the load-balancing strategy; default Math.random. */
  rng?: () => number;
  /** The response cache step (services/attempts/cache-step.ts), for the APIs that offer it; absent = no cache. */
  cache?: CacheStep;
  /** BYOK credentials (docs/byok.md): absent = the operator's keys only. */
  byok?: ByokService;
  /** I/O logging (docs/observability.md); absent = never. */
  io?: IoLogging;
}

/** One request to such a service: who asks, and how the reply is shaped. */
export interface ApiCall {
  key: KeyRow;
  requestId: string;
  /** `X-Gateway-Metadata: enabled`: add `gateway_metadata`. */
  wantMetadata: boolean;
  /** Set when the client goes away. */
  cancel: Cancellation;
  /** What the client asked of the response cache (APIs that offer it). */
  cache?: CacheAsk;
  /** The request's trace when tracing is on (docs/observability.md); absent = off. */
  trace?: RequestTrace;
}

/**
 * The chat service's shapes (services/chat.ts): its options and dependencies, a call, a prepared request, the outcome
 * of its attempts and the relay state of a stream.
 */
import type { Logger } from 'pino';
import type { TokenUsage } from '../../core/pricing.js';
import type { Attempt, RoutePlan } from '../../core/routing.js';
import type { HttpError } from '../../core/errors.js';
import type { UpstreamError } from '../../core/provider-errors.js';
import type { Cancellation, UpstreamExchange, UpstreamHttp } from '../../providers/http.js';
import type { KeyRow } from '../../store/types.js';
import type { IrRequest } from '../../core/ir.js';
import type { CompiledFilter } from '../../core/content-filters/index.js';
import type { AnyPipelineEntry as PipelineEntry, PluginSettings } from '../../core/plugins.js';
import type { PluginSteps } from '../plugins/index.js';
import type { StreamHealer } from '../plugins/healing.js';
import type { AttemptCodec, InboundApi, StreamSession } from '../codecs.js';
import type { AttemptLog } from '../attempts/errors.js';
import type { Held } from './held.js';
import type { CatalogService } from '../catalog.js';
import type { GenerationRecorder } from '../generations.js';
import type { HealthTracker } from '../health.js';
import type { PresetService } from '../presets.js';
import type { WorkspaceService } from '../workspaces.js';
import type { GuardrailService } from '../guardrails.js';
import type { GenerationSpec } from '../attempts/runner.js';
import type { CacheAsk, CacheStep } from '../attempts/cache-step.js';
import type { ByokService } from '../byok.js';
import type { IoCapture } from '../../core/io-log.js';
import type { IoLogging } from '../observability/io-logging.js';
import type { RequestTrace } from '../observability/tracing.js';

export interface ChatDeps {
  catalog: CatalogService;
  health: HealthTracker;
  http: UpstreamHttp;
  recorder: GenerationRecorder;
  presets: PresetService;
  workspaces: WorkspaceService;
  /** Organization settings and guardrails; absent = no policy. */
  guardrails?: GuardrailService;
  log: Logger;
  options: ChatOptions;
  /** The response cache step (services/attempts/cache-step.ts); absent = no cache. */
  cache?: CacheStep;
  /** Request plugins as preparation and reply steps (services/plugins); absent = none run. */
  plugins?: PluginSteps;
  /** I/O logging (docs/observability.md); absent = never. */
  io?: IoLogging;
  /** BYOK credentials (docs/byok.md): absent = the operator's keys only. */
  byok?: ByokService;
  now?: () => number;
  rng?: () => number;
}

export interface ChatOptions {
  /** Interval of `: GATEWAY PROCESSING` comments while a stream waits (ms). */
  keepaliveMs: number;
  /** How long a session stays pinned to its endpoint (ms). */
  sessionTtlMs: number;
  /** An unknown model falls back to the workspace's `default_text_model` (GATEWAY_UNKNOWN_MODEL_FALLBACK). */
  unknownModelFallback?: boolean;
}

export interface ChatCall {
  key: KeyRow;
  requestId: string;
  wantMetadata: boolean;
  sessionHeader?: string;
  /** The request's `anthropic-beta` values, forwarded to Anthropic-protocol upstreams. */
  anthropicBeta?: string[];
  /** Set when the client goes away. */
  cancel: Cancellation;
  /** What the client asked of the response cache. */
  cache?: CacheAsk;
  /** The request's trace when tracing is on (docs/observability.md); absent = off. */
  trace?: RequestTrace;
}

export interface Prepared {
  api: InboundApi;
  body: Record<string, unknown>;
  /** The request in the internal representation (built when an attempt needs translation). */
  ir?: Omit<IrRequest, 'model'>;
  /** 'translated' when some attempt goes through the IR (any pair but chat → OpenAI protocol). */
  protocols: Set<'translated'>;
  requested: string;
  plan: RoutePlan;
  stream: boolean;
  presetId: string | null;
  sessionId: string | null;
  dropped: Map<string, string[]>;
  /** The output the request asks for at most (null: the endpoint's maximum) and its rough prompt size (tokens). */
  maxOut: number | null;
  promptEstimate: number;
  /** The key's content filters (content guardrails), null when it has none. */
  filters: CompiledFilter[] | null;
  /** `gateway_metadata.pipeline` entries (content guardrails, plugins). */
  pipeline?: PipelineEntry[];
  /** Content guardrails on a streamed reply (null: none apply, or the reply is not streamed). */
  outputFilters?: CompiledFilter[] | null;
  /** response-healing on a streamed reply: makes each attempt's healer (null when off or no JSON is asked for). */
  outputHealing?: (() => StreamHealer) | null;
  /** The request's plugins (docs/plugins.md). */
  plugins: PluginSettings;
  /** I/O logging: what this request keeps of its content; null when its workspace does not log it. */
  io: IoCapture | null;
}


/** What each answer (JSON, streamed) gives the runner: how an attempt is made and what becomes of it. */
export type ApiCallbacks<T, R> = Pick<GenerationSpec<Attempt, T, R>, 'attempt' | 'served' | 'sample' | 'failed' | 'exhausted'>;

/** The attempt being relayed: its stream session, and output held back for the final write. */
export interface Relay {
  session: StreamSession | null;
  /** The output held for the final write (services/chat/held.ts): bytes from the chat relay, text from the others. */
  held: Held;
  /** I/O logging's copy of the client-bound text (references to the same strings); null when not logged. */
  tap: string[] | null;
}

export interface Outcome {
  attempt: Attempt | null;
  attemptNo: number;
  usage: TokenUsage | null;
  upstreamId: string | null;
  finish: string | null;
  nativeFinish: string | null;
  status: number;
  error: UpstreamError | HttpError | null;
  ttftMs: number | null;
  cancelled: boolean;
  /** The usage was counted by the gateway (a cut stream without the upstream's usage), not reported. */
  estimated?: boolean;
  started: number;
  firstTokenAt: number | null;
  /** What content guardrails did to a streamed reply (gateway_metadata.pipeline, after the input's entries). */
  outputPipeline?: PipelineEntry[];
}

/** Tokens an answer used (token rate limits settle to it); undefined when unknown. */
export const usedTokens = (o: Outcome) => (o.usage ? o.usage.promptTokens + o.usage.completionTokens : undefined);

/** What the answer modules (services/chat/stream.ts) use of the chat service. */
export interface ChatEngine {
  now(): number;
  readonly keepaliveMs: number;
  /** A fresh outcome (nothing served yet). */
  fresh(): Outcome;
  /** The runner's spec of a request: the answer's callbacks with the plan, spend, health and records. */
  generation<T, R>(p: Prepared, call: ChatCall, id: string, o: Outcome, run: ApiCallbacks<T, R>): GenerationSpec<Attempt, T, R>;
  codec(p: Prepared, a: Attempt): AttemptCodec;
  /** Sends one attempt; resolves with the 2xx exchange (the caller closes it), or throws the mapped UpstreamError. */
  send(p: Prepared, a: Attempt, call: ChatCall, codec: AttemptCodec, stream: boolean): Promise<UpstreamExchange>;
  record(p: Prepared, call: ChatCall, id: string, o: Outcome, attempts: AttemptLog[], cost: number | null): void;
}

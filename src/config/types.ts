/** The gateway's configuration as the rest of the code sees it (loaded and validated by config.ts). */

export interface GatewayConfig {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | null;
  adminKey: string | null;
  adminEmail: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Request body size limit in bytes. */
  bodyLimit: number;
  /** V8's old-generation growing factor as 1 + this/100 for `serve` (0 = V8's own; services/heap-growth.ts). */
  heapGrowingPercent: number;
  /** How long a cached key stays valid without an invalidation (ms). */
  keyCacheTtlMs: number;
  /** Grace period for in-flight requests at shutdown (ms). */
  shutdownGraceMs: number;
  /** A stream that has written nothing for this long gets a `: GATEWAY PROCESSING` comment (ms). */
  streamKeepaliveMs: number;
  /** How long a `session_id` stays on its endpoint (ms). */
  sessionTtlMs: number;
  /** The most a whole (non-streamed) upstream answer may weigh; also bounds one stream event (with 32 MiB). */
  upstreamMaxBytes: number;
  /** Generation records are written at least this often (the most a kill -9 can lose is about this much). */
  recordFlushMs: number;
  /** Whether the shipped catalog of public providers and models is loaded. */
  defaultCatalog: boolean;
  /** A request for an unknown model is served by its workspace's `default_text_model` (opt-in; docs/agents.md). */
  unknownModelFallback: boolean;
  /** Keys the gateway's signatures on thinking no upstream signed (docs/agents.md); null = generated once, stored in the database. */
  reasoningSecret: string | null;
  /** The raw `catalog`/`providers` sections of the file, interpreted by the catalog loader. */
  file: Record<string, unknown>;
  /** Video generation jobs and their webhooks (docs/videos.md). */
  video: VideoConfig;
  /** `GET /metrics` (docs/metrics.md): for management keys (default), for anyone, or not served. */
  metrics: 'management' | 'public' | 'off';
  /** The search engine behind the `gateway:web_search` server tool (docs/server-tools.md); null = no web search. */
  webSearch: { engine: 'searxng' | 'tavily'; url: string; apiKey: string | null } | null;
  /** The `gateway:web_fetch` server tool: off, on for public addresses, or on for private ones too. */
  webFetch: 'off' | 'public' | 'private';
  /** Database migrations at start: applied (`auto`), or only verified (`off`: a migration Job applies them). */
  migrate: 'auto' | 'off';
  /** Spend control (docs/spend.md): the organization's credit balance, and what limited requests get without Redis. */
  spend: SpendConfig;
  /** Secrets at rest (BYOK credentials; docs/byok.md): the current key and older ones still accepted for reading. */
  encryption: { key: string | null; previous: string[] };
  /** I/O logging, tracing and broadcast (docs/observability.md). */
  observability: ObservabilityConfig;
  /** The web console at `/console` (docs/console.md): served (default) or not (`GATEWAY_CONSOLE=off`). */
  console: boolean;
  /** Files (docs/files.md): where uploads are stored, and each workspace's quota. */
  files: FilesConfig;
  /** The `moderation` plugin's endpoint, in OpenAI's moderation API shape (docs/plugins.md); null = not configured. */
  moderation: { url: string; apiKey: string | null; model: string } | null;
  /** Upstream connections: the default bound per provider origin and HTTP/2 (a provider's `max_connections`/`http2` win). */
  upstream: { connections: number; http2: boolean };
  /** Processes serving the port (node:cluster; docs/operations.md#workers): more than 1 needs PostgreSQL and Redis. */
  workers: number;
}

export interface FilesConfig {
  /** Local storage directory (GATEWAY_FILES_DIR; also where uploads are spooled before going to S3). */
  dir: string;
  /** Total bytes of files one workspace may store (GATEWAY_FILES_QUOTA_BYTES). */
  quotaBytes: number;
  /** S3-compatible object storage (GATEWAY_FILES_S3_BUCKET and friends); null = the local directory. */
  s3: { bucket: string; endpoint: string | null; region: string; prefix: string; forcePathStyle: boolean } | null;
}

export interface ObservabilityConfig {
  /** Logged content is deleted after this many days (GATEWAY_IO_LOG_RETENTION_DAYS). */
  ioLogRetentionDays: number;
  /** The most bytes one request's logged content keeps (GATEWAY_IO_LOG_MAX_BYTES); longer strings are cut. */
  ioLogMaxBytes: number;
  /** Trace export (OTEL_EXPORTER_OTLP_ENDPOINT and the other standard variables); null = tracing off. */
  otlp: OtlpConfig | null;
  /** Broadcast destinations' delivery (GATEWAY_BROADCAST_*). */
  broadcast: { allowLoopback: boolean; maxAttempts: number; retryMs: number; timeoutMs: number; queueLimit: number };
}

/** Where traces go over OTLP/HTTP. */
export interface OtlpConfig {
  /** The traces URL (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
}


export interface SpendConfig {
  /** Requests are refused (402) once the organization's credits are spent (GATEWAY_CREDITS; off by default). */
  credits: boolean;
  /** While Redis is unreachable, limited requests get 503 (`closed`, the default) or are counted per instance (`local`). */
  redisDown: 'closed' | 'local';
  /** Heartbeat TTL of an instance's holds in Redis: a dead instance's holds stop counting after it (ms). */
  heartbeatTtlMs: number;
}

export interface VideoConfig {
  /** Whether this instance drives video jobs (submits, polls, expires, sends webhooks). */
  worker: boolean;
  /** Worker cadence, and the interval between two upstream polls of a job (ms). */
  pollMs: number;
  /** How long a worker holds a job without renewing its lease (ms); a stopped instance's jobs move on after this. */
  leaseMs: number;
  /** A job not finished this long after its creation expires (ms). */
  jobTimeoutMs: number;
  /** HMAC-SHA256 secret signing webhooks (`X-Gateway-Signature`); null = unsigned. */
  webhookSecret: string | null;
  /** Delivery attempts of a webhook before it is given up. */
  webhookMaxAttempts: number;
  /** Delay before the first retry; doubles at each attempt, capped at one hour (ms). */
  webhookRetryMs: number;
  /** Accept `callback_url`s on loopback addresses (http or https): for tests and local development only. */
  allowLoopbackCallbacks: boolean;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

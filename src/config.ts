/**
 * Gateway configuration: environment variables over an optional YAML or JSON file (path in GATEWAY_CONFIG).
 * Validated once at start-up; every mistake is reported with the setting's name and the rule it breaks.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { Type } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import { RULE, schemaProblems } from './core/catalog-schema.js';

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
  /** How long a cached key stays valid without an invalidation (ms). */
  keyCacheTtlMs: number;
  /** Grace period for in-flight requests at shutdown (ms). */
  shutdownGraceMs: number;
  /** A stream that has written nothing for this long gets a `: GATEWAY PROCESSING` comment (ms). */
  streamKeepaliveMs: number;
  /** How long a `session_id` stays on its endpoint (ms). */
  sessionTtlMs: number;
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

/** `k1=v1,k2=v2` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS holds them. */
export function parseOtlpHeaders(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const raw = part.slice(i + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // kept as written
    }
    out[part.slice(0, i).trim()] = value;
  }
  return out;
}

/** Tracing from the standard variables: on when an OTLP endpoint is set, unless the SDK or the traces exporter is off. */
function otlpFrom(env: Record<string, string | undefined>, problems: string[]): OtlpConfig | null {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return null;
  if ((env.OTEL_TRACES_EXPORTER ?? 'otlp').toLowerCase() === 'none') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!traces && !base) return null;
  const url = traces || `${base!.replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^/]/.test(url)) {
    problems.push(`${traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} must be an http:// or https:// URL (got "${traces || base}")`);
    return null;
  }
  return { url, headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? ''), serviceName: env.OTEL_SERVICE_NAME || 'model-gateway' };
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

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Keys accepted in the config file, mapped to their environment variable. */
const FILE_KEYS: Record<string, string> = {
  port: 'PORT',
  host: 'HOST',
  database_url: 'GATEWAY_DATABASE_URL',
  redis_url: 'GATEWAY_REDIS_URL',
  admin_key: 'GATEWAY_ADMIN_KEY',
  admin_email: 'GATEWAY_ADMIN_EMAIL',
  log_level: 'GATEWAY_LOG_LEVEL',
  body_limit: 'GATEWAY_BODY_LIMIT',
  key_cache_ttl_ms: 'GATEWAY_KEY_CACHE_TTL_MS',
  shutdown_grace_ms: 'GATEWAY_SHUTDOWN_GRACE_MS',
  stream_keepalive_ms: 'GATEWAY_STREAM_KEEPALIVE_MS',
  session_ttl_ms: 'GATEWAY_SESSION_TTL_MS',
  record_flush_ms: 'GATEWAY_RECORD_FLUSH_MS',
  default_catalog: 'GATEWAY_DEFAULT_CATALOG',
  unknown_model_fallback: 'GATEWAY_UNKNOWN_MODEL_FALLBACK',
  reasoning_secret: 'GATEWAY_REASONING_SECRET',
  video_worker: 'GATEWAY_VIDEO_WORKER',
  video_poll_ms: 'GATEWAY_VIDEO_POLL_MS',
  video_lease_ms: 'GATEWAY_VIDEO_LEASE_MS',
  video_job_timeout_ms: 'GATEWAY_VIDEO_JOB_TIMEOUT_MS',
  webhook_secret: 'GATEWAY_WEBHOOK_SECRET',
  webhook_max_attempts: 'GATEWAY_WEBHOOK_MAX_ATTEMPTS',
  webhook_retry_ms: 'GATEWAY_WEBHOOK_RETRY_MS',
  video_allow_loopback_callbacks: 'GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS',
  metrics: 'GATEWAY_METRICS',
  console: 'GATEWAY_CONSOLE',
  web_search_url: 'GATEWAY_WEB_SEARCH_URL',
  web_search_engine: 'GATEWAY_WEB_SEARCH_ENGINE',
  web_search_api_key: 'GATEWAY_WEB_SEARCH_API_KEY',
  web_fetch: 'GATEWAY_WEB_FETCH',
  web_fetch_allow_private: 'GATEWAY_WEB_FETCH_ALLOW_PRIVATE',
  migrate: 'GATEWAY_MIGRATE',
  credits: 'GATEWAY_CREDITS',
  spend_redis_down: 'GATEWAY_SPEND_REDIS_DOWN',
  spend_heartbeat_ttl_ms: 'GATEWAY_SPEND_HEARTBEAT_TTL_MS',
  encryption_key: 'GATEWAY_ENCRYPTION_KEY',
  encryption_key_previous: 'GATEWAY_ENCRYPTION_KEY_PREVIOUS',
  files_dir: 'GATEWAY_FILES_DIR',
  files_quota_bytes: 'GATEWAY_FILES_QUOTA_BYTES',
  files_s3_bucket: 'GATEWAY_FILES_S3_BUCKET',
  files_s3_endpoint: 'GATEWAY_FILES_S3_ENDPOINT',
  files_s3_region: 'GATEWAY_FILES_S3_REGION',
  files_s3_prefix: 'GATEWAY_FILES_S3_PREFIX',
  files_s3_force_path_style: 'GATEWAY_FILES_S3_FORCE_PATH_STYLE',
  moderation_url: 'GATEWAY_MODERATION_URL',
  moderation_api_key: 'GATEWAY_MODERATION_API_KEY',
  moderation_model: 'GATEWAY_MODERATION_MODEL',
  upstream_connections: 'GATEWAY_UPSTREAM_CONNECTIONS',
  upstream_http2: 'GATEWAY_UPSTREAM_HTTP2',
  workers: 'GATEWAY_WORKERS',
  io_log_retention_days: 'GATEWAY_IO_LOG_RETENTION_DAYS',
  io_log_max_bytes: 'GATEWAY_IO_LOG_MAX_BYTES',
  broadcast_allow_loopback: 'GATEWAY_BROADCAST_ALLOW_LOOPBACK',
  broadcast_max_attempts: 'GATEWAY_BROADCAST_MAX_ATTEMPTS',
  broadcast_retry_ms: 'GATEWAY_BROADCAST_RETRY_MS',
  broadcast_timeout_ms: 'GATEWAY_BROADCAST_TIMEOUT_MS',
};
/**
 * Sections of the file read by other modules, which validate them: `providers`, `models` and `endpoints` against the
 * catalog schema (core/catalog-schema.ts) when the catalog is built, the others by their own modules.
 */
const FILE_SECTIONS = ['providers', 'models', 'endpoints', 'routing', 'timeouts', 'organization', 'limits'];

/** The top level of the config file: scalar settings and the sections. */
const ConfigFileSchema = Type.Object(
  {
    ...Object.fromEntries(Object.keys(FILE_KEYS).map((k) => [k, Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { [RULE]: 'must be a scalar value' }))])),
    ...Object.fromEntries(FILE_SECTIONS.map((k) => [k, Type.Optional(Type.Unknown())])),
  },
  { additionalProperties: false },
);

function readFile(path: string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (err) {
    problems.push(`GATEWAY_CONFIG: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    return {};
  }
  try {
    const parsed: unknown = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    if (parsed == null) return {};
    if (typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`GATEWAY_CONFIG: ${path} must contain a mapping at the top level`);
      return {};
    }
    return parsed as Record<string, unknown>;
  } catch (err) {
    problems.push(`GATEWAY_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
    return {};
  }
}

function intSetting(name: string, raw: string | undefined, def: number, min: number, max: number, problems: string[]): number {
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return def;
  }
  return n;
}

/** Connections per provider origin unless configured: room for thousands of concurrent streams (docs/operations.md#sizing). */
export const DEFAULT_UPSTREAM_CONNECTIONS = 16_384;

/**
 * GATEWAY_WORKERS: `auto` (the default) is one process per core when the store is shared (PostgreSQL and Redis), else 1.
 * Several workers need both: limits, rate counters, caches and key invalidations cross processes only through Redis,
 * and SQLite is one process's file.
 */
function workerCount(raw: string | undefined, databaseUrl: string, redisUrl: string | null, problems: string[]): number {
  const shared = redisUrl !== null && /^postgres(ql)?:\/\//.test(databaseUrl);
  if (raw === undefined || raw === '' || raw.toLowerCase() === 'auto') return shared ? Math.max(1, availableParallelism()) : 1;
  const n = intSetting('GATEWAY_WORKERS', raw, 1, 1, 1024, problems);
  if (n > 1 && !shared) {
    problems.push(`GATEWAY_WORKERS=${n} needs a shared store: GATEWAY_REDIS_URL and a postgres:// GATEWAY_DATABASE_URL (limits, caches and key invalidations cross worker processes through Redis); use 1 without them`);
  }
  return n;
}

/** Build the configuration from an environment (defaults to process.env). Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const problems: string[] = [];
  const file = env.GATEWAY_CONFIG ? readFile(env.GATEWAY_CONFIG, problems) : {};

  // Each problem names its key: `colour (config file) is not a known setting; known: …`.
  for (const p of schemaProblems(ConfigFileSchema, file, [], 'setting')) problems.push(p.replace(/^(\S+) /, '$1 (config file) '));

  // File values fill in what the environment leaves unset.
  const merged: Record<string, string | undefined> = { ...env };
  for (const [key, value] of Object.entries(file)) {
    const envName = FILE_KEYS[key];
    if (envName && merged[envName] === undefined && value !== null && typeof value !== 'object') merged[envName] = String(value);
  }

  const port = intSetting('PORT', merged.PORT, 8080, 0, 65535, problems);
  const host = merged.HOST || '0.0.0.0';

  const databaseUrl = merged.GATEWAY_DATABASE_URL || 'sqlite:./data/gateway.db';
  if (!/^(postgres|postgresql):\/\//.test(databaseUrl) && !databaseUrl.startsWith('sqlite:')) {
    problems.push(`GATEWAY_DATABASE_URL must start with postgres://, postgresql:// or sqlite: (got "${databaseUrl}")`);
  }

  const redisUrl = merged.GATEWAY_REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push(`GATEWAY_REDIS_URL must start with redis:// or rediss:// (got "${redisUrl}")`);
  }

  const adminKey = merged.GATEWAY_ADMIN_KEY || null;
  if (adminKey !== null && (adminKey.length < 32 || /\s/.test(adminKey))) {
    problems.push('GATEWAY_ADMIN_KEY must be at least 32 characters without spaces (use a random secret)');
  }

  const adminEmail = merged.GATEWAY_ADMIN_EMAIL || 'admin@localhost';
  if (!/^[^\s@]+@[^\s@]+$/.test(adminEmail)) problems.push(`GATEWAY_ADMIN_EMAIL must be an email address (got "${adminEmail}")`);

  const logLevel = (merged.GATEWAY_LOG_LEVEL || merged.LOG_LEVEL || 'info') as GatewayConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`GATEWAY_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  const bodyLimit = intSetting('GATEWAY_BODY_LIMIT', merged.GATEWAY_BODY_LIMIT, 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems);
  const keyCacheTtlMs = intSetting('GATEWAY_KEY_CACHE_TTL_MS', merged.GATEWAY_KEY_CACHE_TTL_MS, 30_000, 0, 3_600_000, problems);
  const shutdownGraceMs = intSetting('GATEWAY_SHUTDOWN_GRACE_MS', merged.GATEWAY_SHUTDOWN_GRACE_MS, 30_000, 0, 3_600_000, problems);

  const streamKeepaliveMs = intSetting('GATEWAY_STREAM_KEEPALIVE_MS', merged.GATEWAY_STREAM_KEEPALIVE_MS, 3_000, 100, 60_000, problems);
  const sessionTtlMs = intSetting('GATEWAY_SESSION_TTL_MS', merged.GATEWAY_SESSION_TTL_MS, 30 * 60_000, 0, 24 * 3_600_000, problems);
  const recordFlushMs = intSetting('GATEWAY_RECORD_FLUSH_MS', merged.GATEWAY_RECORD_FLUSH_MS, 500, 10, 60_000, problems);
  const dc = (merged.GATEWAY_DEFAULT_CATALOG ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(dc)) problems.push(`GATEWAY_DEFAULT_CATALOG must be true or false (got "${merged.GATEWAY_DEFAULT_CATALOG}")`);
  const defaultCatalog = dc === 'true' || dc === '1';

  const boolSetting = (name: string, def: boolean): boolean => {
    const raw = (merged[name] ?? String(def)).toLowerCase();
    if (!['true', 'false', '1', '0'].includes(raw)) problems.push(`${name} must be true or false (got "${merged[name]}")`);
    return raw === 'true' || raw === '1';
  };
  const webhookSecret = merged.GATEWAY_WEBHOOK_SECRET || null;
  if (webhookSecret !== null && webhookSecret.length < 16) problems.push('GATEWAY_WEBHOOK_SECRET must be at least 16 characters');
  const video: VideoConfig = {
    worker: boolSetting('GATEWAY_VIDEO_WORKER', true),
    pollMs: intSetting('GATEWAY_VIDEO_POLL_MS', merged.GATEWAY_VIDEO_POLL_MS, 5_000, 10, 600_000, problems),
    leaseMs: intSetting('GATEWAY_VIDEO_LEASE_MS', merged.GATEWAY_VIDEO_LEASE_MS, 30_000, 100, 3_600_000, problems),
    jobTimeoutMs: intSetting('GATEWAY_VIDEO_JOB_TIMEOUT_MS', merged.GATEWAY_VIDEO_JOB_TIMEOUT_MS, 3_600_000, 100, 7 * 24 * 3_600_000, problems),
    webhookSecret,
    webhookMaxAttempts: intSetting('GATEWAY_WEBHOOK_MAX_ATTEMPTS', merged.GATEWAY_WEBHOOK_MAX_ATTEMPTS, 8, 1, 100, problems),
    webhookRetryMs: intSetting('GATEWAY_WEBHOOK_RETRY_MS', merged.GATEWAY_WEBHOOK_RETRY_MS, 10_000, 10, 3_600_000, problems),
    allowLoopbackCallbacks: boolSetting('GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS', false),
  };

  const metrics = (merged.GATEWAY_METRICS || 'management').toLowerCase() as GatewayConfig['metrics'];
  if (!['management', 'public', 'off'].includes(metrics)) problems.push(`GATEWAY_METRICS must be management, public or off (got "${merged.GATEWAY_METRICS}")`);

  const engine = (merged.GATEWAY_WEB_SEARCH_ENGINE || 'searxng').toLowerCase();
  if (engine !== 'searxng' && engine !== 'tavily') problems.push(`GATEWAY_WEB_SEARCH_ENGINE must be searxng or tavily (got "${merged.GATEWAY_WEB_SEARCH_ENGINE}")`);
  const searchKey = merged.GATEWAY_WEB_SEARCH_API_KEY || null;
  const searchUrl = merged.GATEWAY_WEB_SEARCH_URL || (engine === 'tavily' && searchKey ? 'https://api.tavily.com' : null);
  if (searchUrl !== null && !/^https?:\/\/[^/]/.test(searchUrl)) problems.push(`GATEWAY_WEB_SEARCH_URL must be an http:// or https:// URL (got "${searchUrl}")`);
  if (engine === 'tavily' && merged.GATEWAY_WEB_SEARCH_ENGINE && !searchKey) problems.push('GATEWAY_WEB_SEARCH_API_KEY is required for the tavily search engine');
  const webSearch = searchUrl && (engine === 'searxng' || engine === 'tavily') ? { engine: engine as 'searxng' | 'tavily', url: searchUrl, apiKey: searchKey } : null;

  const unknownModelFallback = boolSetting('GATEWAY_UNKNOWN_MODEL_FALLBACK', false);
  const reasoningSecret = merged.GATEWAY_REASONING_SECRET || null;
  if (reasoningSecret !== null && reasoningSecret.length < 32) problems.push('GATEWAY_REASONING_SECRET must be at least 32 characters (use a random secret)');
  const webFetch = boolSetting('GATEWAY_WEB_FETCH', false) ? (boolSetting('GATEWAY_WEB_FETCH_ALLOW_PRIVATE', false) ? 'private' : 'public') : 'off';

  const migrate = (merged.GATEWAY_MIGRATE || 'auto').toLowerCase() as GatewayConfig['migrate'];
  if (migrate !== 'auto' && migrate !== 'off') problems.push(`GATEWAY_MIGRATE must be auto or off (got "${merged.GATEWAY_MIGRATE}")`);

  const redisDown = (merged.GATEWAY_SPEND_REDIS_DOWN || 'closed').toLowerCase();
  if (redisDown !== 'closed' && redisDown !== 'local') problems.push(`GATEWAY_SPEND_REDIS_DOWN must be closed or local (got "${merged.GATEWAY_SPEND_REDIS_DOWN}")`);
  const spend: SpendConfig = {
    credits: boolSetting('GATEWAY_CREDITS', false),
    redisDown: redisDown === 'local' ? 'local' : 'closed',
    heartbeatTtlMs: intSetting('GATEWAY_SPEND_HEARTBEAT_TTL_MS', merged.GATEWAY_SPEND_HEARTBEAT_TTL_MS, 10_000, 300, 600_000, problems),
  };

  const encryptionKey = merged.GATEWAY_ENCRYPTION_KEY || null;
  const previousKeys = (merged.GATEWAY_ENCRYPTION_KEY_PREVIOUS || '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const [name, k] of [...(encryptionKey ? [['GATEWAY_ENCRYPTION_KEY', encryptionKey]] : []), ...previousKeys.map((k) => ['GATEWAY_ENCRYPTION_KEY_PREVIOUS', k])]) {
    if (k.length < 32 || /\s/.test(k)) problems.push(`${name} must be at least 32 characters without spaces (use a random secret, e.g. openssl rand -base64 32)`);
  }
  if (previousKeys.length > 0 && !encryptionKey) problems.push('GATEWAY_ENCRYPTION_KEY_PREVIOUS needs GATEWAY_ENCRYPTION_KEY (the key new secrets are sealed with)');
  const encryption = { key: encryptionKey, previous: previousKeys };
  const observability: ObservabilityConfig = {
    ioLogRetentionDays: intSetting('GATEWAY_IO_LOG_RETENTION_DAYS', merged.GATEWAY_IO_LOG_RETENTION_DAYS, 30, 1, 3650, problems),
    ioLogMaxBytes: intSetting('GATEWAY_IO_LOG_MAX_BYTES', merged.GATEWAY_IO_LOG_MAX_BYTES, 256 * 1024, 1024, 16 * 1024 * 1024, problems),
    otlp: otlpFrom(merged, problems),
    broadcast: {
      allowLoopback: boolSetting('GATEWAY_BROADCAST_ALLOW_LOOPBACK', false),
      maxAttempts: intSetting('GATEWAY_BROADCAST_MAX_ATTEMPTS', merged.GATEWAY_BROADCAST_MAX_ATTEMPTS, 5, 1, 50, problems),
      retryMs: intSetting('GATEWAY_BROADCAST_RETRY_MS', merged.GATEWAY_BROADCAST_RETRY_MS, 1000, 10, 600_000, problems),
      timeoutMs: intSetting('GATEWAY_BROADCAST_TIMEOUT_MS', merged.GATEWAY_BROADCAST_TIMEOUT_MS, 10_000, 100, 120_000, problems),
      queueLimit: 10_000,
    },
  };

  const consoleSetting = (merged.GATEWAY_CONSOLE || 'on').toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(consoleSetting)) problems.push(`GATEWAY_CONSOLE must be on or off (got "${merged.GATEWAY_CONSOLE}")`);
  const consoleOn = consoleSetting === 'on' || consoleSetting === 'true' || consoleSetting === '1';

  const s3Endpoint = merged.GATEWAY_FILES_S3_ENDPOINT || null;
  if (s3Endpoint !== null && !/^https?:\/\/[^/]/.test(s3Endpoint)) problems.push(`GATEWAY_FILES_S3_ENDPOINT must be an http:// or https:// URL (got "${s3Endpoint}")`);
  const files: FilesConfig = {
    dir: merged.GATEWAY_FILES_DIR || 'data/files',
    quotaBytes: intSetting('GATEWAY_FILES_QUOTA_BYTES', merged.GATEWAY_FILES_QUOTA_BYTES, 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER, problems),
    s3: merged.GATEWAY_FILES_S3_BUCKET
      ? {
          bucket: merged.GATEWAY_FILES_S3_BUCKET,
          endpoint: s3Endpoint,
          region: merged.GATEWAY_FILES_S3_REGION || 'us-east-1',
          prefix: merged.GATEWAY_FILES_S3_PREFIX ?? '',
          forcePathStyle: boolSetting('GATEWAY_FILES_S3_FORCE_PATH_STYLE', s3Endpoint !== null),
        }
      : null,
  };

  const moderationUrl = merged.GATEWAY_MODERATION_URL || null;
  if (moderationUrl !== null && !/^https?:\/\/[^/]/.test(moderationUrl)) problems.push(`GATEWAY_MODERATION_URL must be an http:// or https:// URL (got "${moderationUrl}")`);
  const moderation = moderationUrl ? { url: moderationUrl, apiKey: merged.GATEWAY_MODERATION_API_KEY || null, model: merged.GATEWAY_MODERATION_MODEL || 'omni-moderation-latest' } : null;

  const upstream = {
    connections: intSetting('GATEWAY_UPSTREAM_CONNECTIONS', merged.GATEWAY_UPSTREAM_CONNECTIONS, DEFAULT_UPSTREAM_CONNECTIONS, 1, 1_000_000, problems),
    http2: boolSetting('GATEWAY_UPSTREAM_HTTP2', false),
  };
  const workers = workerCount(merged.GATEWAY_WORKERS, databaseUrl, redisUrl, problems);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    files, moderation, console: consoleOn, port, host, databaseUrl, redisUrl, adminKey, adminEmail, logLevel, bodyLimit, keyCacheTtlMs,
    shutdownGraceMs, streamKeepaliveMs, sessionTtlMs, recordFlushMs, defaultCatalog, unknownModelFallback, reasoningSecret, file,
    video, metrics, webSearch, webFetch, migrate, spend, upstream, workers, encryption, observability,
  };
}

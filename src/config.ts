/**
 * Gateway configuration: environment variables over an optional YAML or JSON file (path in GATEWAY_CONFIG).
 * Validated once at start-up; every mistake is reported with the setting's name and the rule it breaks.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
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
  /** The web console at `/console` (docs/console.md): served (default) or not (`GATEWAY_CONSOLE=off`). */
  console: boolean;
  /** Files (docs/files.md): where uploads are stored, and each workspace's quota. */
  files: FilesConfig;
  /** The `moderation` plugin's endpoint, in OpenAI's moderation API shape (docs/plugins.md); null = not configured. */
  moderation: { url: string; apiKey: string | null; model: string } | null;
}

export interface FilesConfig {
  /** Local storage directory (GATEWAY_FILES_DIR; also where uploads are spooled before going to S3). */
  dir: string;
  /** Total bytes of files one workspace may store (GATEWAY_FILES_QUOTA_BYTES). */
  quotaBytes: number;
  /** S3-compatible object storage (GATEWAY_FILES_S3_BUCKET and friends); null = the local directory. */
  s3: { bucket: string; endpoint: string | null; region: string; prefix: string; forcePathStyle: boolean } | null;
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
  upstream_max_bytes: 'GATEWAY_UPSTREAM_MAX_BYTES',
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
  const upstreamMaxBytes = intSetting('GATEWAY_UPSTREAM_MAX_BYTES', merged.GATEWAY_UPSTREAM_MAX_BYTES, 128 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems);
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

  if (problems.length > 0) throw new ConfigError(problems);
  return { files, moderation, console: consoleOn, port, host, databaseUrl, redisUrl, adminKey, adminEmail, logLevel, bodyLimit, keyCacheTtlMs, shutdownGraceMs, streamKeepaliveMs, sessionTtlMs, recordFlushMs, upstreamMaxBytes, defaultCatalog, unknownModelFallback, reasoningSecret, file, video, metrics, webSearch, webFetch, migrate, spend };
}

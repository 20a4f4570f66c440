/**
 * The settings read from the merged environment (the file fills in what the environment leaves unset), one builder
 * per section of GatewayConfig. Every builder appends its mistakes to the shared problem list, in reading order.
 */
import { availableParallelism } from 'node:os';
import type { FilesConfig, GatewayConfig, ObservabilityConfig, OtlpConfig, SpendConfig, VideoConfig } from './types.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Connections per provider origin unless configured: room for thousands of concurrent streams (docs/operations.md#sizing). */
export const DEFAULT_UPSTREAM_CONNECTIONS = 16_384;

/** The merged settings and the problems found reading them. */
export class Settings {
  constructor(
    readonly env: Record<string, string | undefined>,
    readonly problems: string[],
  ) {}

  int(name: string, def: number, min: number, max: number): number {
    return intSetting(name, this.env[name], def, min, max, this.problems);
  }

  bool(name: string, def: boolean): boolean {
    const raw = (this.env[name] ?? String(def)).toLowerCase();
    if (!['true', 'false', '1', '0'].includes(raw)) this.problems.push(`${name} must be true or false (got "${this.env[name]}")`);
    return raw === 'true' || raw === '1';
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

/** Listening, database, Redis, bootstrap admin, logging, and the request path's sizes and timings. */
export function serverSettings(s: Settings) {
  const { env: merged, problems } = s;
  const port = s.int('PORT', 8080, 0, 65535);
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

  const bodyLimit = s.int('GATEWAY_BODY_LIMIT', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024);
  // The old generation may grow this much past its live size before a full collection (docs/operations.md).
  const heapGrowingPercent = s.int('GATEWAY_HEAP_GROWING_PERCENT', 100, 0, 1000);
  const keyCacheTtlMs = s.int('GATEWAY_KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000);
  const shutdownGraceMs = s.int('GATEWAY_SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000);

  const streamKeepaliveMs = s.int('GATEWAY_STREAM_KEEPALIVE_MS', 3_000, 100, 60_000);
  const sessionTtlMs = s.int('GATEWAY_SESSION_TTL_MS', 30 * 60_000, 0, 24 * 3_600_000);
  const recordFlushMs = s.int('GATEWAY_RECORD_FLUSH_MS', 500, 10, 60_000);
  const upstreamMaxBytes = s.int('GATEWAY_UPSTREAM_MAX_BYTES', 128 * 1024 * 1024, 1024, 1024 * 1024 * 1024);
  const dc = (merged.GATEWAY_DEFAULT_CATALOG ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(dc)) problems.push(`GATEWAY_DEFAULT_CATALOG must be true or false (got "${merged.GATEWAY_DEFAULT_CATALOG}")`);
  const defaultCatalog = dc === 'true' || dc === '1';
  return {
    port, host, databaseUrl, redisUrl, adminKey, adminEmail, logLevel, bodyLimit, heapGrowingPercent, keyCacheTtlMs, shutdownGraceMs, streamKeepaliveMs,
    sessionTtlMs, recordFlushMs, upstreamMaxBytes, defaultCatalog,
  };
}

export function videoSettings(s: Settings): VideoConfig {
  const webhookSecret = s.env.GATEWAY_WEBHOOK_SECRET || null;
  if (webhookSecret !== null && webhookSecret.length < 16) s.problems.push('GATEWAY_WEBHOOK_SECRET must be at least 16 characters');
  return {
    worker: s.bool('GATEWAY_VIDEO_WORKER', true),
    pollMs: s.int('GATEWAY_VIDEO_POLL_MS', 5_000, 10, 600_000),
    leaseMs: s.int('GATEWAY_VIDEO_LEASE_MS', 30_000, 100, 3_600_000),
    jobTimeoutMs: s.int('GATEWAY_VIDEO_JOB_TIMEOUT_MS', 3_600_000, 100, 7 * 24 * 3_600_000),
    webhookSecret,
    webhookMaxAttempts: s.int('GATEWAY_WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
    webhookRetryMs: s.int('GATEWAY_WEBHOOK_RETRY_MS', 10_000, 10, 3_600_000),
    allowLoopbackCallbacks: s.bool('GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS', false),
  };
}

/** `GET /metrics`, the server tools (web search and fetch), the unknown-model fallback and the reasoning secret. */
export function featureSettings(s: Settings) {
  const { env: merged, problems } = s;
  const metrics = (merged.GATEWAY_METRICS || 'management').toLowerCase() as GatewayConfig['metrics'];
  if (!['management', 'public', 'off'].includes(metrics)) problems.push(`GATEWAY_METRICS must be management, public or off (got "${merged.GATEWAY_METRICS}")`);

  const engine = (merged.GATEWAY_WEB_SEARCH_ENGINE || 'searxng').toLowerCase();
  if (engine !== 'searxng' && engine !== 'tavily') problems.push(`GATEWAY_WEB_SEARCH_ENGINE must be searxng or tavily (got "${merged.GATEWAY_WEB_SEARCH_ENGINE}")`);
  const searchKey = merged.GATEWAY_WEB_SEARCH_API_KEY || null;
  const searchUrl = merged.GATEWAY_WEB_SEARCH_URL || (engine === 'tavily' && searchKey ? 'https://api.tavily.com' : null);
  if (searchUrl !== null && !/^https?:\/\/[^/]/.test(searchUrl)) problems.push(`GATEWAY_WEB_SEARCH_URL must be an http:// or https:// URL (got "${searchUrl}")`);
  if (engine === 'tavily' && merged.GATEWAY_WEB_SEARCH_ENGINE && !searchKey) problems.push('GATEWAY_WEB_SEARCH_API_KEY is required for the tavily search engine');
  const webSearch = searchUrl && (engine === 'searxng' || engine === 'tavily') ? { engine: engine as 'searxng' | 'tavily', url: searchUrl, apiKey: searchKey } : null;

  const unknownModelFallback = s.bool('GATEWAY_UNKNOWN_MODEL_FALLBACK', false);
  const reasoningSecret = merged.GATEWAY_REASONING_SECRET || null;
  if (reasoningSecret !== null && reasoningSecret.length < 32) problems.push('GATEWAY_REASONING_SECRET must be at least 32 characters (use a random secret)');
  const webFetch: GatewayConfig['webFetch'] = s.bool('GATEWAY_WEB_FETCH', false) ? (s.bool('GATEWAY_WEB_FETCH_ALLOW_PRIVATE', false) ? 'private' : 'public') : 'off';

  const migrate = (merged.GATEWAY_MIGRATE || 'auto').toLowerCase() as GatewayConfig['migrate'];
  if (migrate !== 'auto' && migrate !== 'off') problems.push(`GATEWAY_MIGRATE must be auto or off (got "${merged.GATEWAY_MIGRATE}")`);
  return { metrics, webSearch, unknownModelFallback, reasoningSecret, webFetch, migrate };
}

export function spendSettings(s: Settings): SpendConfig {
  const redisDown = (s.env.GATEWAY_SPEND_REDIS_DOWN || 'closed').toLowerCase();
  if (redisDown !== 'closed' && redisDown !== 'local') s.problems.push(`GATEWAY_SPEND_REDIS_DOWN must be closed or local (got "${s.env.GATEWAY_SPEND_REDIS_DOWN}")`);
  return {
    credits: s.bool('GATEWAY_CREDITS', false),
    redisDown: redisDown === 'local' ? 'local' : 'closed',
    heartbeatTtlMs: s.int('GATEWAY_SPEND_HEARTBEAT_TTL_MS', 10_000, 300, 600_000),
  };
}

export function encryptionSettings(s: Settings): GatewayConfig['encryption'] {
  const encryptionKey = s.env.GATEWAY_ENCRYPTION_KEY || null;
  const previousKeys = (s.env.GATEWAY_ENCRYPTION_KEY_PREVIOUS || '').split(',').map((k) => k.trim()).filter(Boolean);
  for (const [name, k] of [...(encryptionKey ? [['GATEWAY_ENCRYPTION_KEY', encryptionKey]] : []), ...previousKeys.map((k) => ['GATEWAY_ENCRYPTION_KEY_PREVIOUS', k])]) {
    if (k.length < 32 || /\s/.test(k)) s.problems.push(`${name} must be at least 32 characters without spaces (use a random secret, e.g. openssl rand -base64 32)`);
  }
  if (previousKeys.length > 0 && !encryptionKey) s.problems.push('GATEWAY_ENCRYPTION_KEY_PREVIOUS needs GATEWAY_ENCRYPTION_KEY (the key new secrets are sealed with)');
  return { key: encryptionKey, previous: previousKeys };
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

export function observabilitySettings(s: Settings): ObservabilityConfig {
  return {
    ioLogRetentionDays: s.int('GATEWAY_IO_LOG_RETENTION_DAYS', 30, 1, 3650),
    ioLogMaxBytes: s.int('GATEWAY_IO_LOG_MAX_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    otlp: otlpFrom(s.env, s.problems),
    broadcast: {
      allowLoopback: s.bool('GATEWAY_BROADCAST_ALLOW_LOOPBACK', false),
      maxAttempts: s.int('GATEWAY_BROADCAST_MAX_ATTEMPTS', 5, 1, 50),
      retryMs: s.int('GATEWAY_BROADCAST_RETRY_MS', 1000, 10, 600_000),
      timeoutMs: s.int('GATEWAY_BROADCAST_TIMEOUT_MS', 10_000, 100, 120_000),
      queueLimit: 10_000,
    },
  };
}

export function consoleSetting(s: Settings): boolean {
  const setting = (s.env.GATEWAY_CONSOLE || 'on').toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(setting)) s.problems.push(`GATEWAY_CONSOLE must be on or off (got "${s.env.GATEWAY_CONSOLE}")`);
  return setting === 'on' || setting === 'true' || setting === '1';
}

export function filesSettings(s: Settings): FilesConfig {
  const merged = s.env;
  const s3Endpoint = merged.GATEWAY_FILES_S3_ENDPOINT || null;
  if (s3Endpoint !== null && !/^https?:\/\/[^/]/.test(s3Endpoint)) s.problems.push(`GATEWAY_FILES_S3_ENDPOINT must be an http:// or https:// URL (got "${s3Endpoint}")`);
  return {
    dir: merged.GATEWAY_FILES_DIR || 'data/files',
    quotaBytes: s.int('GATEWAY_FILES_QUOTA_BYTES', 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    s3: merged.GATEWAY_FILES_S3_BUCKET
      ? {
          bucket: merged.GATEWAY_FILES_S3_BUCKET,
          endpoint: s3Endpoint,
          region: merged.GATEWAY_FILES_S3_REGION || 'us-east-1',
          prefix: merged.GATEWAY_FILES_S3_PREFIX ?? '',
          forcePathStyle: s.bool('GATEWAY_FILES_S3_FORCE_PATH_STYLE', s3Endpoint !== null),
        }
      : null,
  };
}

export function moderationSettings(s: Settings): GatewayConfig['moderation'] {
  const moderationUrl = s.env.GATEWAY_MODERATION_URL || null;
  if (moderationUrl !== null && !/^https?:\/\/[^/]/.test(moderationUrl)) s.problems.push(`GATEWAY_MODERATION_URL must be an http:// or https:// URL (got "${moderationUrl}")`);
  return moderationUrl ? { url: moderationUrl, apiKey: s.env.GATEWAY_MODERATION_API_KEY || null, model: s.env.GATEWAY_MODERATION_MODEL || 'omni-moderation-latest' } : null;
}

export function upstreamSettings(s: Settings): GatewayConfig['upstream'] {
  return {
    connections: s.int('GATEWAY_UPSTREAM_CONNECTIONS', DEFAULT_UPSTREAM_CONNECTIONS, 1, 1_000_000),
    http2: s.bool('GATEWAY_UPSTREAM_HTTP2', false),
  };
}

/**
 * GATEWAY_WORKERS: `auto` (the default) is one process per core when the store is shared (PostgreSQL and Redis), else 1.
 * Several workers need both: limits, rate counters, caches and key invalidations cross processes only through Redis,
 * and SQLite is one process's file.
 */
export function workerCount(raw: string | undefined, databaseUrl: string, redisUrl: string | null, problems: string[]): number {
  const shared = redisUrl !== null && /^postgres(ql)?:\/\//.test(databaseUrl);
  if (raw === undefined || raw === '' || raw.toLowerCase() === 'auto') return shared ? Math.max(1, availableParallelism()) : 1;
  const n = intSetting('GATEWAY_WORKERS', raw, 1, 1, 1024, problems);
  if (n > 1 && !shared) {
    problems.push(`GATEWAY_WORKERS=${n} needs a shared store: GATEWAY_REDIS_URL and a postgres:// GATEWAY_DATABASE_URL (limits, caches and key invalidations cross worker processes through Redis); use 1 without them`);
  }
  return n;
}
